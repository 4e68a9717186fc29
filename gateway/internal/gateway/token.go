package gateway

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/oauth"
)

// Token is `gateway token --user <username> --app <app id> --scopes
// "<list>" [--data-dir <folder>]`: a user access token of a
// development-mode app without a browser (CONTRACT §20), printed alone on
// stdout so that TOKEN=$(bin/gateway token …) works. It opens the
// installation's database as `database-url` does (SVC_DATABASE_URL, or the
// data folder's embedded cluster, which runs with the gateway) and issues
// the token with the OAuth server's own rules and issuer
// (oauth.DevelopmentToken). It never takes the data folder's lock: the
// gateway serving the folder holds it.
func Token(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("gateway token", flag.ContinueOnError)
	flags.SetOutput(stderr)
	dataDir := flags.String("data-dir", "./var", "data folder of the gateway")
	user := flags.String("user", "", "username of the user the token acts for (the app's team or one of its Test Users)")
	app := flags.String("app", "", "id of the development-mode app the token is issued to")
	scopes := flags.String("scopes", "", "space- or comma-separated scopes (default public_profile)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *user == "" || *app == "" || flags.NArg() > 0 {
		flags.Usage()
		return errors.New("token: --user and --app are required")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pool, err := openInstallation(ctx, *dataDir)
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	defer pool.Close()
	token, granted, err := oauth.DevelopmentToken(ctx, identity.New(pool), *app, *user, *scopes, time.Now())
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	fmt.Fprintf(stderr, "user access token for %s on app %s, scopes %v, expires in %s\n", *user, *app, granted, identity.AccessTokenTTL)
	_, err = fmt.Fprintln(stdout, token)
	return err
}

// openInstallation connects to the installation's database as `gateway
// database-url` finds it: SVC_DATABASE_URL, or the embedded cluster of
// dataDir, which runs with the gateway serving that folder. It never takes
// the data folder's lock.
func openInstallation(ctx context.Context, dataDir string) (*pgxpool.Pool, error) {
	dbURL := os.Getenv("SVC_DATABASE_URL")
	if dbURL == "" {
		var err error
		if dbURL, err = embeddedDatabaseURL(dataDir); err != nil {
			return nil, err
		}
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		if pool != nil {
			pool.Close()
		}
		return nil, fmt.Errorf("connect to the database (is the gateway of %s running?): %w", dataDir, err)
	}
	return pool, nil
}
