package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/svcplatform/svc/plugins/completions/internal/completionsdb"
)

// flushEvery is how often recorded usage is written to PostgreSQL.
const flushEvery = time.Second

// usageKey is one row of completions.usage.
type usageKey struct {
	app, model, upstream string
	day                  time.Time // UTC midnight
}

type usageCounts struct {
	requests, prompt, completion int64
}

// recorder adds up usage in memory and writes it in batches, so that a
// request pays a map update, never a database round trip. Counts not yet
// written when the process dies are lost; issue 19 makes them durable.
type recorder struct {
	db      completionsdb.DBTX
	log     *slog.Logger
	metrics *metrics

	mu      sync.Mutex
	pending map[usageKey]*usageCounts
	flushMu sync.Mutex // one flush at a time, so that a failed batch is merged back in order
}

func newRecorder(db completionsdb.DBTX, log *slog.Logger, m *metrics) *recorder {
	return &recorder{db: db, log: log, metrics: m, pending: map[usageKey]*usageCounts{}}
}

// record counts one answered request.
func (r *recorder) record(app, model, upstream string, u usage) {
	r.metrics.usage(model, upstream, u)
	day := time.Now().UTC().Truncate(24 * time.Hour)
	k := usageKey{app: app, model: model, upstream: upstream, day: day}
	r.mu.Lock()
	c := r.pending[k]
	if c == nil {
		c = &usageCounts{}
		r.pending[k] = c
	}
	c.requests++
	c.prompt += int64(u.PromptTokens)
	c.completion += int64(u.CompletionTokens)
	r.mu.Unlock()
}

// run flushes every flushEvery until ctx ends, then once more.
func (r *recorder) run(ctx context.Context) {
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := r.flush(fctx); err != nil {
				r.log.Error("usage not written at shutdown", "error", err)
			}
			cancel()
			return
		case <-t.C:
			if err := r.flush(ctx); err != nil {
				r.log.Warn("usage not written; retrying with the next batch", "error", err)
			}
		}
	}
}

// flush writes what was recorded since the last flush in one statement. On
// failure the counts go back into the next batch.
func (r *recorder) flush(ctx context.Context) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	batch := r.pending
	if len(batch) == 0 {
		r.mu.Unlock()
		return nil
	}
	r.pending = map[usageKey]*usageCounts{}
	r.mu.Unlock()

	var p completionsdb.AddUsageParams
	for k, c := range batch {
		p.AppIds = append(p.AppIds, k.app)
		p.Days = append(p.Days, pgtype.Date{Time: k.day, Valid: true})
		p.Models = append(p.Models, k.model)
		p.Upstreams = append(p.Upstreams, k.upstream)
		p.Requests = append(p.Requests, c.requests)
		p.PromptTokens = append(p.PromptTokens, c.prompt)
		p.CompletionTokens = append(p.CompletionTokens, c.completion)
	}
	if err := completionsdb.New(r.db).AddUsage(ctx, p); err != nil {
		r.mu.Lock()
		for k, c := range batch {
			if cur := r.pending[k]; cur != nil {
				cur.requests += c.requests
				cur.prompt += c.prompt
				cur.completion += c.completion
			} else {
				r.pending[k] = c
			}
		}
		r.mu.Unlock()
		return err
	}
	return nil
}

// metrics are the plugin's Prometheus counters, served by the gateway on
// /metrics through ExportMetrics. Apps are not a label (their number is
// unbounded); per-app figures are in completions_usage.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	tokens   *prometheus.CounterVec
	attempts *prometheus.CounterVec
	refusals *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_completions_requests_total",
			Help: "Chat completions answered, by model and upstream (svc-builtin for the built-in model).",
		}, []string{"model", "upstream"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_completions_tokens_total",
			Help: "Tokens of answered chat completions, by model, upstream and kind (prompt, completion).",
		}, []string{"model", "upstream", "kind"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_completions_upstream_attempts_total",
			Help: "Calls to upstreams, by upstream and outcome (ok, refused, rate_limited, failed, broken).",
		}, []string{"upstream", "outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_completions_refusals_total",
			Help: "Chat completion requests answered with an error, by HTTP status.",
		}, []string{"status"}),
	}
	m.registry.MustRegister(m.requests, m.tokens, m.attempts, m.refusals)
	return m
}

func (m *metrics) usage(model, upstream string, u usage) {
	m.requests.WithLabelValues(model, upstream).Inc()
	m.tokens.WithLabelValues(model, upstream, "prompt").Add(float64(u.PromptTokens))
	m.tokens.WithLabelValues(model, upstream, "completion").Add(float64(u.CompletionTokens))
}

func (m *metrics) attempt(upstream, outcome string) {
	m.attempts.WithLabelValues(upstream, outcome).Inc()
}
