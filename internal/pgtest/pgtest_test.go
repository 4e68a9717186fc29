package pgtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
)

// markerTemplate is this package's registered template: one table with one row, so a test can
// tell that its database was cloned from it.
var markerTemplate = TemplateName("pgtest_marker", fstest.MapFS{"v": {Data: []byte("1")}})

func TestMain(m *testing.M) {
	RegisterTemplate(markerTemplate, func(ctx context.Context, url string) error {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "CREATE TABLE marker (v text); INSERT INTO marker VALUES ('from template')")
		return err
	})
	Main(m)
}

func TestNewDatabaseClonesTheRegisteredTemplate(t *testing.T) {
	t.Parallel()
	db := Pool(t, NewDatabase(t))
	var v, name string
	if err := db.QueryRow(t.Context(), "SELECT v, current_database() FROM marker").Scan(&v, &name); err != nil {
		t.Fatal(err)
	}
	if v != "from template" {
		t.Errorf("marker = %q", v)
	}
	if !strings.HasPrefix(name, "testnewdatabaseclonestheregisteredtemplate_") {
		t.Errorf("database name %q does not start with the test's name", name)
	}
}

func TestDatabasesAreIsolated(t *testing.T) {
	t.Parallel()
	a, b := Pool(t, NewDatabase(t)), Pool(t, NewDatabase(t))
	if _, err := a.Exec(t.Context(), "INSERT INTO marker VALUES ('only in a')"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.QueryRow(t.Context(), "SELECT count(*) FROM marker").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("database b sees %d rows, want only the template's", n)
	}
}

func TestDatabaseIsDroppedWhenTheTestEnds(t *testing.T) {
	t.Parallel()
	var name string
	t.Run("inner", func(t *testing.T) {
		db := Pool(t, NewDatabase(t))
		// A connection left open must not keep the database alive.
		if err := db.QueryRow(t.Context(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	if name == "" {
		t.Fatal("inner test did not run")
	}
	if exists(t, name) {
		t.Errorf("database %s still exists after its test ended", name)
	}
}

func TestTemplateIsBuiltOnceAcrossConcurrentProcesses(t *testing.T) {
	t.Parallel()
	name := databaseName("pgtest_race")
	var calls atomic.Int32
	prepare := func(ctx context.Context, url string) error {
		calls.Add(1)
		// Long enough for the others to pile up on the lock.
		time.Sleep(200 * time.Millisecond)
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "CREATE TABLE built (v int)")
		return err
	}
	t.Cleanup(func() { dropTemplate(t, name) })

	// Separate template values behave like separate test processes sharing the server.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			tm := &template{name: name, prepare: prepare}
			errs[i] = tm.ensure(t.Context(), adminURL(t))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("prepare ran %d times, want once", n)
	}
	if !exists(t, name) || exists(t, name+"_tmp") {
		t.Errorf("after the build: %s exists = %v, %s_tmp exists = %v", name, exists(t, name), name, exists(t, name+"_tmp"))
	}
}

func TestFailedTemplateLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	name := databaseName("pgtest_fail")
	t.Cleanup(func() { dropTemplate(t, name) })

	broken := &template{name: name, prepare: func(context.Context, string) error { return errors.New("migration 0002 failed") }}
	if err := broken.ensure(t.Context(), adminURL(t)); err == nil || !strings.Contains(err.Error(), "migration 0002 failed") {
		t.Fatalf("ensure = %v, want the prepare error", err)
	}
	if exists(t, name) || exists(t, name+"_tmp") {
		t.Fatal("a failed build left a database behind")
	}
	fixed := &template{name: name, prepare: func(context.Context, string) error { return nil }}
	if err := fixed.ensure(t.Context(), adminURL(t)); err != nil {
		t.Fatalf("rebuild after a failure: %v", err)
	}
}

func TestDatabaseName(t *testing.T) {
	long := "TestSomething/" + strings.Repeat("very_long_subtest_name_", 5)
	for _, testName := range []string{"TestA", "TestÜnïcode/sub test#01", long, "///", ""} {
		name := databaseName(testName)
		if len(name) > 63 {
			t.Errorf("databaseName(%q) = %q: %d bytes, over PostgreSQL's 63", testName, name, len(name))
		}
		if strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" || strings.Contains(name, "__") {
			t.Errorf("databaseName(%q) = %q: want lower-case letters, digits and single _", testName, name)
		}
		if databaseName(testName) == name {
			t.Errorf("databaseName(%q) twice gave the same name", testName)
		}
	}
	if got := databaseName("TestA/b c"); !strings.HasPrefix(got, "testa_b_c_") {
		t.Errorf("databaseName(TestA/b c) = %q", got)
	}
}

func TestWithDatabase(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u@/postgres?host=%2Ftmp%2Fx&port=5432": "postgres://u@/db1?host=%2Ftmp%2Fx&port=5432",
		"postgresql://u:p@localhost:5432/postgres":         "postgresql://u:p@localhost:5432/db1",
		"postgres://u@h/?dbname=other":                     "postgres://u@h/db1",
		"host=/tmp/x user=u dbname=postgres":               "host=/tmp/x user=u dbname=postgres dbname=db1",
	} {
		got, err := withDatabase(in, "db1")
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("withDatabase(%q) = %q, want %q", in, got, want)
		}
		cfg, err := pgx.ParseConfig(got)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Database != "db1" {
			t.Errorf("pgx reads database %q from %q", cfg.Database, got)
		}
	}
}

func TestTemplateNameFollowsTheFiles(t *testing.T) {
	a := fstest.MapFS{"0001_init.sql": {Data: []byte("CREATE TABLE a ()")}}
	b := fstest.MapFS{"0001_init.sql": {Data: []byte("CREATE TABLE b ()")}}
	first, second := TemplateName("svc", a), TemplateName("svc", a)
	if first != second {
		t.Errorf("TemplateName is not stable: %s, then %s", first, second)
	}
	if TemplateName("svc", a) == TemplateName("svc", b) {
		t.Error("TemplateName ignores file content")
	}
	if name := TemplateName("svc_core", a); !templateNamePattern.MatchString(name) {
		t.Errorf("TemplateName = %q, not a valid template name", name)
	}
}

func adminURL(t *testing.T) string {
	t.Helper()
	_, url, err := adminPool(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return url
}

func exists(t *testing.T, name string) bool {
	t.Helper()
	admin, _, err := adminPool(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ok bool
	if err := admin.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

// dropTemplate removes a template database a test built; templates cannot be dropped as such.
func dropTemplate(t *testing.T, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, _, err := adminPool(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		fmt.Sprintf("ALTER DATABASE %s IS_TEMPLATE false", ident(name)),
		fmt.Sprintf("DROP DATABASE %s", ident(name)),
	} {
		if _, err := admin.Exec(ctx, sql); err != nil && exists(t, name) {
			t.Errorf("%s: %v", sql, err)
		}
	}
}
