// Package pipetx runs a PostgreSQL transaction in as few round trips as its
// shape allows: BEGIN travels with the transaction's first statements and
// COMMIT with its last, each group as one pipelined batch.
//
// A transaction that reads (and locks) what it decides on, decides in Go,
// then writes, costs two round trips this way instead of one per statement
// plus two for BEGIN and COMMIT. Each round trip saved is a write and a
// read on the plugin's socket and on PostgreSQL's, and a wake-up on both
// sides: on the Page message send (issue 15) that was half of the plugin's
// CPU.
//
// The statements of a batch report their results through the callbacks of
// pgx.QueuedQuery (QueryRow, Query, Exec), called in order as the results
// arrive. A statement that fails ends the batch: PostgreSQL skips the rest
// of it, and Run rolls the transaction back. The last batch is different in
// one way: COMMIT is already on its way when its callbacks run, so they can
// report what they read but not undo it. A statement sent with COMMIT must
// be right to commit whatever it finds (a guarded write that writes nothing
// when its guard fails, say).
package pipetx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Tx is an open transaction on a connection of its own. Statements run
// through it (it serves sqlc's DBTX) take a round trip each; statements
// queued on Last are sent with COMMIT.
type Tx struct {
	conn *pgxpool.Conn
	last pgx.Batch
}

// Exec runs a statement in the transaction (in RunOne's, none runs: it
// fails with ErrNeedsRoundTrip).
func (t *Tx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if t.conn == nil {
		return pgconn.CommandTag{}, ErrNeedsRoundTrip
	}
	return t.conn.Exec(ctx, sql, args...)
}

// Query runs a query in the transaction (see Exec).
func (t *Tx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.conn == nil {
		return nil, ErrNeedsRoundTrip
	}
	return t.conn.Query(ctx, sql, args...)
}

// QueryRow runs a query of at most one row in the transaction (see Exec).
func (t *Tx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if t.conn == nil {
		return errRow{ErrNeedsRoundTrip}
	}
	return t.conn.QueryRow(ctx, sql, args...)
}

// ErrNeedsRoundTrip is what a statement run through RunOne's Tx answers:
// the transaction wants a result before COMMIT, so it is not one round
// trip.
var ErrNeedsRoundTrip = errors.New("pipetx: the statement needs a round trip of its own")

// errRow is a row that is only an error.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// Last is the batch sent with COMMIT, once the function given to Run has
// returned nil. Its statements commit if PostgreSQL runs them without
// error; their callbacks read their results, and an error one returns is
// Run's, but the transaction has committed by then (see the package doc).
func (t *Tx) Last() *pgx.Batch { return &t.last }

// Run begins a transaction with first's statements in one batch (first may
// be nil), calls fn with the open transaction, then commits with the
// statements fn queued on tx.Last in one batch. An error from a statement,
// from fn or from a callback of first rolls the transaction back and is
// returned; nothing is committed. A connection whose transaction cannot be
// rolled back is closed, never returned to the pool.
func Run(ctx context.Context, pool *pgxpool.Pool, first *pgx.Batch, fn func(tx *Tx) error) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release() // a connection still in a transaction is closed, not reused
	tx := &Tx{conn: conn}

	begin := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, 1+queued(first))}
	begin.Queue("begin")
	if first != nil {
		begin.QueuedQueries = append(begin.QueuedQueries, first.QueuedQueries...)
	}
	if err := conn.SendBatch(ctx, begin).Close(); err != nil {
		return rollback(ctx, conn, err)
	}
	if err := fn(tx); err != nil {
		return rollback(ctx, conn, err)
	}
	queueCommit(&tx.last)
	if err := conn.SendBatch(ctx, &tx.last).Close(); err != nil {
		return rollback(ctx, conn, err)
	}
	return nil
}

// RunOne runs a transaction in one round trip, for a caller that decides
// it without reading anything inside it (on what an earlier transaction
// reported, say). fn is called first, before a connection is taken, with a
// Tx whose statements fail with ErrNeedsRoundTrip; its error is returned
// with nothing sent. If it returns nil, BEGIN, first's statements, the
// statements fn queued on tx.Last and COMMIT go as one batch (a lone
// statement goes without BEGIN and COMMIT). Like Last's in Run, those statements commit if PostgreSQL runs them without error:
// one whose decision may be stale must guard itself (write nothing when
// what it was decided on has changed) and the caller must read whether it
// wrote.
func RunOne(ctx context.Context, pool *pgxpool.Pool, first *pgx.Batch, fn func(tx *Tx) error) error {
	tx := &Tx{}
	if err := fn(tx); err != nil {
		return err
	}
	return sendOne(ctx, pool, first, &tx.last)
}

