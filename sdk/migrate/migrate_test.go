package migrate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// files builds a migration file system from name → SQL pairs.
func files(nameSQL ...string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for i := 0; i < len(nameSQL); i += 2 {
		fsys[nameSQL[i]] = &fstest.MapFile{Data: []byte(nameSQL[i+1])}
	}
	return fsys
}

// bookV3 are three migrations, the third depending on the first two.
var bookV3 = files(
	"0001_posts.sql", "CREATE TABLE posts (id bigint PRIMARY KEY, body text NOT NULL);",
	"0002_likes.sql", "CREATE TABLE likes (post_id bigint REFERENCES posts);\nCREATE INDEX ON likes (post_id);",
	"0003_seed.sql", "INSERT INTO posts VALUES (1, 'hello'); INSERT INTO likes VALUES (1);",
	"README.md", "not a migration: ignored",
)

// sql returns the content of one file of fsys.
func sql(fsys fstest.MapFS, name string) string { return string(fsys[name].Data) }

func setup(t *testing.T) *pgxpool.Pool {
	t.Helper()
	t.Parallel()
	return pgtest.Pool(t, pgtest.NewDatabase(t))
}

func TestApplyRunsFilesInVersionOrderInTheOwnerSchema(t *testing.T) {
	db := setup(t)
	applied, err := Apply(t.Context(), db, "book", bookV3)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"0001_posts.sql", "0002_likes.sql", "0003_seed.sql"}; !slices.Equal(applied, want) {
		t.Errorf("applied = %v, want %v", applied, want)
	}
	var n int
	if err := db.QueryRow(t.Context(), "SELECT count(*) FROM book.posts JOIN book.likes ON post_id = id").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("joined rows = %d, want 1", n)
	}
	var versions []int32
	rows, err := db.Query(t.Context(), "SELECT version FROM book.schema_migrations ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v int32
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, v)
	}
	if !slices.Equal(versions, []int32{1, 2, 3}) {
		t.Errorf("recorded versions = %v", versions)
	}
}

func TestSecondApplyDoesNothing(t *testing.T) {
	db := setup(t)
	if _, err := Apply(t.Context(), db, "book", bookV3); err != nil {
		t.Fatal(err)
	}
	applied, err := Apply(t.Context(), db, "book", bookV3)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 0 {
		t.Errorf("second Apply applied %v", applied)
	}
}

func TestNewFilesAreAppliedOnTopOfOldOnes(t *testing.T) {
	db := setup(t)
	v2 := files("0001_posts.sql", sql(bookV3, "0001_posts.sql"), "0002_likes.sql", sql(bookV3, "0002_likes.sql"))
	if _, err := Apply(t.Context(), db, "book", v2); err != nil {
		t.Fatal(err)
	}
	applied, err := Apply(t.Context(), db, "book", bookV3)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(applied, []string{"0003_seed.sql"}) {
		t.Errorf("applied = %v, want only the new file", applied)
	}
}

