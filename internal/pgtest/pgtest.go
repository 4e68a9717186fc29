package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvDatabaseURL names the environment variable holding the superuser URL of a shared server.
const EnvDatabaseURL = "SVC_TEST_DATABASE_URL"

// opTimeout bounds each administrative step (create a database, drop it, build the template).
const opTimeout = 2 * time.Minute

// maxNameBase is how much of a test's name a database name keeps: 63 bytes at most, minus "_"
// and eight random hex digits.
const maxNameBase = 63 - 1 - 8

// harness is the state Main sets up for the test process.
var harness struct {
	mu       sync.Mutex
	adminURL string        // superuser URL of the server, database "postgres" or the given one
	admin    *pgxpool.Pool // opened on first use
	template *template     // set by RegisterTemplate
	started  bool          // Main has run
}

// Main runs the tests of a package against a PostgreSQL server and exits with their result.
// Call it from TestMain. It uses the server in SVC_TEST_DATABASE_URL, or starts a private one
// for this process and removes it when the tests are done.
func Main(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	srv, err := startServer()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		return 1
	}
	// Deferred so that the server also goes away when Main's goroutine panics.
	defer srv.close()

	harness.mu.Lock()
	harness.adminURL = srv.url
	harness.started = true
	harness.mu.Unlock()
	defer closeAdmin()

	return m.Run()
}

// NewDatabase creates a database for the calling test, named after it, and returns its URL. The
// database is a copy of the registered template (or empty) and is dropped when the test ends,
// along with any connection still open to it.
func NewDatabase(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	admin, adminURL, err := adminPool(ctx)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}

	source := "template0"
	harness.mu.Lock()
	tmpl := harness.template
	harness.mu.Unlock()
	if tmpl != nil {
		if err := tmpl.ensure(ctx, adminURL); err != nil {
			t.Fatalf("pgtest: %v", err)
		}
		source = tmpl.name
	}

	name := databaseName(t.Name())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+ident(name)+" TEMPLATE "+ident(source)); err != nil {
		t.Fatalf("pgtest: create database %s from %s: %v", name, source, err)
	}
	t.Cleanup(func() {
		// The test's context is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		defer cancel()
		if err := dropDatabase(ctx, admin, name); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	dbURL, err := withDatabase(adminURL, name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return dbURL
}

// Pool opens a connection pool to url and closes it when the test ends. Cleanups run last
// registered first, so a pool opened on NewDatabase's URL closes before the database is
// dropped.
func Pool(t testing.TB, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatalf("pgtest: open a pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// adminPool returns the pool used to create and drop databases, opening it on first use.
func adminPool(ctx context.Context) (*pgxpool.Pool, string, error) {
	harness.mu.Lock()
	defer harness.mu.Unlock()
	if !harness.started {
		return nil, "", errors.New("no server: call pgtest.Main from the package's TestMain: func TestMain(m *testing.M) { pgtest.Main(m) }")
	}
	if harness.admin != nil {
		return harness.admin, harness.adminURL, nil
	}
	cfg, err := pgxpool.ParseConfig(harness.adminURL)
	if err != nil {
		return nil, "", fmt.Errorf("parse the server URL: %w", err)
	}
	// Creating and dropping databases queue on the server anyway.
	cfg.MaxConns = 4
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, "", fmt.Errorf("connect to the test server: %w", err)
	}
	harness.admin = pool
	return pool, harness.adminURL, nil
}

func closeAdmin() {
	harness.mu.Lock()
	defer harness.mu.Unlock()
	if harness.admin != nil {
		harness.admin.Close()
		harness.admin = nil
	}
}

// dropDatabase drops name, ending its sessions.
func dropDatabase(ctx context.Context, admin *pgxpool.Pool, name string) error {
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(name)+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// databaseName makes a database name from a test name: lower-case letters, digits and _, then a
// random suffix so that reruns and parallel packages never collide.
func databaseName(testName string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "_"):
			b.WriteByte('_')
		}
	}
	base := b.String()
	if len(base) > maxNameBase {
		base = base[:maxNameBase]
	}
	base = strings.TrimRight(base, "_")
	if base == "" {
		base = "test"
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	return base + "_" + hex.EncodeToString(suffix[:])
}

// withDatabase returns connString pointing at database name. It accepts both URL and
// keyword/value connection strings, as pgx does.
func withDatabase(connString, name string) (string, error) {
	if !strings.HasPrefix(connString, "postgres://") && !strings.HasPrefix(connString, "postgresql://") {
		// In keyword/value form the last occurrence of a keyword wins.
		return connString + " dbname=" + name, nil
	}
	u, err := url.Parse(connString)
	if err != nil {
		return "", fmt.Errorf("parse the server URL: %w", err)
	}
	u.Path, u.RawPath = "/"+name, ""
	if q := u.Query(); q.Has("dbname") {
		q.Del("dbname")
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}

func ident(name string) string { return pgx.Identifier{name}.Sanitize() }
