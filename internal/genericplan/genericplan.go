// Package genericplan runs chosen statements with a generic plan on a pool
// whose other statements keep theirs.
//
// PostgreSQL plans a prepared statement afresh at each execution while a
// custom plan looks cheaper than the generic one, and a connection may be
// set to plan everything afresh (plan_cache_mode=force_custom_plan, the
// webhook bookkeeping's, against a generic plan made while a table was
// small). For a few statements that planning is most of their cost: the
// token exchange's RedeemCodes (its arrays make a custom plan of four
// codes look cheaper than the generic plan's default ten rows, so it was
// planned again every time, about 0.2 ms against 0.02 ms, for the same
// plan) and the webhook dispatcher's DispatchEvents (1–1.5 ms of planning,
// about 100 times a second under a post-write load). DB runs each of its
// statements with plan_cache_mode=force_generic_plan, set before it and
// reset after it in one pipeline (one round trip, one implicit
// transaction, whose commit ends it), so the connection plans it once.
package genericplan

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DB is a DBTX (sqlc's) over a pool whose statements run with generic
// plans.
type DB struct {
	pool   *pgxpool.Pool
	maxAge time.Duration

	mu      sync.Mutex
	planned map[*pgconn.PgConn]time.Time // when each connection last dropped its plans
}

// New returns a DB running its statements on pool with generic plans. A
// maxAge above zero has each connection drop its plans (DISCARD PLANS)
// before a statement once they are older than that, so they are made
// again for the tables as they are then; zero keeps them as PostgreSQL
// does (until the tables' statistics or definitions change).
func New(pool *pgxpool.Pool, maxAge time.Duration) *DB {
	return &DB{pool: pool, maxAge: maxAge, planned: map[*pgconn.PgConn]time.Time{}}
}

// stale tells whether conn's plans are older than maxAge, and if so counts
// them as made again now.
func (g *DB) stale(conn *pgconn.PgConn, now time.Time) bool {
	if g.maxAge <= 0 {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if t, ok := g.planned[conn]; ok && now.Sub(t) < g.maxAge {
		return false
	}
	if len(g.planned) > 16 { // closed connections' entries
		for c, t := range g.planned {
			if now.Sub(t) > time.Minute || c.IsClosed() {
				delete(g.planned, c)
			}
		}
	}
	g.planned[conn] = now
	return true
}

// Query runs sql with a generic plan; the connection goes back to the pool
// once the rows are closed.
func (g *DB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	c, err := g.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	b := &pgx.Batch{}
	replan := g.stale(c.Conn().PgConn(), time.Now())
	if replan {
		b.Queue("DISCARD PLANS")
	}
	b.Queue("SET plan_cache_mode = force_generic_plan")
	b.Queue(sql, args...)
	b.Queue("RESET plan_cache_mode")
	br := c.SendBatch(ctx, b)
	fail := func(err error) (pgx.Rows, error) {
		_ = br.Close()
		c.Release()
		return nil, err
	}
	for range 1 + btoi(replan) {
		if _, err := br.Exec(); err != nil {
			return fail(err)
		}
	}
	rows, err := br.Query()
	if err != nil {
		return fail(err)
	}
	return &batchRows{Rows: rows, br: br, conn: c}, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Exec runs sql with a generic plan.
func (g *DB) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	rows, err := g.Query(ctx, sql, args...)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	rows.Close()
	return rows.CommandTag(), rows.Err()
}

// QueryRow runs sql with a generic plan and reads its first row.
func (g *DB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := g.Query(ctx, sql, args...)
	return &batchRow{rows: rows, err: err}
}

// batchRows are the statement's rows; its Err, which a caller reads after
// the rows, and its Close read the rest of the pipeline, so neither
// returns before the commit (nor hides its failure), and then give the
// connection back.
type batchRows struct {
	pgx.Rows
	br   pgx.BatchResults
	conn *pgxpool.Conn
	done bool
	err  error
}

func (r *batchRows) finish() {
	if r.done {
		return
	}
	r.done = true
	r.Rows.Close()
	r.err = r.Rows.Err()
	if _, err := r.br.Exec(); r.err == nil {
		r.err = err
	}
	if err := r.br.Close(); r.err == nil {
		r.err = err
	}
	r.conn.Release()
}

func (r *batchRows) Close() { r.finish() }

func (r *batchRows) Err() error {
	r.finish()
	return r.err
}

// batchRow is QueryRow's answer: the first row, as pgx.Row scans it.
type batchRow struct {
	rows pgx.Rows
	err  error
}

func (r *batchRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}
