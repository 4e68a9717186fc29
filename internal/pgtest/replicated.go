package pgtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/internal/pgembed"
)

// Replicated is a private primary cluster and a streaming standby of it
// (pg_basebackup --write-recovery-conf), both on private sockets, for tests
// of read replicas. It is separate from the shared test server: a test may
// pause, lag or stop its standby.
type Replicated struct {
	Primary, Standby *pgembed.Cluster
}

// NewReplicated starts the pair, with database dbname made on the primary
// before the standby is copied; both stop when the test ends.
func NewReplicated(t testing.TB, dbname string) *Replicated {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	for _, dir := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(dir, 0o755); err != nil { // the clusters may run as another user
			t.Fatal(err)
		}
	}
	primaryDir, standbyDir := filepath.Join(root, "primary"), filepath.Join(root, "standby")
	primary, err := pgembed.Start(ctx, pgembed.Options{Dir: primaryDir, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = primary.Stop(context.Background()) })
	r := &Replicated{Primary: primary}
	r.ExecPrimary(t, "postgres", `CREATE DATABASE `+ident(dbname))
	if err := pgembed.Standby(ctx, primaryDir, standbyDir, "", nil); err != nil {
		t.Fatal(err)
	}
	if r.Standby, err = pgembed.Start(ctx, pgembed.Options{Dir: standbyDir, Fast: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Standby.Stop(context.Background()) })
	return r
}

// ExecPrimary runs sql as the primary's superuser in dbname.
func (r *Replicated) ExecPrimary(t testing.TB, dbname, sql string) {
	t.Helper()
	exec(t, r.Primary.URL(dbname), sql)
}

// PauseReplay stops the standby applying WAL, and returns once it has:
// what it has not replayed, it does not show.
func (r *Replicated) PauseReplay(t testing.TB) {
	t.Helper()
	exec(t, r.Standby.URL("postgres"), `SELECT pg_wal_replay_pause()`)
	deadline := time.Now().Add(time.Minute)
	for {
		// The pause takes effect at the next record the standby reads: give
		// it one (a commit; pg_switch_wal would skip a 16 MiB segment and
		// look like lag).
		exec(t, r.Primary.URL("postgres"), `SELECT txid_current()`)
		var state string
		query(t, r.Standby.URL("postgres"), `SELECT pg_get_wal_replay_pause_state()`, &state)
		if state == "paused" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby's replay is still %q", state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ResumeReplay undoes PauseReplay.
func (r *Replicated) ResumeReplay(t testing.TB) {
	t.Helper()
	exec(t, r.Standby.URL("postgres"), `SELECT pg_wal_replay_resume()`)
}

// WaitReplayed returns once the standby has replayed all the primary has
// written so far.
func (r *Replicated) WaitReplayed(t testing.TB) {
	t.Helper()
	var target string
	query(t, r.Primary.URL("postgres"), `SELECT pg_current_wal_insert_lsn()::text`, &target)
	deadline := time.Now().Add(time.Minute)
	for {
		var done bool
		query(t, r.Standby.URL("postgres"), `SELECT pg_last_wal_replay_lsn() >= '`+target+`'::pg_lsn`, &done)
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby did not replay up to %s", target)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func exec(t testing.TB, url, sql string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func query(t testing.TB, url, sql string, dest any) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(context.Background(), sql).Scan(dest); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
