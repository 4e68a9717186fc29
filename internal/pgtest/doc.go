// Package pgtest gives tests a real PostgreSQL: one server per `go test` run and a fresh
// database per test, cloned from a template so that creating it takes milliseconds.
//
// Every package whose tests touch the database has:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// and each test asks for its own database:
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		db := pgtest.Pool(t, pgtest.NewDatabase(t))
//		…
//	}
//
// # Which server
//
// If SVC_TEST_DATABASE_URL is set, it is the superuser URL of a running server that the whole
// run shares (`make test` starts one with internal/cmd/pgtestd). Otherwise Main starts a private
// [pgembed] cluster with Fast settings in a temporary folder for this test process and removes
// it afterwards. A test process that dies without cleaning up takes its server down with it
// (the parent-death signal), and the next run removes the folder it left.
//
// # Templates
//
// A package whose tests need a migrated schema registers a template before Main runs:
//
//	func TestMain(m *testing.M) {
//		name := pgtest.TemplateName("svc_core", migrations)
//		pgtest.RegisterTemplate(name, func(ctx context.Context, url string) error {
//			pool, err := pgxpool.New(ctx, url)
//			if err != nil {
//				return err
//			}
//			defer pool.Close()
//			_, err = migrate.Apply(ctx, pool, "core", migrations)
//			return err
//		})
//		pgtest.Main(m)
//	}
//
// The template is built once per server, not once per process: test processes that run at the
// same time against one server take an advisory lock, the first builds the template under a
// temporary name and renames it when complete, and the others find it ready. Its name must
// change whenever its content would ([TemplateName] hashes the migration files), because a
// template that already exists is never rebuilt. Without a registered template, databases
// start empty (cloned from template0).
//
// The server must be PostgreSQL 13 or newer (DROP DATABASE … WITH (FORCE)).
package pgtest