func TestConcurrentAppliesRunEachMigrationOnce(t *testing.T) {
	db := setup(t)
	url := db.Config().ConnString()
	// A migration that fails if it runs twice, and one that counts its runs.
	fsys := files(
		"0001_runs.sql", "CREATE TABLE runs (n int);",
		"0002_count.sql", "SELECT pg_sleep(0.2); INSERT INTO runs VALUES (1);",
	)
	const gateways = 4
	results := make([][]string, gateways)
	errs := make([]error, gateways)
	var wg sync.WaitGroup
	for i := range gateways {
		// Separate pools, like separate gateway processes starting at once.
		pool := pgtest.Pool(t, url)
		wg.Go(func() { results[i], errs[i] = Apply(t.Context(), pool, "core", fsys) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, r := range results {
		all = append(all, r...)
	}
	slices.Sort(all)
	if want := []string{"0001_runs.sql", "0002_count.sql"}; !slices.Equal(all, want) {
		t.Errorf("applied across all callers = %v, want each file once: %v", all, want)
	}
	var n int
	if err := db.QueryRow(t.Context(), "SELECT count(*) FROM core.runs").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("0002 ran %d times", n)
	}
}

func TestFailingMigrationRollsBackAndKeepsEarlierOnes(t *testing.T) {
	db := setup(t)
	broken := files(
		"0001_posts.sql", "CREATE TABLE posts (id int);",
		"0002_broken.sql", "CREATE TABLE half_done (id int);\nINSERT INTO posts VALUES (1);\nSELECT no_such_column FROM posts;",
		"0003_later.sql", "CREATE TABLE later (id int);",
	)
	applied, err := Apply(t.Context(), db, "book", broken)
	if err == nil {
		t.Fatal("Apply with a broken migration succeeded")
	}
	for _, want := range []string{"schema book", "0002_broken.sql", "line 3", "no_such_column"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if !slices.Equal(applied, []string{"0001_posts.sql"}) {
		t.Errorf("applied = %v, want the migrations before the broken one", applied)
	}
	for table, want := range map[string]bool{"book.posts": true, "book.half_done": false, "book.later": false} {
		var exists bool
		if err := db.QueryRow(t.Context(), "SELECT to_regclass($1) IS NOT NULL", table).Scan(&exists); err != nil {
			t.Fatal(err)
		}
		if exists != want {
			t.Errorf("table %s exists = %v, want %v", table, exists, want)
		}
	}
	var rows int
	if err := db.QueryRow(t.Context(), "SELECT count(*) FROM book.posts").Scan(&rows); err != nil || rows != 0 {
		t.Errorf("posts has %d rows (err %v): the failed migration's insert was kept", rows, err)
	}

	// Once the file is fixed, the rest goes through.
	broken["0002_broken.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE half_done (id int);")}
	applied, err = Apply(t.Context(), db, "book", broken)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(applied, []string{"0002_broken.sql", "0003_later.sql"}) {
		t.Errorf("applied after the fix = %v", applied)
	}
}

func TestLockIsReleasedWhenApplyFails(t *testing.T) {
	db := setup(t)
	broken := files("0001_bad.sql", "SELECT 1/0;")
	if _, err := Apply(t.Context(), db, "book", broken); err == nil {
		t.Fatal("Apply of a failing migration succeeded")
	}
	// Another session (another gateway) must get the lock at once.
	other := pgtest.Pool(t, db.Config().ConnString())
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := Apply(ctx, other, "book", files("0001_bad.sql", "SELECT 1;")); err != nil {
		t.Fatalf("Apply after a failed one: %v", err)
	}
	var held int
	if err := db.QueryRow(t.Context(), `SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
		WHERE l.locktype = 'advisory' AND d.datname = current_database()`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if held != 0 {
		t.Errorf("%d advisory locks still held", held)
	}
}

func TestSchemaMadeByAnOperatorNeedsNoCreatePrivilege(t *testing.T) {
	db := setup(t)
	// Roles belong to the whole server, which parallel test processes share.
	role := "partner_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	for _, sql := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"CREATE SCHEMA partner AUTHORIZATION " + role,
		"REVOKE CREATE ON DATABASE " + pgx.Identifier{currentDatabase(t, db)}.Sanitize() + " FROM PUBLIC",
	} {
		if _, err := db.Exec(t.Context(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	t.Cleanup(func() {
		ctx := context.Background()
		for _, sql := range []string{"DROP OWNED BY " + role, "DROP ROLE " + role} {
			if _, err := db.Exec(ctx, sql); err != nil {
				t.Errorf("%s: %v", sql, err)
			}
		}
	})
	cfg := db.Config().Copy()
	cfg.ConnConfig.User = role
	partner, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(partner.Close)

	if _, err := Apply(t.Context(), partner, "partner", bookV3); err != nil {
		t.Fatalf("Apply as the schema's owner without CREATE on the database: %v", err)
	}
}

func currentDatabase(t *testing.T, db *pgxpool.Pool) string {
	t.Helper()
	var name string
	if err := db.QueryRow(t.Context(), "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestApplyWaitsForTheLockUntilItsContextEnds(t *testing.T) {
	db := setup(t)
	holder, err := db.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release()
	if _, err := holder.Exec(t.Context(), "SELECT pg_advisory_lock($1)", lockKey("book")); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err = Apply(ctx, db, "book", bookV3)
	if err == nil || !strings.Contains(err.Error(), "wait for the migration lock") {
		t.Fatalf("Apply while another session holds the lock = %v, want a lock wait error", err)
	}

	if _, err := holder.Exec(t.Context(), "SELECT pg_advisory_unlock($1)", lockKey("book")); err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(t.Context(), db, "book", bookV3); err != nil {
		t.Fatalf("Apply once the lock is free: %v", err)
	}
}

func TestChangedAppliedFileIsRefused(t *testing.T) {
	db := setup(t)
	if _, err := Apply(t.Context(), db, "book", bookV3); err != nil {
		t.Fatal(err)
	}
	edited := files(
		"0001_posts.sql", sql(bookV3, "0001_posts.sql"),
		"0002_likes.sql", "CREATE TABLE likes (post_id bigint);",
		"0003_seed.sql", sql(bookV3, "0003_seed.sql"),
	)
	_, err := Apply(t.Context(), db, "book", edited)
	if err == nil || !strings.Contains(err.Error(), "0002_likes.sql") || !strings.Contains(err.Error(), "changed after it was applied") {
		t.Fatalf("Apply with an edited file = %v, want a refusal naming 0002_likes.sql", err)
	}
}

func TestAnEditThatNamesTheOldChecksumIsCurrentAndOnlyThatOne(t *testing.T) {
	db := setup(t)
	if _, err := Apply(t.Context(), db, "book", bookV3); err != nil {
		t.Fatal(err)
	}
	old := sha256.Sum256(bookV3["0002_likes.sql"].Data)
	edited := files(
		"0001_posts.sql", sql(bookV3, "0001_posts.sql"),
		"0002_likes.sql", "-- migrate:replaces "+hex.EncodeToString(old[:])+"\nCREATE TABLE likes (post_id bigint REFERENCES posts);",
		"0003_seed.sql", sql(bookV3, "0003_seed.sql"),
	)
	if applied, err := Apply(t.Context(), db, "book", edited); err != nil || len(applied) != 0 {
		t.Fatalf("Apply with an edit naming the old checksum = %v, %v; want nothing to do", applied, err)
	}
	other := sha256.Sum256([]byte("something else"))
	wrong := files(
		"0001_posts.sql", sql(bookV3, "0001_posts.sql"),
		"0002_likes.sql", "-- migrate:replaces "+hex.EncodeToString(other[:])+"\nCREATE TABLE likes (post_id bigint);",
		"0003_seed.sql", sql(bookV3, "0003_seed.sql"),
	)
	if _, err := Apply(t.Context(), db, "book", wrong); err == nil || !strings.Contains(err.Error(), "changed after it was applied") {
		t.Fatalf("Apply with an edit naming another checksum = %v, want a refusal", err)
	}
}

func TestDatabaseNewerThanTheBinaryIsRefused(t *testing.T) {
	db := setup(t)
	if _, err := Apply(t.Context(), db, "core", bookV3); err != nil {
		t.Fatal(err)
	}
	older := files("0001_posts.sql", sql(bookV3, "0001_posts.sql"), "0002_likes.sql", sql(bookV3, "0002_likes.sql"))
	_, err := Apply(t.Context(), db, "core", older)
	want := "database schema core is at version 3 but this binary only knows up to 2: run a newer binary"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Apply of older files = %v, want %q", err, want)
	}
}

func TestRemovedAndOutOfOrderFilesAreRefused(t *testing.T) {
	db := setup(t)
	if _, err := Apply(t.Context(), db, "book", files("0001_a.sql", "", "0003_c.sql", "")); err != nil {
		t.Fatal(err)
	}
	_, err := Apply(t.Context(), db, "book", files("0001_a.sql", "", "0002_b.sql", "", "0003_c.sql", ""))
	if err == nil || !strings.Contains(err.Error(), "0002_b.sql") || !strings.Contains(err.Error(), "renumber") {
		t.Errorf("a new file numbered below the applied version = %v, want a refusal", err)
	}
	_, err = Apply(t.Context(), db, "book", files("0003_c.sql", ""))
	if err == nil || !strings.Contains(err.Error(), "version 1 (0001_a.sql)") {
		t.Errorf("an applied file removed = %v, want a refusal", err)
	}
}

func TestBadInputIsRefusedBeforeTouchingTheDatabase(t *testing.T) {
	tests := []struct {
		name  string
		owner string
		files fstest.MapFS
		want  string
	}{
		{"version too short", "book", files("001_init.sql", ""), "misnamed"},
		{"dash instead of underscore", "book", files("0001-init.sql", ""), "misnamed"},
		{"upper-case name", "book", files("0001_Init.sql", ""), "misnamed"},
		{"no name", "book", files("0001_.sql", ""), "misnamed"},
		{"version zero", "book", files("0000_init.sql", ""), "start at 0001"},
		{"duplicate version", "book", files("0001_a.sql", "", "0001_b.sql", ""), "same version 1"},
		{"same version, more digits", "book", files("0002_a.sql", "", "00002_b.sql", ""), "same version 2"},
		{"owner needs quoting", "Book", bookV3, "not a valid schema name"},
		{"owner with a dot", "core.x", bookV3, "not a valid schema name"},
		{"empty owner", "", bookV3, "not a valid schema name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A nil pool: validation must fail before any use of the database.
			_, err := Apply(t.Context(), nil, tt.owner, tt.files)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Apply = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestErrorLine(t *testing.T) {
	for _, tt := range []struct {
		sql  string
		pos  int32
		want string
	}{
		{"SELECT x;", 8, " at line 1"},
		{"-- é\nSELECT 1;\nSELECT x;", 23, " at line 3"},
		{"SELECT 1;", 0, ""},
	} {
		if got := errorLine(&pgconn.PgError{Position: tt.pos}, tt.sql); got != tt.want {
			t.Errorf("errorLine(%q, %d) = %q, want %q", tt.sql, tt.pos, got, tt.want)
		}
	}
}
