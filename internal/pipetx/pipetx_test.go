package pipetx_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/internal/pgtest"
	"github.com/svcplatform/svc/internal/pipetx"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// counter is a row of the test table, in its column order.
type counter struct {
	Name  string
	Value int64
}

// queries stands for a sqlc package: functions that run one statement on a
// DBTX and scan its row themselves.
type queries struct{ db pipetx.DBTX }

func (q queries) lockCounter(ctx context.Context, name string) (counter, error) {
	var c counter
	err := q.db.QueryRow(ctx, "SELECT name, value FROM counters WHERE name = $1 FOR UPDATE", name).Scan(&c.Name, &c.Value)
	return c, err
}

func (q queries) addTo(ctx context.Context, name string, n int64) (counter, error) {
	var c counter
	err := q.db.QueryRow(ctx, "UPDATE counters SET value = value + $2 WHERE name = $1 RETURNING name, value", name, n).Scan(&c.Name, &c.Value)
	return c, err
}

func (q queries) insert(ctx context.Context, name string, value int64) (counter, error) {
	var c counter
	err := q.db.QueryRow(ctx, "INSERT INTO counters (name, value) VALUES ($1, $2) RETURNING name, value", name, value).Scan(&c.Name, &c.Value)
	return c, err
}

func (q queries) set(ctx context.Context, name string, value int64) error {
	_, err := q.db.Exec(ctx, "UPDATE counters SET value = $2 WHERE name = $1", name, value)
	return err
}

// setup gives a fresh database with the counters table; writes counts the
// writes made on the pool's connections (each batch is one).
func setup(t *testing.T) (*pgxpool.Pool, *atomic.Int64) {
	t.Helper()
	t.Parallel()
	pool, writes := pgtest.CountingPool(t, 2)
	if _, err := pool.Exec(context.Background(), `CREATE TABLE counters (name text PRIMARY KEY, value bigint NOT NULL);
		INSERT INTO counters VALUES ('a', 1), ('b', 10)`); err != nil {
		t.Fatal(err)
	}
	return pool, writes
}

