package piperead_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/internal/groupcommit"
	"github.com/svcplatform/svc/internal/pgtest"
	"github.com/svcplatform/svc/internal/piperead"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// setup gives a pool of one connection on a fresh database with a table of
// numbers; writes counts the writes made on its connection. With one
// connection a held read keeps it, and the pipeline after takes it back.
func setup(t *testing.T) (*pgxpool.Pool, *atomic.Int64) {
	t.Helper()
	t.Parallel()
	pool, writes := pgtest.CountingPool(t, 1)
	if _, err := pool.Exec(context.Background(), `CREATE TABLE numbers (n bigint PRIMARY KEY, name text NOT NULL);
		INSERT INTO numbers SELECT n, 'n' || n FROM generate_series(1, 20) n`); err != nil {
		t.Fatal(err)
	}
	return pool, writes
}

const below = "SELECT n, name FROM numbers WHERE n < $1 ORDER BY n"

// names reads rows of (n, name) into *into.
func names(into *[]string) func(pgx.Rows) error {
	return func(rows pgx.Rows) error {
		for rows.Next() {
			var n int64
			var name string
			if err := rows.Scan(&n, &name); err != nil {
				return err
			}
			*into = append(*into, name)
		}
		return rows.Err()
	}
}

// held takes r's one pipeline slot (a new Reads on pool when r is nil) with
// a read whose rows wait for release, so reads made meanwhile wait for a
// pipeline.
func held(t *testing.T, pool *pgxpool.Pool, r *piperead.Reads) (_ *piperead.Reads, release func()) {
	t.Helper()
	if r == nil {
		r = piperead.New(pool, groupcommit.Options{MaxRunning: 1, MaxBatch: 16})
	}
	started, let := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var got []string
		err := r.Query(context.Background(), below, []any{3}, func(rows pgx.Rows) error {
			close(started)
			<-let
			return names(&got)(rows)
		})
		if err != nil || fmt.Sprint(got) != "[n1 n2]" {
			t.Errorf("the held read: %v, %v; want [n1 n2]", got, err)
		}
	})
	<-started
	return r, func() { close(let); wg.Wait() }
}

// readAll runs each query through r in its own goroutine once all wait for
// a pipeline; it returns each one's rows and error.
func readAll(t *testing.T, r *piperead.Reads, release func(), queries ...func(*[]string) (string, []any, func(pgx.Rows) error)) ([][]string, []error) {
	t.Helper()
	got, errs := make([][]string, len(queries)), make([]error, len(queries))
	var wg sync.WaitGroup
	for i, q := range queries {
		wg.Go(func() {
			sql, args, fn := q(&got[i])
			errs[i] = r.Query(context.Background(), sql, args, fn)
		})
		if !waitUntil(func() bool { return r.Waiting() == i+1 }) {
			release()
			t.Fatalf("%d reads do not wait for a pipeline", i+1)
		}
	}
	release()
	wg.Wait()
	return got, errs
}

// waitUntil polls cond for up to five seconds.
func waitUntil(cond func() bool) bool {
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// numbersBelow is a read of the names of the numbers below n.
func numbersBelow(n int) func(*[]string) (string, []any, func(pgx.Rows) error) {
	return func(into *[]string) (string, []any, func(pgx.Rows) error) { return below, []any{n}, names(into) }
}

func TestReadsThatArriveWhileOneRunsGoAsOnePipelineEachWithItsOwnRows(t *testing.T) {
	pool, writes := setup(t)
	r := piperead.New(pool, groupcommit.Options{MaxRunning: 1, MaxBatch: 16})
	// A first pipeline prepares the statement on the connection.
	r, release := held(t, pool, r)
	readAll(t, r, release, numbersBelow(1), numbersBelow(1))
	r, release = held(t, pool, r)
	writes.Store(0)
	got, errs := readAll(t, r, release, numbersBelow(2), numbersBelow(4), numbersBelow(1), numbersBelow(3))
	want := []string{"[n1]", "[n1 n2 n3]", "[]", "[n1 n2]"}
	for i := range got {
		if errs[i] != nil || fmt.Sprint(got[i]) != want[i] {
			t.Errorf("read %d: %v, %v; want %s", i, got[i], errs[i], want[i])
		}
	}
	if n := r.Together(); n != 2+4 {
		t.Errorf("%d reads went together, want the 2 and the 4", n)
	}
	if w := writes.Load(); w != 1 {
		t.Errorf("the four reads took %d writes to PostgreSQL, want 1", w)
	}
}

func TestAReadAloneGoesAtOnceOnItsOwn(t *testing.T) {
	pool, _ := setup(t)
	r := piperead.New(pool, groupcommit.Options{MaxRunning: 1, MaxBatch: 16})
	var got []string
	if err := r.Query(context.Background(), below, []any{3}, names(&got)); err != nil || fmt.Sprint(got) != "[n1 n2]" {
		t.Fatalf("%v, %v; want [n1 n2]", got, err)
	}
	if r.Together() != 0 {
		t.Fatalf("a lone read went with %d others", r.Together())
	}
	// It runs on its caller's context: a cancelled read is not run.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Query(ctx, below, []any{3}, names(&got)); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled lone read: %v, want context.Canceled", err)
	}
}

