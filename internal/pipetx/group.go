package pipetx

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/internal/groupcommit"
)

// Group commits RunOne's transactions together when they arrive while
// others are being committed (internal/groupcommit): the transactions
// waiting for a turn go as one batch, BEGIN, each one's statements in the
// order they arrived, COMMIT, so a burst of writes pays one round trip and
// one commit instead of one each. A transaction that finds no batch
// running goes at once, alone, as RunOne sends it.
//
// What RunOne promises, a Group's RunOne promises for each transaction: its
// statements commit if PostgreSQL runs them without error, its callbacks
// read their own results, and an error one of them returns is its own (the
// others' callbacks still run). If a statement fails, PostgreSQL rolls the
// whole batch back; each of its transactions is then run again alone, so
// one transaction's failure is not the others'. A callback may so run
// twice, once in the batch that failed and once alone: callbacks must set
// what they read, not add to it.
type Group struct {
	pool  *pgxpool.Pool
	batch *groupcommit.Batcher[*grouped]
}

// grouped is one transaction of a Group's batch, and its outcome.
type grouped struct {
	first *pgx.Batch
	tx    Tx
	err   error
}

// NewGroup returns a Group committing on pool. opts bound its batches:
// MaxRunning is how many of pool's connections it holds at once.
func NewGroup(pool *pgxpool.Pool, opts groupcommit.Options) *Group {
	g := &Group{pool: pool}
	g.batch = groupcommit.New(g.run, opts)
	return g
}

// RunOne is pipetx.RunOne, committed with the transactions waiting beside
// it (see Group).
func (g *Group) RunOne(ctx context.Context, first *pgx.Batch, fn func(tx *Tx) error) error {
	t := &grouped{first: first}
	if err := fn(&t.tx); err != nil {
		return err
	}
	g.batch.Do(ctx, t)
	return t.err
}

// Waiting is how many transactions wait for a batch.
func (g *Group) Waiting() int { return g.batch.Waiting() }

// Together is how many transactions have committed in batches of several.
func (g *Group) Together() int64 { return g.batch.Together() }

// run commits a batch and settles each of its transactions.
func (g *Group) run(ctx context.Context, batch []*grouped) {
	if len(batch) == 1 {
		t := batch[0]
		t.err = sendOne(ctx, g.pool, t.first, &t.tx.last)
		return
	}
	if g.runTogether(ctx, batch) {
		return
	}
	for _, t := range batch {
		t.err = sendOne(ctx, g.pool, t.first, &t.tx.last)
	}
}

// runTogether sends the batch's transactions as one and settles them, or
// reports false when PostgreSQL refused a statement: then nothing of the
// batch committed, and each must be run again alone.
func (g *Group) runTogether(ctx context.Context, batch []*grouped) bool {
	n := 2
	for _, t := range batch {
		n += queued(t.first) + len(t.tx.last.QueuedQueries)
	}
	b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, n)}
	b.Queue("begin")
	refused := false
	for _, t := range batch {
		if t.first != nil {
			appendOwn(b, t, t.first.QueuedQueries, &refused)
		}
		appendOwn(b, t, t.tx.last.QueuedQueries, &refused)
	}
	queueCommit(b)
	conn, err := g.pool.Acquire(ctx)
	if err != nil {
		settle(batch, err)
		return true
	}
	defer conn.Release() // a connection still in a transaction is closed, not reused
	err = conn.SendBatch(ctx, b).Close()
	if err == nil {
		return true
	}
	err = rollback(ctx, conn, err)
	if refused {
		for _, t := range batch {
			t.err = nil
		}
		return false
	}
	// The connection failed, or COMMIT did: what committed is unknown, as
	// for a transaction run alone.
	settle(batch, err)
	return true
}

// appendOwn appends qs to b, each answering to t: an error its callback
// returns is t's and the batch reads on, unless it is PostgreSQL's (the
// statement failed, so the whole batch is rolled back: *refused is set).
func appendOwn(b *pgx.Batch, t *grouped, qs []*pgx.QueuedQuery, refused *bool) {
	for _, q := range qs {
		fn := q.Fn
		b.QueuedQueries = append(b.QueuedQueries, &pgx.QueuedQuery{SQL: q.SQL, Arguments: q.Arguments,
			Fn: func(br pgx.BatchResults) error {
				var err error
				if fn != nil {
					err = fn(br)
				} else {
					_, err = br.Exec()
				}
				if err == nil {
					return nil
				}
				if _, ok := errors.AsType[*pgconn.PgError](err); ok {
					*refused = true
					return err
				}
				if t.err == nil {
					t.err = err
				}
				return nil
			}})
	}
}

// settle gives every transaction of batch the outcome err.
func settle(batch []*grouped, err error) {
	for _, t := range batch {
		t.err = err
	}
}
