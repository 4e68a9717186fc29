package webhook

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// planAge is how long a connection keeps the generic plan of
// DispatchEvents before it makes it again (see genericPlans).
const planAge = time.Second

// genericPlans is a coredb.DBTX over the bookkeeping pool for
// DispatchEvents, whose planning (about 1–1.5 ms, every time under the
// pool's force_custom_plan) was most of its cost under load: about 100
// dispatches a second during a post-write load. Each statement runs with
// plan_cache_mode=force_generic_plan, set before it and reset after it in
// one pipeline (as gateway/internal/oauth's genericPlans), so the
// connection plans it once; and a plan older than planAge is dropped
// first (DISCARD PLANS, in the same pipeline), so it is made again for the
// tables as they are then. A generic plan made while core.outbox was
// empty reads the whole outbox (a hash join on a sequential scan): kept
// until the next analyse, that was the stale plan force_custom_plan was
// chosen against; remade every second, it reads at most what a second
// added, and the next plan uses the index. The statement's own shape is
// right at any size otherwise (EXPLAIN of the generic plan with an empty
// queue and outbox, with 72,000 rows in both, with a backlog of 72,000
// queued; see DispatchEvents for the one thing that had to change).
type genericPlans struct {
	pool *pgxpool.Pool

	mu      sync.Mutex
	planned map[*pgconn.PgConn]time.Time // when each connection last dropped its plans
}

func newGenericPlans(pool *pgxpool.Pool) *genericPlans {
	return &genericPlans{pool: pool, planned: map[*pgconn.PgConn]time.Time{}}
}

// stale tells whether conn's plan is older than planAge, and if so counts
// it as made again now.
func (g *genericPlans) stale(conn *pgconn.PgConn, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t, ok := g.planned[conn]; ok && now.Sub(t) < planAge {
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

func (g *genericPlans) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
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

func (g *genericPlans) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	rows, err := g.Query(ctx, sql, args...)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	rows.Close()
	return rows.CommandTag(), rows.Err()
}

func (g *genericPlans) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
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