// sendOne sends RunOne's transaction: BEGIN, first's statements, last's and
// COMMIT as one batch, or a lone statement as it is (PostgreSQL runs it in
// a transaction of its own: two statements fewer to run).
func sendOne(ctx context.Context, pool *pgxpool.Pool, first, last *pgx.Batch) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release() // a connection still in a transaction is closed, not reused
	if queued(first) == 0 && len(last.QueuedQueries) == 1 {
		return conn.SendBatch(ctx, last).Close()
	}
	b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, 2+queued(first)+len(last.QueuedQueries))}
	b.Queue("begin")
	if first != nil {
		b.QueuedQueries = append(b.QueuedQueries, first.QueuedQueries...)
	}
	b.QueuedQueries = append(b.QueuedQueries, last.QueuedQueries...)
	queueCommit(b)
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return rollback(ctx, conn, err)
	}
	return nil
}

// queued is how many statements b holds (none when it is nil): the batch a
// transaction sends is made that size at once, not grown statement by
// statement.
func queued(b *pgx.Batch) int {
	if b == nil {
		return 0
	}
	return len(b.QueuedQueries)
}

// queueCommit queues COMMIT on b, reporting a transaction that had failed
// before it (PostgreSQL answers ROLLBACK) as pgx.ErrTxCommitRollback.
func queueCommit(b *pgx.Batch) {
	b.Queue("commit").Exec(func(tag pgconn.CommandTag) error {
		if tag.String() == "ROLLBACK" { // the transaction had failed before COMMIT
			return pgx.ErrTxCommitRollback
		}
		return nil
	})
}

// rollbackTimeout bounds the rollback of a failed transaction, which runs
// even when the caller's context has ended (a connection left inside a
// transaction would hold its locks until the pool closed it).
const rollbackTimeout = 5 * time.Second

// rollback ends a transaction that failed with cause, if it is still open,
// and returns cause. If the rollback fails too, the connection is closed:
// the pool never hands out a connection inside a transaction.
func rollback(ctx context.Context, conn *pgxpool.Conn, cause error) error {
	if conn.Conn().PgConn().TxStatus() == 'I' {
		return cause
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	if _, err := conn.Exec(ctx, "rollback"); err != nil {
		_ = conn.Conn().Close(ctx)
		return errors.Join(cause, err)
	}
	return cause
}

// DBTX is what sqlc's generated query functions run their statements on.
type DBTX interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// QueueRow queues onto b the statement a sqlc query function runs, instead
// of running it, and reads its row into *into when the batch's results
// arrive. query is called once, at once, with a DBTX that only records the
// statement and its arguments: it is a call of one generated :one function,
// such as func(db pipetx.DBTX) { svcchatdb.New(db).LockOptIn(ctx, arg) }.
// So the SQL and the order of its arguments stay sqlc's. The row is read
// by position: T's fields in the order of the statement's columns, as sqlc
// declares its row and model types. found, if not nil, tells whether a row
// came; without it, no row is the batch's error (pgx.ErrNoRows).
func QueueRow[T any](b *pgx.Batch, query func(db DBTX), into *T, found *bool) {
	sql, args := record(query)
	b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
		v, err := pgx.CollectOneRow(rows, pgx.RowToStructByPos[T])
		if found != nil {
			*found = err == nil
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
		}
		if err != nil {
			return err
		}
		*into = v
		return nil
	})
}

// Queue queues onto b the statement a sqlc function runs, as QueueRow
// does for a :one function, and returns it: its result is not read unless
// the caller gives it a callback (QueryRow, for a statement of one column
// read into a variable of the column's type).
func Queue(b *pgx.Batch, query func(db DBTX)) *pgx.QueuedQuery {
	sql, args := record(query)
	return b.Queue(sql, args...)
}

// record runs query with a recorder and returns the one statement it ran.
func record(query func(db DBTX)) (string, []any) {
	var rec recorder
	query(&rec)
	if rec.calls != 1 {
		panic(fmt.Sprintf("pipetx: the query function ran %d statements, not one", rec.calls))
	}
	return rec.sql, rec.args
}

// errRecorded is what a recorded statement answers to the function that
// "ran" it; QueueRow ignores that function's results.
var errRecorded = errors.New("pipetx: statement recorded, not run")

// recorder is a DBTX that keeps the statement it is given.
type recorder struct {
	calls int
	sql   string
	args  []any
}

func (r *recorder) record(sql string, args []any) {
	r.calls++
	r.sql, r.args = sql, args
}

func (r *recorder) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	r.record(sql, args)
	return pgconn.CommandTag{}, errRecorded
}

func (r *recorder) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	r.record(sql, args)
	return nil, errRecorded
}

func (r *recorder) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	r.record(sql, args)
	return recordedRow{}
}

// recordedRow is the row of a recorded statement: there is none yet.
type recordedRow struct{}

func (recordedRow) Scan(...any) error { return errRecorded }
