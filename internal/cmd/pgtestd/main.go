package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/svcplatform/svc/internal/pgembed"
)

// timeout bounds each command; a first start includes initdb.
const timeout = 2 * time.Minute

const usage = `usage:
  pgtestd start --dir DIR   start a test PostgreSQL server in DIR and print its URL
  pgtestd stop --dir DIR    stop the server running in DIR`

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(context.Background(), os.Args[1:], os.Stdout, logger); err != nil {
		fmt.Fprintln(os.Stderr, "pgtestd:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer, logger *slog.Logger) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	cmd := args[0]
	flags := flag.NewFlagSet("pgtestd "+cmd, flag.ContinueOnError)
	dir := flags.String("dir", "", "the cluster folder")
	if err := flags.Parse(args[1:]); err != nil {
		return err
	}
	if *dir == "" || flags.NArg() > 0 {
		return errors.New(usage)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	switch cmd {
	case "start":
		c, err := pgembed.Start(ctx, pgembed.Options{Dir: *dir, Fast: true, Detach: true, Logger: logger})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, c.URL("postgres"))
		return err
	case "stop":
		return pgembed.StopDir(ctx, pgembed.Options{Dir: *dir, Logger: logger})
	default:
		return fmt.Errorf("unknown command %q\n%s", cmd, usage)
	}
}