func TestAStatementPostgreSQLRefusesFailsOnlyItsOwnReadInAPipeline(t *testing.T) {
	pool, _ := setup(t)
	r, release := held(t, pool, nil)
	refused := func(*[]string) (string, []any, func(pgx.Rows) error) {
		return "SELECT 1 / $1::int", []any{0}, func(rows pgx.Rows) error {
			for rows.Next() {
			}
			return rows.Err()
		}
	}
	own := errors.New("the reader's own error")
	failing := func(*[]string) (string, []any, func(pgx.Rows) error) {
		return below, []any{5}, func(pgx.Rows) error { return own }
	}
	got, errs := readAll(t, r, release, numbersBelow(2), refused, numbersBelow(3), failing, numbersBelow(4))
	if pgErr, ok := errors.AsType[*pgconn.PgError](errs[1]); !ok || pgErr.Code != "22012" {
		t.Errorf("the refused read: %v, want division_by_zero", errs[1])
	}
	if !errors.Is(errs[3], own) {
		t.Errorf("the failing reader: %v, want its own error", errs[3])
	}
	for i, want := range map[int]string{0: "[n1]", 2: "[n1 n2]", 4: "[n1 n2 n3]"} {
		if errs[i] != nil || fmt.Sprint(got[i]) != want {
			t.Errorf("read %d: %v, %v; want %s", i, got[i], errs[i], want)
		}
	}
	if r.Together() != 5 {
		t.Errorf("%d reads went together, want the 5", r.Together())
	}
	// The connection is still good.
	var after []string
	if err := r.Query(context.Background(), below, []any{2}, names(&after)); err != nil || fmt.Sprint(after) != "[n1]" {
		t.Errorf("a read after: %v, %v", after, err)
	}
}

func TestReadsInAPipelineOnALostConnectionEachGetAnError(t *testing.T) {
	pool, _ := setup(t)
	r, release := held(t, pool, nil)
	kill := func(*[]string) (string, []any, func(pgx.Rows) error) {
		return "SELECT pg_terminate_backend(pg_backend_pid())", nil, func(rows pgx.Rows) error {
			for rows.Next() {
			}
			return rows.Err()
		}
	}
	_, errs := readAll(t, r, release, numbersBelow(2), kill, numbersBelow(3))
	if errs[0] != nil {
		t.Errorf("the read before the loss: %v", errs[0])
	}
	for _, i := range []int{1, 2} {
		if errs[i] == nil {
			t.Errorf("read %d after the connection was lost has no error", i)
		}
	}
	// The pool gives a good connection after.
	var after []string
	if err := r.Query(context.Background(), below, []any{2}, names(&after)); err != nil || fmt.Sprint(after) != "[n1]" {
		t.Errorf("a read after: %v, %v", after, err)
	}
}

func TestAReadWhoseCallerLeftBeforeItsPipelineIsWrittenIsNotSent(t *testing.T) {
	pool, _ := setup(t)
	if _, err := pool.Exec(context.Background(), `CREATE SEQUENCE taken`); err != nil {
		t.Fatal(err)
	}
	r, release := held(t, pool, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var gone error
	called := false
	var wg sync.WaitGroup
	wg.Go(func() {
		gone = r.Query(ctx, "SELECT nextval('taken')", nil, func(rows pgx.Rows) error {
			called = true
			rows.Close()
			return rows.Err()
		})
	})
	if !waitUntil(func() bool { return r.Waiting() == 1 }) {
		release()
		t.Fatal("the read does not wait for a pipeline")
	}
	cancel() // its client leaves while it waits
	var got []string
	var err error
	wg.Go(func() { err = r.Query(context.Background(), below, []any{3}, names(&got)) })
	if !waitUntil(func() bool { return r.Waiting() == 2 }) {
		release()
		t.Fatal("the second read does not wait for the pipeline")
	}
	release()
	wg.Wait()
	if r.Together() != 2 {
		t.Errorf("%d reads went together, want the 2", r.Together())
	}
	if !errors.Is(gone, context.Canceled) || called {
		t.Errorf("the read whose caller left: %v (rows handed: %v), want context.Canceled and no rows", gone, called)
	}
	if err != nil || fmt.Sprint(got) != "[n1 n2]" {
		t.Errorf("the read beside it: %v, %v; want [n1 n2]", got, err)
	}
	var isCalled bool
	if err := pool.QueryRow(context.Background(), `SELECT is_called FROM taken`).Scan(&isCalled); err != nil || isCalled {
		t.Errorf("the sequence was taken from (%v, %v): the read was sent", isCalled, err)
	}
}