func value(t *testing.T, pool *pgxpool.Pool, name string) int64 {
	t.Helper()
	var v int64
	if err := pool.QueryRow(context.Background(), "SELECT value FROM counters WHERE name = $1", name).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// readAddCommit is the shape pipetx is for: lock and read, decide, write
// with COMMIT.
func readAddCommit(ctx context.Context, pool *pgxpool.Pool, name string, n int64) (before, after counter, err error) {
	first := &pgx.Batch{}
	pipetx.QueueRow(first, func(db pipetx.DBTX) { queries{db}.lockCounter(ctx, name) }, &before, nil)
	err = pipetx.Run(ctx, pool, first, func(tx *pipetx.Tx) error {
		pipetx.QueueRow(tx.Last(), func(db pipetx.DBTX) { queries{db}.addTo(ctx, name, n) }, &after, nil)
		return nil
	})
	return before, after, err
}

func TestATransactionThatLocksDecidesAndWritesTakesTwoRoundTrips(t *testing.T) {
	pool, writes := setup(t)
	ctx := context.Background()
	if _, _, err := readAddCommit(ctx, pool, "a", 1); err != nil { // prepares the statements
		t.Fatal(err)
	}
	writes.Store(0)
	before, after, err := readAddCommit(ctx, pool, "a", 5)
	if err != nil {
		t.Fatal(err)
	}
	if got := writes.Load(); got != 2 {
		t.Errorf("the transaction took %d writes to PostgreSQL, want 2 (BEGIN with the lock, the update with COMMIT)", got)
	}
	if before != (counter{"a", 2}) || after != (counter{"a", 7}) {
		t.Errorf("read %+v then %+v, want {a 2} then {a 7}", before, after)
	}
	if v := value(t, pool, "a"); v != 7 {
		t.Errorf("committed value %d, want 7", v)
	}
}

func TestAStatementWithoutARowQueuedWithCommitCommits(t *testing.T) {
	pool, writes := setup(t)
	ctx := context.Background()
	set := func(v int64) error {
		return pipetx.Run(ctx, pool, nil, func(tx *pipetx.Tx) error {
			pipetx.Queue(tx.Last(), func(db pipetx.DBTX) { queries{db}.set(ctx, "b", v) })
			return nil
		})
	}
	if err := set(20); err != nil {
		t.Fatal(err)
	}
	writes.Store(0)
	if err := set(30); err != nil {
		t.Fatal(err)
	}
	if got := writes.Load(); got != 2 {
		t.Errorf("the transaction took %d writes to PostgreSQL, want 2 (BEGIN, the update with COMMIT)", got)
	}
	if v := value(t, pool, "b"); v != 30 {
		t.Errorf("b = %d, want 30", v)
	}
}

func TestAnErrorFromTheFunctionRollsBackWhatTheTransactionWrote(t *testing.T) {
	pool, _ := setup(t)
	ctx := context.Background()
	var locked counter
	first := &pgx.Batch{}
	pipetx.QueueRow(first, func(db pipetx.DBTX) { queries{db}.lockCounter(ctx, "a") }, &locked, nil)
	refused := errors.New("refused")
	conns := pool.Stat().NewConnsCount()
	err := pipetx.Run(ctx, pool, first, func(tx *pipetx.Tx) error {
		if _, err := (queries{tx}).addTo(ctx, "a", 100); err != nil { // a statement in between, one round trip
			return err
		}
		pipetx.QueueRow(tx.Last(), func(db pipetx.DBTX) { queries{db}.addTo(ctx, "b", 100) }, new(counter), nil)
		return refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("Run = %v, want the function's error", err)
	}
	assertConnectionKept(t, pool, conns)
	if a, b := value(t, pool, "a"), value(t, pool, "b"); a != 1 || b != 10 {
		t.Errorf("after a refused transaction a = %d, b = %d; want 1 and 10", a, b)
	}
	assertNoTransactionHeld(t, pool, "a")
}

func TestAStatementThatFailsWithCommitRollsBackTheWholeTransaction(t *testing.T) {
	pool, _ := setup(t)
	ctx := context.Background()
	conns := pool.Stat().NewConnsCount()
	err := pipetx.Run(ctx, pool, nil, func(tx *pipetx.Tx) error {
		if _, err := (queries{tx}).addTo(ctx, "b", 1); err != nil {
			return err
		}
		pipetx.QueueRow(tx.Last(), func(db pipetx.DBTX) { queries{db}.insert(ctx, "a", 0) }, new(counter), nil) // duplicate key
		return nil
	})
	assertRolledBack(t, pool, err, conns, "b", 10) // the update before the failed statement is undone
}

func TestAFirstStatementThatFailsEndsTheTransactionBeforeTheFunction(t *testing.T) {
	pool, _ := setup(t)
	ctx := context.Background()
	first := &pgx.Batch{}
	pipetx.QueueRow(first, func(db pipetx.DBTX) { queries{db}.addTo(ctx, "a", 1) }, new(counter), nil)
	pipetx.QueueRow(first, func(db pipetx.DBTX) { queries{db}.insert(ctx, "b", 0) }, new(counter), nil) // duplicate key
	called := false
	conns := pool.Stat().NewConnsCount()
	err := pipetx.Run(ctx, pool, first, func(*pipetx.Tx) error { called = true; return nil })
	if called {
		t.Error("the function ran after its first statements failed")
	}
	assertRolledBack(t, pool, err, conns, "a", 1) // the first statement's update is undone
}

func TestNoRowIsNotFoundWhenAskedAndAnErrorOtherwise(t *testing.T) {
	pool, _ := setup(t)
	ctx := context.Background()
	found := true
	var c counter
	first := &pgx.Batch{}
	pipetx.QueueRow(first, func(db pipetx.DBTX) { queries{db}.lockCounter(ctx, "nobody") }, &c, &found)
	if err := pipetx.Run(ctx, pool, first, func(*pipetx.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if found || c != (counter{}) {
		t.Errorf("found = %v, row %+v; want not found and nothing read", found, c)
	}

	first = &pgx.Batch{}
	pipetx.QueueRow(first, func(db pipetx.DBTX) { queries{db}.lockCounter(ctx, "nobody") }, &c, nil)
	if err := pipetx.Run(ctx, pool, first, func(*pipetx.Tx) error { return nil }); !errors.Is(err, pgx.ErrNoRows) {
		t.Errorf("Run = %v, want pgx.ErrNoRows for a missing row nobody asked about", err)
	}
}

func TestAFunctionThatOutlivesItsContextLeavesNoTransactionOpen(t *testing.T) {
	pool, _ := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	first := &pgx.Batch{}
	pipetx.QueueRow(first, func(db pipetx.DBTX) { queries{db}.lockCounter(ctx, "a") }, new(counter), nil)
	err := pipetx.Run(ctx, pool, first, func(*pipetx.Tx) error {
		cancel()
		return ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	assertNoTransactionHeld(t, pool, "a")
}

func TestQueueRowRefusesAFunctionThatRunsTwoStatements(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("QueueRow accepted a function that ran two statements")
		}
	}()
	pipetx.QueueRow(&pgx.Batch{}, func(db pipetx.DBTX) {
		queries{db}.lockCounter(context.Background(), "a")
		queries{db}.lockCounter(context.Background(), "b")
	}, new(counter), nil)
}

// assertRolledBack checks that Run failed with the unique violation the
// test provoked and left nothing behind: the counter name still holds
// want, the connection was kept, no transaction holds the row.
func assertRolledBack(t *testing.T, pool *pgxpool.Pool, err error, connsBefore int64, name string, want int64) {
	t.Helper()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Fatalf("Run = %v, want the unique violation", err)
	}
	assertConnectionKept(t, pool, connsBefore)
	if v := value(t, pool, name); v != want {
		t.Errorf("%s = %d after the failed transaction, want %d: it was not rolled back", name, v, want)
	}
	assertNoTransactionHeld(t, pool, name)
}

// assertConnectionKept checks that a failed transaction was rolled back on
// its connection, which the pool then keeps: the next statement needs no
// new connection (a connection returned inside a transaction is closed).
func assertConnectionKept(t *testing.T, pool *pgxpool.Pool, connsBefore int64) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if n := pool.Stat().NewConnsCount(); n != connsBefore {
		t.Errorf("the pool opened %d new connections after the failed transaction, want none: it was not rolled back on its connection", n-connsBefore)
	}
}

// assertNoTransactionHeld checks that no transaction was left open: the
// pool's connections (MaxConns 2) are all outside a transaction, and the
// row can be locked at once.
func assertNoTransactionHeld(t *testing.T, pool *pgxpool.Pool, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var conns []*pgxpool.Conn
	for range 2 {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if s := c.Conn().PgConn().TxStatus(); s != 'I' {
			t.Errorf("a pooled connection is in transaction status %q", s)
		}
	}
	for _, c := range conns {
		c.Release()
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '2s'"); err != nil {
		t.Fatal(err)
	}
	if _, err := (queries{tx}).lockCounter(ctx, name); err != nil {
		t.Fatalf("locking %q: %v (a transaction was left open)", name, err)
	}
}

// lockAddOne is RunOne's shape: the lock and a write decided beforehand, in
// one batch with BEGIN and COMMIT.
func lockAddOne(ctx context.Context, pool *pgxpool.Pool, name string, n int64, after *counter) error {
	first := &pgx.Batch{}
	pipetx.Queue(first, func(db pipetx.DBTX) { queries{db}.lockCounter(ctx, name) })
	return pipetx.RunOne(ctx, pool, first, func(tx *pipetx.Tx) error {
		pipetx.QueueRow(tx.Last(), func(db pipetx.DBTX) { queries{db}.addTo(ctx, name, n) }, after, nil)
		return nil
	})
}

func TestATransactionDecidedBeforehandTakesOneRoundTrip(t *testing.T) {
	pool, writes := setup(t)
	ctx := context.Background()
	var after counter
	if err := lockAddOne(ctx, pool, "a", 1, &after); err != nil { // prepares the statements
		t.Fatal(err)
	}
	writes.Store(0)
	if err := lockAddOne(ctx, pool, "a", 5, &after); err != nil {
		t.Fatal(err)
	}
	if got := writes.Load(); got != 1 {
		t.Errorf("the transaction took %d writes to PostgreSQL, want 1 (BEGIN, the lock, the update and COMMIT)", got)
	}
	if after != (counter{"a", 7}) {
		t.Errorf("read %+v, want {a 7}", after)
	}
	if v := value(t, pool, "a"); v != 7 {
		t.Errorf("committed value %d, want 7", v)
	}
}

func TestAOneRoundTripTransactionThatNeedsAStatementsResultSendsNothing(t *testing.T) {
	pool, writes := setup(t)
	ctx := context.Background()
	writes.Store(0)
	err := pipetx.RunOne(ctx, pool, nil, func(tx *pipetx.Tx) error {
		if _, err := (queries{tx}).addTo(ctx, "a", 100); err != nil {
			return err
		}
		pipetx.Queue(tx.Last(), func(db pipetx.DBTX) { queries{db}.set(ctx, "b", 0) })
		return nil
	})
	if !errors.Is(err, pipetx.ErrNeedsRoundTrip) {
		t.Fatalf("RunOne = %v, want ErrNeedsRoundTrip", err)
	}
	if got := writes.Load(); got != 0 {
		t.Errorf("%d writes to PostgreSQL, want none", got)
	}
	if a, b := value(t, pool, "a"), value(t, pool, "b"); a != 1 || b != 10 {
		t.Errorf("a = %d, b = %d; want 1 and 10", a, b)
	}
}

func TestAOneRoundTripTransactionWhoseStatementFailsCommitsNothing(t *testing.T) {
	pool, _ := setup(t)
	ctx := context.Background()
	conns := pool.Stat().NewConnsCount()
	err := pipetx.RunOne(ctx, pool, nil, func(tx *pipetx.Tx) error {
		pipetx.Queue(tx.Last(), func(db pipetx.DBTX) { queries{db}.set(ctx, "b", 0) })
		pipetx.QueueRow(tx.Last(), func(db pipetx.DBTX) { queries{db}.insert(ctx, "a", 0) }, new(counter), nil) // duplicate key
		return nil
	})
	assertRolledBack(t, pool, err, conns, "b", 10) // the update before the failed statement is undone
}
