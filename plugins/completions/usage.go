package main

import (
	"context"
	"crypto/rand"
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
// request pays a map update, never a database round trip.
//
// Each batch is written exactly once: it gets an id when it is cut, the id
// goes into completions.usage_batches in the same statement as the counts,
// and a failed write is retried with the same id and the same counts (never
// merged into later ones), so that a write that committed but whose answer
// was lost adds nothing the second time. Batches still in memory are
// written when the plugin stops (sdk OnStop); only a process killed
// outright loses the last second.
type recorder struct {
	db      completionsdb.DBTX
	log     *slog.Logger
	metrics *metrics

	mu      sync.Mutex
	pending map[usageKey]*usageCounts
	flushMu sync.Mutex   // one flush at a time, so that batches are written in order
	unsent  []usageBatch // cut, not yet written; guarded by flushMu
	flushes int          // guarded by flushMu; prunes old batch ids now and then
}

// usageBatch is counts cut from pending, with the id that makes their
// write idempotent.
type usageBatch struct {
	id     string
	counts map[usageKey]*usageCounts
}

func newRecorder(db completionsdb.DBTX, log *slog.Logger, m *metrics) *recorder {
	return &recorder{db: db, log: log, metrics: m, pending: map[usageKey]*usageCounts{}}
}

// record counts one request.
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

// run flushes every flushEvery until ctx ends.
func (r *recorder) run(ctx context.Context) {
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := r.flush(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("usage not written; retrying the same batch", "error", err)
			}
		}
	}
}

// flush cuts what was recorded since the last flush into a batch and writes
// every batch not yet written, oldest first. A batch that fails stays, with
// its id, for the next flush.
func (r *recorder) flush(ctx context.Context) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	if len(r.pending) > 0 {
		r.unsent = append(r.unsent, usageBatch{id: rand.Text(), counts: r.pending})
		r.pending = map[usageKey]*usageCounts{}
	}
	r.mu.Unlock()
	q := completionsdb.New(r.db)
	for len(r.unsent) > 0 {
		if _, err := q.AddUsage(ctx, r.unsent[0].params()); err != nil {
			return err
		}
		r.unsent = r.unsent[1:]
	}
	if r.flushes++; r.flushes%3600 == 0 {
		if err := q.PruneUsageBatches(ctx); err != nil {
			r.log.Warn("old usage batch ids not pruned", "error", err)
		}
	}
	return nil
}

func (b usageBatch) params() completionsdb.AddUsageParams {
	p := completionsdb.AddUsageParams{BatchID: b.id}
	for k, c := range b.counts {
		p.AppIds = append(p.AppIds, k.app)
		p.Days = append(p.Days, pgtype.Date{Time: k.day, Valid: true})
		p.Models = append(p.Models, k.model)
		p.Upstreams = append(p.Upstreams, k.upstream)
		p.Requests = append(p.Requests, c.requests)
		p.PromptTokens = append(p.PromptTokens, c.prompt)
		p.CompletionTokens = append(p.CompletionTokens, c.completion)
	}
	return p
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
