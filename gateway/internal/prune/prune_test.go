package prune

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/svcplatform/svc/internal/pgtest"
	"github.com/svcplatform/svc/sdk/migrate"
	coresql "github.com/svcplatform/svc/sql/core"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func pool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	p := pgtest.Pool(t, pgtest.NewDatabase(t))
	if _, err := migrate.Apply(context.Background(), p, "core", coresql.Migrations()); err != nil {
		t.Fatal(err)
	}
	return p
}

func count(t *testing.T, p *pgxpool.Pool, q string) int {
	t.Helper()
	var n int
	if err := p.QueryRow(context.Background(), q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// What outlived its retention goes, in batches; what did not, and what is
// still pending, stays.
func TestARoundDeletesWhatOutlivedItsRetentionAndNothingElse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pool(t)
	if _, err := p.Exec(ctx, `
INSERT INTO core.outbox (id, type, data, dispatched_at)
  SELECT 'old' || g, 'x', '{}', now() - interval '8 days' FROM generate_series(1, 25) g;
INSERT INTO core.outbox (id, type, data, dispatched_at) VALUES ('recent', 'x', '{}', now() - interval '1 hour');
INSERT INTO core.outbox (id, type, data) VALUES ('pending', 'x', '{}');
INSERT INTO core.idempotency_keys (scope, key, request_hash, created_at) VALUES
  ('a', 'old', '\x00', now() - interval '25 hours'), ('a', 'new', '\x00', now());
INSERT INTO core.credentials (token_hash, kind, expires_at) VALUES
  ('\x01', 4, now() - interval '2 days'), ('\x02', 4, now() - interval '1 hour'), ('\x03', 4, now() + interval '1 hour');
INSERT INTO core.credentials (token_hash, kind, revoked_at) VALUES ('\x04', 1, now() - interval '3 days')`); err != nil {
		t.Fatal(err)
	}
	pr := New(Options{Pool: p, Log: slog.New(slog.DiscardHandler), Batch: 10})
	got, err := pr.Once(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got["core.outbox"] != 25 || got["core.idempotency_keys"] != 1 || got["core.credentials"] != 2 {
		t.Fatalf("pruned %v", got)
	}
	if n := count(t, p, `SELECT count(*) FROM core.outbox`); n != 2 {
		t.Errorf("%d outbox rows left, want the recent and the pending one", n)
	}
	if n := count(t, p, `SELECT count(*) FROM core.credentials`); n != 2 {
		t.Errorf("%d credentials left, want the one in its day of grace and the live one", n)
	}
	if v := testutil.ToFloat64(pr.pruned.WithLabelValues("core.outbox")); v != 25 {
		t.Errorf("svc_pruned_rows_total{table=core.outbox} = %v", v)
	}
}

// Gateways sharing a database take turns: a round finds another's running
// and skips.
func TestARoundSkipsWhileAnotherGatewayPrunes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pool(t)
	other, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release()
	if _, err := other.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(lockKey)); err != nil {
		t.Fatal(err)
	}
	pr := New(Options{Pool: p, Log: slog.New(slog.DiscardHandler)})
	if got, err := pr.Once(ctx); err != nil || got != nil {
		t.Fatalf("Once while another prunes = %v, %v; want skipped", got, err)
	}
	if _, err := other.Exec(ctx, `SELECT pg_advisory_unlock($1)`, int64(lockKey)); err != nil {
		t.Fatal(err)
	}
	if got, err := pr.Once(ctx); err != nil || got == nil {
		t.Fatalf("Once after = %v, %v; want a round", got, err)
	}
	if v := testutil.ToFloat64(pr.rounds.WithLabelValues("skipped")); v != 1 {
		t.Errorf("skipped rounds = %v", v)
	}
}

