// Package prune keeps the core tables bounded: a background job, run by one
// gateway at a time however many share the database, deletes what has
// outlived its retention — dispatched outbox events, finished webhook
// deliveries, idempotency keys, expired tokens, sessions and codes, the
// SLA's minutes, the status page's days and partners' smoke runs — in
// small batches, oldest first. It also reports the size of every table as
// metrics, so that an operator sees growth before it hurts.
//
// Plugins' own tables are theirs to bound.
package prune

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/svcplatform/svc/gateway/internal/coredb"
)

// Retention says how long each kind of row is kept. Zero fields take the
// defaults of DefaultRetention.
type Retention struct {
	// Events: outbox rows, counted from their dispatch.
	Events time.Duration
	// Deliveries: finished webhook deliveries and their attempt log,
	// counted from their end. Pending and held deliveries are never pruned.
	Deliveries time.Duration
	// IdempotencyKeys: how long a write's answer is replayed (CONTRACT §1:
	// 24 hours).
	IdempotencyKeys time.Duration
}

// DefaultRetention keeps events a week (a replay reads deliveries, which
// carry their own copy), the delivery log 30 days, idempotency keys 24 hours.
var DefaultRetention = Retention{Events: 7 * 24 * time.Hour, Deliveries: 30 * 24 * time.Hour, IdempotencyKeys: 24 * time.Hour}

// Options configures a Pruner.
type Options struct {
	Pool      *pgxpool.Pool
	Log       *slog.Logger
	Retention Retention
	// Interval between rounds (with up to 20 % jitter, so that gateways
	// started together do not knock together). Default 10 minutes.
	Interval time.Duration
	// Batch is the most rows one statement deletes. Default 5,000.
	Batch int32
}

// Pruner runs the rounds.
type Pruner struct {
	opts   Options
	pruned *prometheus.CounterVec
	rounds *prometheus.CounterVec
}

// New returns a Pruner; Run starts it.
func New(opts Options) *Pruner {
	r := &opts.Retention
	d := DefaultRetention
	for _, f := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&r.Events, d.Events}, {&r.Deliveries, d.Deliveries}, {&r.IdempotencyKeys, d.IdempotencyKeys},
	} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	if opts.Interval <= 0 {
		opts.Interval = 10 * time.Minute
	}
	if opts.Batch <= 0 {
		opts.Batch = 5000
	}
	p := &Pruner{
		opts: opts,
		pruned: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "svc_pruned_rows_total",
			Help: "Rows deleted by the pruning job after their retention, per table."}, []string{"table"}),
		rounds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "svc_prune_rounds_total",
			Help: "Pruning rounds by outcome: done here, skipped (another gateway held the lock), failed."}, []string{"outcome"}),
	}
	// Every series exists from the start, at zero: a rate or an alert on
	// one works before the first round (ten minutes in) and on a gateway
	// that never wins the lock.
	for _, table := range prunedTables {
		p.pruned.WithLabelValues(table)
	}
	for _, outcome := range []string{"done", "skipped", "failed"} {
		p.rounds.WithLabelValues(outcome)
	}
	return p
}

// prunedTables are the tables a round prunes, in order.
var prunedTables = []string{"core.outbox", "core.webhook_deliveries", "core.idempotency_keys",
	"core.credentials", "core.oauth_codes", "core.oauth_refresh_tokens", "core.sla_minutes", "core.status_days",
	"core.partner_smoke_runs"}

// lockKey is the advisory lock that makes one gateway prune at a time.
const lockKey = 0x7376_6370_7275_6e65 // "svcprune"

// Run prunes every Interval until ctx ends.
func (p *Pruner) Run(ctx context.Context) {
	for {
		jitter := time.Duration(rand.Int64N(int64(p.opts.Interval) / 5))
		select {
		case <-ctx.Done():
			return
		case <-time.After(p.opts.Interval + jitter):
		}
		if _, err := p.Once(ctx); err != nil && ctx.Err() == nil {
			p.opts.Log.Warn("prune round failed", "error", err)
		}
	}
}

