// Package piperead sends the reads that arrive while others run as one
// pipeline on one connection.
//
// A read alone is one round trip on a connection of its own: a write and a
// read of the socket in the plugin, a backend of PostgreSQL woken to run one
// statement. When reads arrive faster than one round trip ends, the ones that
// wait go together (internal/groupcommit): every statement is written at
// once, each followed by a Sync, and their results are read back in order,
// so one connection, one backend and about one write and one read of the
// socket serve them all. A Sync after each statement keeps each read its own
// implicit transaction: a statement PostgreSQL refuses fails only its read.
// A read that finds fewer than MaxRunning pipelines running goes at once,
// alone, on its own context, as pgx would run it; a read in a pipeline runs
// on the pipeline's (groupcommit's Timeout, not the caller's cancellation),
// except that a read whose own context is done by the time its pipeline is
// written is left out of it (its caller has left; it fails with the
// context's error). A read already sent is read to its end whatever its
// caller does: its results keep the connection in step.
// A pool that traces its queries runs every read alone, so each keeps its
// span.
package piperead

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/internal/groupcommit"
)

// Reads runs the reads of one pool, alone or in pipelines.
type Reads struct {
	pool  *pgxpool.Pool
	batch *groupcommit.Batcher[*read]
	// alone: the pool traces its queries (tracing.PgxTracer), which a
	// pipeline would bypass, so every read runs alone.
	alone bool
}

// read is one query of a pipeline and its outcome.
type read struct {
	ctx  context.Context // the caller's, for a read run alone
	sql  string
	args []any
	rows func(pgx.Rows) error
	err  error
}

// New returns the Reads of pool; opts bound its pipelines (MaxRunning is
// how many of pool's connections they hold at once, MaxBatch how many reads
// one carries).
func New(pool *pgxpool.Pool, opts groupcommit.Options) *Reads {
	r := &Reads{pool: pool, alone: pool.Config().ConnConfig.Tracer != nil}
	r.batch = groupcommit.New(r.run, opts)
	return r
}

// Query runs sql with args and hands its rows to fn, which must read or
// close them before it returns. The error is fn's, the statement's or the
// connection's; another read's never is.
func (r *Reads) Query(ctx context.Context, sql string, args []any, fn func(pgx.Rows) error) error {
	q := &read{ctx: ctx, sql: sql, args: args, rows: fn}
	if r.alone {
		return queryAlone(ctx, r.pool, q)
	}
	r.batch.Do(ctx, q)
	return q.err
}

// Together is how many reads have run in pipelines of several.
func (r *Reads) Together() int64 { return r.batch.Together() }

// Waiting is how many reads wait for a pipeline.
func (r *Reads) Waiting() int { return r.batch.Waiting() }

// run settles each read of batch.
func (r *Reads) run(ctx context.Context, batch []*read) {
	if len(batch) == 1 {
		q := batch[0]
		q.err = queryAlone(q.ctx, r.pool, q)
		return
	}
	conn, err := r.pool.Acquire(ctx)
	if err != nil {
		settle(batch, err)
		return
	}
	defer conn.Release() // a connection the pipeline broke is closed, not reused
	pipeline(ctx, conn.Conn(), batch)
}

// queryAlone runs q as pgx runs a query.
func queryAlone(ctx context.Context, pool *pgxpool.Pool, q *read) error {
	rows, err := pool.Query(ctx, q.sql, q.args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if err := q.rows(rows); err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}

// pipeline sends the reads of batch on conn, each statement followed by a
// Sync, and hands each read its rows in turn.
func pipeline(ctx context.Context, conn *pgx.Conn, batch []*read) {
	// The statements' descriptions: pgx keeps them per connection, so a
	// statement is prepared on a connection once (a round trip then).
	sds := make([]*pgconn.StatementDescription, len(batch))
	for i, q := range batch {
		if q.err = left(q); q.err == nil {
			sds[i], q.err = conn.Prepare(ctx, q.sql, q.sql)
		}
	}
	var args pgx.ExtendedQueryBuilder
	p := conn.PgConn().StartPipeline(ctx)
	sent := batch[:0:0]
	for i, q := range batch {
		if q.err == nil {
			q.err = left(q) // its caller may have left while others were prepared
		}
		if q.err != nil {
			continue
		}
		if q.err = args.Build(conn.TypeMap(), sds[i], q.args); q.err != nil {
			continue
		}
		// The Bind is encoded here, so args is free for the next read.
		p.SendQueryStatement(sds[i], args.ParamValues, args.ParamFormats, args.ResultFormats)
		p.SendPipelineSync()
		sent = append(sent, q)
	}
	if len(sent) == 0 {
		p.Close()
		return
	}
	if err := p.Flush(); err != nil {
		settle(sent, err)
		p.Close()
		return
	}
	for i, q := range sent {
		if err := readOne(conn, p, q); err != nil {
			// The connection failed (pgconn has closed it): what is left
			// of the pipeline is lost with it.
			settle(sent[i:], err)
			break
		}
	}
	p.Close() // every read is settled; a connection it finds broken is closed
}

// left reports the error of a read whose caller has left (its context is
// done), nil for one still wanted.
func left(q *read) error {
	if q.ctx.Err() == nil {
		return nil
	}
	return context.Cause(q.ctx)
}

// readOne reads q's result and its Sync from p: q.err is q's own outcome,
// and the error returned is the connection's, when it failed.
func readOne(conn *pgx.Conn, p *pgconn.Pipeline, q *read) error {
	res, err := p.GetResults()
	switch {
	case err != nil && !isPg(err):
		return err
	case err != nil:
		q.err = err // PostgreSQL refused the statement: the Sync follows
	default:
		rr, ok := res.(*pgconn.ResultReader)
		if !ok {
			return errors.New("piperead: the pipeline answered a query with something other than rows")
		}
		rows := connRows{pgx.RowsFromResultReader(conn.TypeMap(), rr), conn}
		q.err = q.rows(rows)
		rows.Close()
		if q.err == nil {
			q.err = rows.Err()
		}
		if q.err != nil && !isPg(q.err) && conn.PgConn().IsClosed() {
			return q.err
		}
	}
	res, err = p.GetResults()
	if err != nil && !isPg(err) {
		return err
	}
	if _, ok := res.(*pgconn.PipelineSync); !ok && err == nil {
		return errors.New("piperead: the pipeline did not answer a Sync after a query")
	}
	return nil
}

// connRows are a pipeline's rows, which know their connection as a
// query's do.
type connRows struct {
	pgx.Rows
	conn *pgx.Conn
}

func (r connRows) Conn() *pgx.Conn { return r.conn }

// isPg reports whether err is PostgreSQL's refusal of a statement, after
// which the connection is still good.
func isPg(err error) bool {
	_, ok := errors.AsType[*pgconn.PgError](err)
	return ok
}

// settle gives every read of batch not yet settled the outcome err.
func settle(batch []*read, err error) {
	for _, q := range batch {
		if q.err == nil {
			q.err = err
		}
	}
}
