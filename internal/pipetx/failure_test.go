package pipetx_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/svcplatform/svc/internal/pipetx"
)

// wide is a row type with one field more than the statements' columns: a
// sqlc model ahead of (or behind) the table.
type wide struct {
	Name  string
	Value int64
	Extra int64
}

func TestAScanErrorInTheFirstBatchRollsBackWhatItWrote(t *testing.T) {
	pool, _ := setup(t)
	ctx := context.Background()
	connsBefore := pool.Stat().NewConnsCount()
	first := &pgx.Batch{}
	pipetx.QueueRow(first, func(db pipetx.DBTX) { queries{db}.insert(ctx, "c", 3) }, new(wide), nil)
	called := false
	err := pipetx.Run(ctx, pool, first, func(*pipetx.Tx) error { called = true; return nil })
	if err == nil || called {
		t.Fatalf("Run = %v (fn called %v), want the scan's error before fn", err, called)
	}
	var n int64
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM counters WHERE name = 'c'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("the insert of the first batch committed though its row could not be read")
	}
	assertConnectionKept(t, pool, connsBefore)
}

func TestAFailedStatementLeavesFoundFalse(t *testing.T) {
	pool, _ := setup(t)
	ctx := context.Background()
	var c counter
	found := true // a caller's stale value must not survive
	first := &pgx.Batch{}
	pipetx.QueueRow(first, func(db pipetx.DBTX) { queries{db}.insert(ctx, "a", 3) }, &c, &found) // duplicate key
	err := pipetx.Run(ctx, pool, first, func(*pipetx.Tx) error { return nil })
	if err == nil {
		t.Fatal("Run = nil, want the duplicate key error")
	}
	if found {
		t.Error("found is true after the statement failed")
	}
}

func TestAnErrorTheFunctionIgnoredMakesCommitAnErrorAndCommitsNothing(t *testing.T) {
	pool, _ := setup(t)
	ctx := context.Background()
	err := pipetx.Run(ctx, pool, nil, func(tx *pipetx.Tx) error {
		if err := (queries{tx}).set(ctx, "b", 99); err != nil {
			return err
		}
		_, _ = (queries{tx}).insert(ctx, "a", 3) // duplicate key, ignored: the transaction is aborted
		return nil
	})
	if !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Fatalf("Run = %v, want pgx.ErrTxCommitRollback", err)
	}
	if v := value(t, pool, "b"); v != 10 {
		t.Errorf("b = %d, want 10: the aborted transaction committed", v)
	}
	assertNoTransactionHeld(t, pool, "a")
}

func TestAContextThatEndsBeforeCommitCommitsNothing(t *testing.T) {
	pool, _ := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	first := &pgx.Batch{}
	pipetx.QueueRow(first, func(db pipetx.DBTX) { queries{db}.lockCounter(ctx, "a") }, new(counter), nil)
	err := pipetx.Run(ctx, pool, first, func(tx *pipetx.Tx) error {
		pipetx.Queue(tx.Last(), func(db pipetx.DBTX) { _ = queries{db}.set(ctx, "a", 42) })
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if v := value(t, pool, "a"); v != 1 {
		t.Errorf("a = %d, want 1: the write sent with COMMIT committed after the context ended", v)
	}
	assertNoTransactionHeld(t, pool, "a")
}

func TestAContextThatEndsWhileTheFirstBatchWaitsForALockLeavesNoTransactionOpen(t *testing.T) {
	pool, _ := setup(t)
	bg := context.Background()
	holder, err := pool.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (queries{holder}).lockCounter(bg, "a"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
	defer cancel()
	first := &pgx.Batch{}
	pipetx.Queue(first, func(db pipetx.DBTX) { _ = queries{db}.set(ctx, "b", 7) })
	pipetx.QueueRow(first, func(db pipetx.DBTX) { queries{db}.lockCounter(ctx, "a") }, new(counter), nil)
	err = pipetx.Run(ctx, pool, first, func(*pipetx.Tx) error { return nil })
	if !errors.Is(err, context.DeadlineExceeded) && !pgconnTimeout(err) {
		t.Errorf("Run = %v, want the context's deadline", err)
	}
	if err := holder.Rollback(bg); err != nil {
		t.Fatal(err)
	}
	if v := value(t, pool, "b"); v != 10 {
		t.Errorf("b = %d, want 10", v)
	}
	assertNoTransactionHeld(t, pool, "a")
}

func pgconnTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

func TestAPlanChangedUnderTheStatementCacheFailsOnceThenRunsAgain(t *testing.T) {
	pool, _ := setup(t)
	ctx := context.Background()
	lockAll := func(db pipetx.DBTX) {
		var c counter
		_ = db.QueryRow(ctx, "SELECT * FROM counters WHERE name = 'a' FOR UPDATE").Scan(&c.Name, &c.Value)
	}
	run := func() error {
		first := &pgx.Batch{}
		pipetx.QueueRow(first, lockAll, new(counter), nil)
		return pipetx.Run(ctx, pool, first, func(tx *pipetx.Tx) error {
			pipetx.Queue(tx.Last(), func(db pipetx.DBTX) { _ = queries{db}.set(ctx, "b", 11) })
			return nil
		})
	}
	// Both connections of the pool prepare the statement.
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); _ = run() }()
	}
	wg.Wait()
	if _, err := pool.Exec(ctx, "ALTER TABLE counters ALTER COLUMN value TYPE integer"); err != nil {
		t.Fatal(err)
	}
	failures := 0
	for range 4 {
		err := run()
		var pgErr *pgconn.PgError
		switch {
		case err == nil:
		case errors.As(err, &pgErr) && pgErr.Code == "0A000":
			failures++
		default:
			t.Fatalf("Run = %v", err)
		}
	}
	t.Logf("%d runs failed on the changed plan", failures)
	if failures > 2 {
		t.Errorf("%d runs failed on the changed plan, want at most one per connection", failures)
	}
	if err := run(); err != nil {
		t.Errorf("Run after the plan changed = %v", err)
	}
	assertNoTransactionHeld(t, pool, "a")
}

func TestAConnectionLostBeforeCommitCommitsNothing(t *testing.T) {
	pool, _ := setup(t)
	ctx := context.Background()
	err := pipetx.Run(ctx, pool, nil, func(tx *pipetx.Tx) error {
		if err := (queries{tx}).set(ctx, "b", 50); err != nil {
			return err
		}
		var pid int32
		if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			return err
		}
		if _, err := pool.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
			return err
		}
		pipetx.Queue(tx.Last(), func(db pipetx.DBTX) { _ = queries{db}.set(ctx, "a", 50) })
		return nil
	})
	if err == nil {
		t.Fatal("Run = nil on a lost connection")
	}
	if a, b := value(t, pool, "a"), value(t, pool, "b"); a != 1 || b != 10 {
		t.Errorf("a = %d, b = %d after a lost connection, want 1 and 10", a, b)
	}
	assertNoTransactionHeld(t, pool, "a")
}
