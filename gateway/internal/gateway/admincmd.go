package gateway

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/identity"
)

// Admin is `gateway admin <what> …`, the operator's changes made on the
// command line beside a running gateway (CONTRACT §16). Today:
//
//	gateway admin staff --user <id> [--revoke] [--data-dir ./var]
//
// grants (or revokes) platform staff, as POST /api/admin/users/<id>/staff
// does with the admin token. It opens the installation's database as
// `gateway token` does and never takes the data folder's lock. The running
// gateway notices within its credential cache's bound (auth.DefaultCacheTTL);
// the admin API's change is seen at once.
func Admin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "staff" {
		fmt.Fprintln(stderr, "Usage: gateway admin staff --user <id> [--revoke] [--data-dir ./var]")
		if len(args) == 0 {
			return errors.New("admin: say what to change (staff)")
		}
		return fmt.Errorf("admin: unknown command %q (want staff)", args[0])
	}
	flags := flag.NewFlagSet("gateway admin staff", flag.ContinueOnError)
	flags.SetOutput(stderr)
	dataDir := flags.String("data-dir", "./var", "data folder of the gateway")
	user := flags.String("user", "", "id of the user to make platform staff")
	revoke := flags.Bool("revoke", false, "revoke platform staff instead of granting it")
	if err := flags.Parse(args[1:]); err != nil {
		return err
	}
	if *user == "" || flags.NArg() > 0 {
		flags.Usage()
		return errors.New("admin staff: --user <id> is required")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pool, err := openInstallation(ctx, *dataDir)
	if err != nil {
		return fmt.Errorf("admin staff: %w", err)
	}
	defer pool.Close()
	staff := !*revoke
	if err := identity.New(pool).Users.SetStaff(ctx, *user, staff); err != nil {
		if errors.Is(err, identity.ErrNotFound) {
			return fmt.Errorf("admin staff: no user with id %q", *user)
		}
		return fmt.Errorf("admin staff: %w", err)
	}
	if staff {
		fmt.Fprintf(stdout, "user %s is platform staff (a running gateway sees it within %s)\n", *user, auth.DefaultCacheTTL)
	} else {
		fmt.Fprintf(stdout, "user %s is no longer platform staff (a running gateway sees it within %s)\n", *user, auth.DefaultCacheTTL)
	}
	return nil
}