// Once runs one round unless another gateway is running one, and answers
// the rows deleted per table (nil when it was skipped).
func (p *Pruner) Once(ctx context.Context) (map[string]int64, error) {
	conn, err := p.opts.Pool.Acquire(ctx)
	if err != nil {
		p.rounds.WithLabelValues("failed").Inc()
		return nil, err
	}
	defer conn.Release()
	var locked bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(lockKey)).Scan(&locked); err != nil {
		p.rounds.WithLabelValues("failed").Inc()
		return nil, err
	}
	if !locked {
		p.rounds.WithLabelValues("skipped").Inc()
		return nil, nil
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(lockKey)) }()

	q := coredb.New(conn)
	r, b := p.opts.Retention, p.opts.Batch
	prune := map[string]func() (int64, error){
		"core.outbox": func() (int64, error) {
			return q.PruneOutbox(ctx, coredb.PruneOutboxParams{RetainSeconds: r.Events.Seconds(), Batch: b})
		},
		"core.webhook_deliveries": func() (int64, error) {
			return q.PruneDeliveries(ctx, coredb.PruneDeliveriesParams{RetainSeconds: r.Deliveries.Seconds(), Batch: b})
		},
		"core.idempotency_keys": func() (int64, error) {
			return q.PruneIdempotencyKeysBatch(ctx, coredb.PruneIdempotencyKeysBatchParams{RetainSeconds: r.IdempotencyKeys.Seconds(), Batch: b})
		},
		"core.credentials":          func() (int64, error) { return q.PruneCredentials(ctx, b) },
		"core.oauth_codes":          func() (int64, error) { return q.PruneOAuthCodes(ctx, b) },
		"core.oauth_refresh_tokens": func() (int64, error) { return q.PruneRefreshTokens(ctx, b) },
		// The SLA's minutes outlive its longest window (30 days) by a day;
		// the status page's days, its 90 bars.
		"core.sla_minutes": func() (int64, error) { return q.PruneSLAMinutes(ctx, b) },
		"core.status_days": func() (int64, error) { return q.PruneStatusDays(ctx, b) },
		// Smoke runs: 90 days, three times the partner criteria's window.
		"core.partner_smoke_runs": func() (int64, error) { return q.PruneSmokeRuns(ctx, b) },
	}
	out := map[string]int64{}
	for _, table := range prunedTables {
		for {
			n, err := prune[table]()
			if err != nil {
				p.rounds.WithLabelValues("failed").Inc()
				return out, fmt.Errorf("prune %s: %w", table, err)
			}
			out[table] += n
			p.pruned.WithLabelValues(table).Add(float64(n))
			if n < int64(b) {
				break
			}
		}
	}
	p.rounds.WithLabelValues("done").Inc()
	return out, nil
}

// Collectors are the pruning counters and the table-size gauges, for the
// gateway's /metrics.
func (p *Pruner) Collectors() []prometheus.Collector {
	return []prometheus.Collector{p.pruned, p.rounds, &tableSizes{pool: p.opts.Pool}}
}

// tableSizes reads every table's live rows and bytes when /metrics is
// scraped: one query on PostgreSQL's statistics, cheap at any size.
type tableSizes struct{ pool *pgxpool.Pool }

var (
	rowsDesc = prometheus.NewDesc("svc_table_live_rows", "Live rows of a table (PostgreSQL's statistics estimate).", []string{"schema", "table"}, nil)
	sizeDesc = prometheus.NewDesc("svc_table_bytes", "Size of a table with its indexes and TOAST, in bytes.", []string{"schema", "table"}, nil)
)

func (c *tableSizes) Describe(ch chan<- *prometheus.Desc) { ch <- rowsDesc; ch <- sizeDesc }

func (c *tableSizes) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := c.pool.Query(ctx, `SELECT schemaname::text, relname::text, n_live_tup, pg_total_relation_size(relid) FROM pg_stat_user_tables`)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(rowsDesc, err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var schema, table string
		var live, bytes int64
		if err := rows.Scan(&schema, &table, &live, &bytes); err != nil {
			ch <- prometheus.NewInvalidMetric(rowsDesc, err)
			return
		}
		ch <- prometheus.MustNewConstMetric(rowsDesc, prometheus.GaugeValue, float64(live), schema, table)
		ch <- prometheus.MustNewConstMetric(sizeDesc, prometheus.GaugeValue, float64(bytes), schema, table)
	}
}
