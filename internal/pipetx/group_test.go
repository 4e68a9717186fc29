package pipetx_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/internal/groupcommit"
	"github.com/svcplatform/svc/internal/pipetx"
)

// groupHeld gives a Group on pool whose one batch slot is taken by a
// transaction waiting for a row lock another connection holds, so what is
// run next waits for a batch; release lets it go (and waits for it).
func groupHeld(t *testing.T, pool *pgxpool.Pool) (g *pipetx.Group, release func()) {
	t.Helper()
	ctx := context.Background()
	g = pipetx.NewGroup(pool, groupcommit.Options{MaxRunning: 1, MaxBatch: 16})
	holder, err := pgx.Connect(ctx, pool.Config().ConnConfig.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Close(ctx) })
	if _, err := holder.Exec(ctx, "BEGIN; SELECT 1 FROM counters WHERE name = 'a' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		var after counter
		err := g.RunOne(ctx, nil, func(tx *pipetx.Tx) error {
			pipetx.QueueRow(tx.Last(), func(db pipetx.DBTX) { queries{db}.addTo(ctx, "a", 1) }, &after, nil)
			return nil
		})
		if err != nil || after != (counter{"a", 2}) {
			t.Errorf("the held transaction: %+v, %v; want {a 2}", after, err)
		}
	})
	waitForLockWait(t, holder)
	return g, func() {
		if _, err := holder.Exec(ctx, "COMMIT"); err != nil {
			t.Error(err)
		}
		wg.Wait()
	}
}

// prepareInsert has each of pool's connections prepare queries.insert's
// statement, BEGIN and COMMIT, which a connection otherwise does in a round trip of its own
// the first time.
func prepareInsert(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	var conns []*pgxpool.Conn
	for i := range pool.Config().MaxConns {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		name := fmt.Sprint("prepared-", i)
		b := &pgx.Batch{}
		b.Queue("begin")
		pipetx.Queue(b, func(db pipetx.DBTX) { queries{db}.insert(ctx, name, 0) })
		b.Queue("rollback")
		b.Queue("commit")
		if err := c.SendBatch(ctx, b).Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range conns {
		c.Release()
	}
}

// waitForLockWait waits until a session of the database waits for a lock.
func waitForLockWait(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		var n int
		if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no session waits for the held lock")
		}
	}
}

// insertAll runs one insert of each name through g, each in its own
// goroutine, once all wait for a batch; it returns each one's row and error.
func insertAll(t *testing.T, g *pipetx.Group, release func(), names ...string) ([]counter, []error) {
	t.Helper()
	ctx := context.Background()
	rows, errs := make([]counter, len(names)), make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			errs[i] = g.RunOne(ctx, nil, func(tx *pipetx.Tx) error {
				pipetx.QueueRow(tx.Last(), func(db pipetx.DBTX) { queries{db}.insert(ctx, name, int64(100+i)) }, &rows[i], nil)
				return nil
			})
		})
		waitUntil(t, fmt.Sprintf("%d transactions waiting", i+1), func() bool { return g.Waiting() == i+1 })
	}
	release()
	wg.Wait()
	return rows, errs
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestTransactionsThatArriveWhileABatchCommitsCommitTogetherInOneRoundTrip(t *testing.T) {
	pool, writes := setup(t)
	prepareInsert(t, pool)
	g, release := groupHeld(t, pool)
	writes.Store(0)
	rows, errs := insertAll(t, g, release, "c", "d", "e")
	if w := writes.Load(); w != 1 {
		t.Errorf("the three took %d writes to PostgreSQL, want 1 (BEGIN, the inserts, COMMIT in one batch)", w)
	}
	for i, name := range []string{"c", "d", "e"} {
		if errs[i] != nil || rows[i] != (counter{name, int64(100 + i)}) {
			t.Errorf("%s: %+v, %v; want {%s %d}", name, rows[i], errs[i], name, 100+i)
		}
		if v := value(t, pool, name); v != int64(100+i) {
			t.Errorf("%s committed %d, want %d", name, v, 100+i)
		}
	}
	if g.Together() != 3 {
		t.Errorf("Together %d, want 3", g.Together())
	}
}

