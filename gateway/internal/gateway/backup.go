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
	box, source, err := secretbox.Load(os.Getenv, *dataDir)
	if source == secretbox.Created {
		_ = os.Remove(filepath.Join(*dataDir, secretbox.KeyFileName))
		return fmt.Errorf("backup: %s holds no master key: set %s as for the gateway", *dataDir, secretbox.EnvMasterKey)
	}
	if err != nil {
		return fmt.Errorf("backup: master key: %w", err)
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
	box, source, err := secretbox.Load(os.Getenv, *dataDir)
	if source == secretbox.Created {
		_ = os.Remove(filepath.Join(*dataDir, secretbox.KeyFileName))
		return fmt.Errorf("database-url: %s holds no master key: set %s as for the gateway", *dataDir, secretbox.EnvMasterKey)
	}
	if err != nil {
		return fmt.Errorf("database-url: master key: %w", err)
	}
	u, err := pgembed.URLFor(filepath.Join(*dataDir, "pg"), store.DatabaseName, embeddedPassword(box))
	if err != nil {
		return fmt.Errorf("database-url: %w", err)
	}
	_, err = fmt.Fprintln(stdout, u)
	return err
}
