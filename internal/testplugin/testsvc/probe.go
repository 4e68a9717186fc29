package testsvc

import (
	"context"
	"errors"
	"net/url"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
)

// ProcProbeDatabase is svc.testplugin.v1.TestService/ProbeDatabase.
const ProcProbeDatabase = "/svc.testplugin.v1.TestService/ProbeDatabase"

// ProbeDatabase tries, with the URL the gateway gave this plugin, each
// escape a compromised plugin would try, and reports what happened.
func (s *service) ProbeDatabase(ctx context.Context, _ *sdk.Call, _ *testpluginv1.ProbeDatabaseRequest) (*testpluginv1.ProbeDatabaseResponse, error) {
	s.count()
	dbURL := os.Getenv(migrate.EnvDatabaseURL)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	out := &testpluginv1.ProbeDatabaseResponse{Attempts: map[string]string{}}
	if err := conn.QueryRow(ctx, "SELECT current_user").Scan(&out.Role); err != nil {
		return nil, err
	}
	outcome := func(err error) string {
		var pgErr *pgconn.PgError
		switch {
		case err == nil:
			return "allowed"
		case errors.As(err, &pgErr):
			return pgErr.Code
		default:
			return "refused: " + err.Error()
		}
	}
	for what, q := range map[string]string{
		"read core.users":      "SELECT count(*) FROM core.users",
		"read core.outbox":     "SELECT count(*) FROM core.outbox",
		"write core.outbox":    "INSERT INTO core.outbox (id, type, data) VALUES ('probe_' || md5(random()::text), 'testplugin.echo.sent', '{}')",
		"read book.posts":      "SELECT count(*) FROM book.posts",
		"create a schema":      "CREATE SCHEMA probe_squat",
		"become superuser":     "ALTER ROLE CURRENT_USER SUPERUSER",
		"own schema, a table":  "CREATE TABLE IF NOT EXISTS testplugin.probe (id int)",
		"create a role":        "CREATE ROLE probe_evil",
		"read credentials":     "SELECT count(*) FROM core.credentials",
		"update core.apps":     "UPDATE core.apps SET name = name",
		"read svcchat.opt_ins": "SELECT count(*) FROM svcchat.opt_ins",
	} {
		_, err := conn.Exec(ctx, q)
		out.Attempts[what] = outcome(err)
	}
	// The same socket, as the superuser, with no password or a guess.
	if u, err := url.Parse(dbURL); err == nil {
		for what, user := range map[string]*url.Userinfo{
			"connect as postgres without a password": url.User("postgres"),
			"connect as postgres with a guess":       url.UserPassword("postgres", "postgres"),
		} {
			u.User = user
			c, err := pgx.Connect(ctx, u.String())
			if err == nil {
				_ = c.Close(ctx)
			}
			out.Attempts[what] = outcome(err)
		}
	}
	return out, nil
}