func TestTableSizesAreMetrics(t *testing.T) {
	t.Parallel()
	p := pool(t)
	if _, err := p.Exec(context.Background(), `INSERT INTO core.outbox (id, type, data) VALUES ('e', 'x', '{}'); ANALYZE core.outbox`); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(New(Options{Pool: p, Log: slog.New(slog.DiscardHandler), Interval: time.Hour}).Collectors()...)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range families {
		if f.GetName() != "svc_table_bytes" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["schema"] == "core" && labels["table"] == "outbox" && m.GetGauge().GetValue() > 0 {
				found = true
			}
		}
	}
	if !found {
		t.Fatal("no svc_table_bytes for core.outbox")
	}
}

// Every pruning series is on /metrics from the start, at zero: before the
// first round, and on a gateway that never wins the lock (issue 28).
func TestPruneMetricsArePresentFromTheStart(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	reg.MustRegister(New(Options{Pool: pool(t), Log: slog.New(slog.DiscardHandler), Interval: time.Hour}).Collectors()...)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]bool{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				series[f.GetName()+" "+l.GetValue()] = true
			}
		}
	}
	for _, want := range []string{"svc_pruned_rows_total core.outbox", "svc_pruned_rows_total core.oauth_refresh_tokens",
		"svc_prune_rounds_total done", "svc_prune_rounds_total skipped", "svc_prune_rounds_total failed"} {
		if !series[want] {
			t.Errorf("no %s before the first round", want)
		}
	}
}

// The SLA's minutes go a day after its 30-day window; the status page's
// days after its 90 bars.
func TestARoundDeletesSLAMinutesAndStatusDaysPastTheirWindows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pool(t)
	if _, err := p.Exec(ctx, `
INSERT INTO core.sla_minutes (surface, minute, requests, errors, latency) VALUES
  ('graph', date_trunc('minute', now() - interval '32 days'), 1, 0, '{1}'),
  ('graph', date_trunc('minute', now() - interval '29 days'), 1, 0, '{1}');
INSERT INTO core.status_days (component, day, worst) VALUES
  ('graph', current_date - 120, 0), ('graph', current_date - 30, 3)`); err != nil {
		t.Fatal(err)
	}
	got, err := New(Options{Pool: p, Log: slog.New(slog.DiscardHandler)}).Once(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got["core.sla_minutes"] != 1 || got["core.status_days"] != 1 {
		t.Fatalf("pruned %v", got)
	}
	if n := count(t, p, `SELECT count(*) FROM core.sla_minutes`) + count(t, p, `SELECT count(*) FROM core.status_days`); n != 2 {
		t.Fatalf("%d rows left, want the 2 recent ones", n)
	}
}

// A partner's smoke runs go after 90 days (the criteria look at 30); the
// runs of the last 90 days stay.
func TestARoundDeletesSmokeRunsOlderThanNinetyDays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pool(t)
	if _, err := p.Exec(ctx, `
WITH b AS (INSERT INTO core.businesses (name) VALUES ('Roasters') RETURNING id),
     pa AS (INSERT INTO core.partners (business_id) SELECT id FROM b RETURNING id),
     a AS (INSERT INTO core.apps (name, client_id, client_secret_hash) VALUES ('shop', 'c1', '\x00') RETURNING id)
INSERT INTO core.partner_smoke_runs (partner_id, app_id, passed, failed, ran_at)
SELECT pa.id, a.id, 5, 0, now() - d * interval '1 day' FROM pa, a, unnest(ARRAY[91, 120, 89, 29, 1]) d`); err != nil {
		t.Fatal(err)
	}
	got, err := New(Options{Pool: p, Log: slog.New(slog.DiscardHandler), Batch: 1}).Once(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got["core.partner_smoke_runs"] != 2 {
		t.Fatalf("pruned %v", got)
	}
	if n := count(t, p, `SELECT count(*) FROM core.partner_smoke_runs WHERE ran_at >= now() - interval '90 days'`); n != 3 {
		t.Fatalf("%d runs of the last 90 days left, want 3", n)
	}
	if n := count(t, p, `SELECT count(*) FROM core.partner_smoke_runs`); n != 3 {
		t.Fatalf("%d runs left, want the 3 recent ones", n)
	}
}