func TestAStatementThatFailsInABatchFailsOnlyItsOwnTransaction(t *testing.T) {
	pool, _ := setup(t)
	g, release := groupHeld(t, pool)
	rows, errs := insertAll(t, g, release, "c", "b", "d") // b exists: a unique violation
	var pgErr *pgconn.PgError
	if !errors.As(errs[1], &pgErr) || pgErr.Code != "23505" {
		t.Errorf("the duplicate insert: %v, want unique_violation", errs[1])
	}
	for _, i := range []int{0, 2} {
		name := []string{"c", "b", "d"}[i]
		if errs[i] != nil || rows[i] != (counter{name, int64(100 + i)}) {
			t.Errorf("%s: %+v, %v; want it committed alone after the batch failed", name, rows[i], errs[i])
		}
		if v := value(t, pool, name); v != int64(100+i) {
			t.Errorf("%s committed %d, want %d", name, v, 100+i)
		}
	}
	if v := value(t, pool, "b"); v != 10 {
		t.Errorf("b is %d, want its 10 untouched", v)
	}
}

func TestACallbacksErrorInABatchIsOnlyItsOwnTransactions(t *testing.T) {
	pool, _ := setup(t)
	g, release := groupHeld(t, pool)
	ctx := context.Background()
	var got [3]counter
	var errs [3]error
	var wg sync.WaitGroup
	for i, name := range []string{"b", "nobody", "a"} {
		wg.Go(func() {
			errs[i] = g.RunOne(ctx, nil, func(tx *pipetx.Tx) error {
				// found is nil: no row is the callback's error, pgx.ErrNoRows.
				pipetx.QueueRow(tx.Last(), func(db pipetx.DBTX) { queries{db}.addTo(ctx, name, 5) }, &got[i], nil)
				return nil
			})
		})
		waitUntil(t, "the transaction to wait", func() bool { return g.Waiting() == i+1 })
	}
	release()
	wg.Wait()
	if !errors.Is(errs[1], pgx.ErrNoRows) {
		t.Errorf("the update of no row: %v, want pgx.ErrNoRows", errs[1])
	}
	if errs[0] != nil || got[0] != (counter{"b", 15}) || errs[2] != nil || got[2] != (counter{"a", 7}) {
		t.Errorf("the others: %+v %v, %+v %v; want {b 15} and {a 7}", got[0], errs[0], got[2], errs[2])
	}
	if g.Together() != 3 {
		t.Errorf("Together %d, want 3: the batch was not redone", g.Together())
	}
}

func TestALoneStatementCommitsAsATransactionOfItsOwnAndFailsLeavingNoneOpen(t *testing.T) {
	pool, _ := setup(t)
	ctx := context.Background()
	var row counter
	err := pipetx.RunOne(ctx, pool, nil, func(tx *pipetx.Tx) error {
		pipetx.QueueRow(tx.Last(), func(db pipetx.DBTX) { queries{db}.insert(ctx, "c", 3) }, &row, nil)
		return nil
	})
	if err != nil || row != (counter{"c", 3}) || value(t, pool, "c") != 3 {
		t.Fatalf("%+v, %v; want {c 3} committed", row, err)
	}
	// A lone statement that fails leaves the connection out of any
	// transaction, as PostgreSQL's own transaction of one statement does.
	err = pipetx.RunOne(ctx, pool, nil, func(tx *pipetx.Tx) error {
		pipetx.QueueRow(tx.Last(), func(db pipetx.DBTX) { queries{db}.insert(ctx, "c", 4) }, &row, nil)
		return nil
	})
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Fatalf("the duplicate: %v, want unique_violation", err)
	}
	if _, _, err := readAddCommit(ctx, pool, "c", 1); err != nil {
		t.Fatalf("the pool's connections after it: %v", err)
	}
}
