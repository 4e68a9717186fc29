package oauth

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// genericPlans is a coredb.DBTX over pool that runs each statement with
// plan_cache_mode=force_generic_plan: set before it and reset after it in
// the same round trip (one pipeline, so one implicit transaction, whose
// commit ends it). For RedeemCodes: its arrays make a custom plan look
// cheaper (4 codes against a generic plan's default of 10 rows: 40.7
// against 90.8), so PostgreSQL planned it again at every execution, about
// 0.2 ms against 0.02 ms, for the same plan (a nested loop over the codes'
// primary key).
type genericPlans struct{ pool *pgxpool.Pool }

func (g genericPlans) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	b := &pgx.Batch{}
	b.Queue("SET plan_cache_mode = force_generic_plan")
	b.Queue(sql, args...)
	b.Queue("RESET plan_cache_mode")
	br := g.pool.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (g genericPlans) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	rows, err := g.Query(ctx, sql, args...)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	rows.Close()
	return rows.CommandTag(), rows.Err()
}

func (g genericPlans) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := g.Query(ctx, sql, args...)
	return &batchRow{rows: rows, err: err}
}

// batchRows are the statement's rows; its Err, which a caller reads after
// the rows, and its Close read the rest of the pipeline, so neither
// returns before the commit (nor hides its failure).
type batchRows struct {
	pgx.Rows
	br   pgx.BatchResults
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
