package plugintest

import (
	"context"
	"io/fs"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/internal/pgtest"
	"github.com/svcplatform/svc/sdk/migrate"
	coresql "github.com/svcplatform/svc/sql/core"
)

// Main runs a plugin package's tests against PostgreSQL, with a template
// database holding the gateway's core schema (the outbox that
// sdk/event writes to) and the plugin's own schema, migrated once; each
// Database call then clones it. Call it from TestMain:
//
//	func TestMain(m *testing.M) { plugintest.Main(m, "notes", notessql.Migrations()) }
//
// It uses the server in SVC_TEST_DATABASE_URL (make test sets it), or
// starts a private cluster from the machine's PostgreSQL for this process.
func Main(m *testing.M, schema string, migrations fs.FS) {
	name := pgtest.TemplateName("svc_plugin_"+schema, coresql.Migrations(), migrations)
	pgtest.RegisterTemplate(name, func(ctx context.Context, url string) error {
		pool, err := pgxpool.New(ctx, url)
		if err != nil {
			return err
		}
		defer pool.Close()
		if _, err := migrate.Apply(ctx, pool, "core", coresql.Migrations()); err != nil {
			return err
		}
		_, err = migrate.Apply(ctx, pool, schema, migrations)
		return err
	})
	pgtest.Main(m)
}

// Database returns a pool on a fresh database for the calling test, cloned
// from the template Main built (core schema and the plugin's, migrated),
// and dropped when the test ends.
func Database(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return pgtest.Pool(t, pgtest.NewDatabase(t))
}
