package gateway

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/svcplatform/svc/gateway/internal/secretbox"
	"github.com/svcplatform/svc/gateway/internal/store"
	"github.com/svcplatform/svc/internal/pgembed"
)

// dataFiles are the files of a data folder, besides the cluster, that a
// restored installation needs: the master key above all (without it the
// sealed webhook secrets and the OIDC signing key cannot be opened).
var dataFiles = []string{"master.key", "dev-credentials.json", "admin-token"}

// Backup is `gateway backup --data-dir <folder> --to <new folder>`: a
// consistent copy of a running gateway's embedded database (pg_basebackup,
// taken while it serves) and of the files beside it, into a new data
// folder. `gateway --data-dir <new folder>` then serves the same data.
func Backup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("gateway backup", flag.ContinueOnError)
	flags.SetOutput(stderr)
	dataDir := flags.String("data-dir", "./var", "data folder of the running gateway")
	to := flags.String("to", "", "new data folder to write the backup into (must not exist or be empty)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *to == "" {
		return errors.New("backup: --to is required")
	}
	if os.Getenv("SVC_DATABASE_URL") != "" {
		return errors.New("backup: SVC_DATABASE_URL is set: back up an external PostgreSQL with its own tools (pg_basebackup, pg_dump)")
	}
	if err := os.MkdirAll(*to, 0o700); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	fmt.Fprintf(stdout, "backing up %s into %s\n", *dataDir, *to)
	// The database's superuser password derives from the master key.
	box, err := installationKey(*dataDir)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := pgembed.Backup(ctx, filepath.Join(*dataDir, "pg"), filepath.Join(*to, "pg"), embeddedPassword(box), stderr, log); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	for _, name := range dataFiles {
		b, err := os.ReadFile(filepath.Join(*dataDir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		if err := os.WriteFile(filepath.Join(*to, name), b, 0o600); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
	}
	fmt.Fprintf(stdout, "backup complete: start it with  bin/gateway --data-dir %s\n", *to)
	return nil
}

// DatabaseURL is `gateway database-url --data-dir <folder>`: it prints the
// superuser URL of the embedded database (with its password, derived from
// the master key) for psql and other tools of an operator:
//
//	psql "$(bin/gateway database-url)"
func DatabaseURL(args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("gateway database-url", flag.ContinueOnError)
	flags.SetOutput(stderr)
	dataDir := flags.String("data-dir", "./var", "data folder of the gateway")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if os.Getenv("SVC_DATABASE_URL") != "" {
		return errors.New("database-url: SVC_DATABASE_URL is set: that is the database in use")
	}
	u, err := embeddedDatabaseURL(*dataDir)
	if err != nil {
		return fmt.Errorf("database-url: %w", err)
	}
	_, err = fmt.Fprintln(stdout, u)
	return err
}

// embeddedDatabaseURL is the superuser URL of the embedded cluster of the
// data folder dataDir, with the password derived from its master key.
func embeddedDatabaseURL(dataDir string) (string, error) {
	box, err := installationKey(dataDir)
	if err != nil {
		return "", err
	}
	return pgembed.URLFor(filepath.Join(dataDir, "pg"), store.DatabaseName, embeddedPassword(box))
}

// installationKey loads the master key of the installation whose data
// folder is dataDir, for a subcommand run beside its gateway. Unlike the
// gateway it never creates one: a folder without a key is the wrong folder
// (most often ./var of another working directory), and the advice says
// which folder was looked in and how to name the right one.
func installationKey(dataDir string) (*secretbox.Box, error) {
	if os.Getenv(secretbox.EnvMasterKey) == "" {
		path := filepath.Join(dataDir, secretbox.KeyFileName)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			abs, _ := filepath.Abs(dataDir)
			return nil, fmt.Errorf("%s is not a gateway's data folder (it holds no %s): name the gateway's with --data-dir <folder> (the default, ./var, is relative to the current folder), or set %s as for the gateway",
				abs, secretbox.KeyFileName, secretbox.EnvMasterKey)
		}
	}
	box, _, err := secretbox.Load(os.Getenv, dataDir)
	if err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	return box, nil
}
