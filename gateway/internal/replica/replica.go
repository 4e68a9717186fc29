package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/svcplatform/svc/gateway/internal/auth"
)

// Defaults of Options.
const (
	DefaultMaxLag      = 5 * time.Second
	DefaultMaxLagBytes = 16 << 20
	DefaultInterval    = 250 * time.Millisecond
)

// maxPending bounds the callers remembered as pending; past it they are
// merged into one position that every caller waits for (safe, and only
// reached while the replica is far behind or down).
const maxPending = 100_000

// Options configure a Router.
type Options struct {
	// Primary is the gateway's pool on the primary.
	Primary *pgxpool.Pool
	// URL is the replica's, with the gateway's role. It may hold a
	// password: never log it.
	URL string
	// MaxLag and MaxLagBytes bound how far behind the primary the replica
	// may be and still serve reads; zero keeps the defaults.
	MaxLag      time.Duration
	MaxLagBytes int64
	// Interval between probes; zero keeps the default.
	Interval time.Duration
	Log      *slog.Logger
}

// Router watches one replica and answers, per call, whether it may serve a
// read. A nil *Router is valid and sends every read to the primary.
type Router struct {
	opts    Options
	replica *pgxpool.Pool

	mu      sync.Mutex
	health  Health
	seq     uint64             // probes begun
	pending map[string]*marker // callers whose last write the replica may lack
	all     *marker            // when pending overflowed: every caller waits for it
	samples []sample           // the primary's position over the last moments

	up, healthy, lagSeconds, lagBytes prometheus.Gauge
	reads                             *prometheus.CounterVec
}

// marker is a write the replica may not hold yet: at seq (the probes begun
// when it ended) and, once a later probe has read the primary, at lsn.
type marker struct {
	seq uint64
	lsn int64 // 0 until known
}

type sample struct {
	at  time.Time
	lsn int64
}

// Health is what the last probe saw.
type Health struct {
	// Up: the replica answered and is a standby in recovery.
	Up bool
	// Replayed is its replay position (bytes since 0/0).
	Replayed int64
	// LagBytes is how far the primary's position was ahead of it.
	LagBytes int64
	// Lag is how long ago the primary first passed the replayed position
	// (0 when the replica has replayed everything the probe saw).
	Lag time.Duration
	// Within: Up, and both lags within their bounds.
	Within bool
	// Why says, when the replica is not Within, why not.
	Why string
}

// New opens the replica's pool (lazily: a replica that is down does not
// stop the gateway) and registers nothing yet; Run probes.
func New(opts Options) (*Router, error) {
	if opts.MaxLag <= 0 {
		opts.MaxLag = DefaultMaxLag
	}
	if opts.MaxLagBytes <= 0 {
		opts.MaxLagBytes = DefaultMaxLagBytes
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	cfg, err := pgxpool.ParseConfig(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("SVC_DATABASE_REPLICA_URL is not a valid PostgreSQL URL: %w", errors.Unwrap(err))
	}
	cfg.MaxConns = 2
	if cfg.ConnConfig.ConnectTimeout == 0 || cfg.ConnConfig.ConnectTimeout > 2*time.Second {
		cfg.ConnConfig.ConnectTimeout = 2 * time.Second
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "svc replica probe"
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("replica pool: %w", err)
	}
	r := &Router{opts: opts, replica: pool, pending: map[string]*marker{},
		up: prometheus.NewGauge(prometheus.GaugeOpts{Name: "svc_database_replica_up",
			Help: "1 when the read replica answered the last probe as a standby in recovery."}),
		healthy: prometheus.NewGauge(prometheus.GaugeOpts{Name: "svc_database_replica_serving",
			Help: "1 when the read replica serves reads: up, and its lag within the configured bounds."}),
		lagSeconds: prometheus.NewGauge(prometheus.GaugeOpts{Name: "svc_database_replica_lag_seconds",
			Help: "How long ago the primary passed the position the replica has replayed (0: caught up)."}),
		lagBytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "svc_database_replica_lag_bytes",
			Help: "WAL bytes the primary is ahead of the replica's replay position."}),
		reads: newReadsCounter(),
	}
	for _, d := range decisions {
		r.reads.WithLabelValues(d.String())
	}
	return r, nil
}

// Collectors are the replica's metrics.
func (r *Router) Collectors() []prometheus.Collector {
	return []prometheus.Collector{r.up, r.healthy, r.lagSeconds, r.lagBytes, r.reads}
}

// Close closes the replica's pool.
func (r *Router) Close() {
	if r != nil {
		r.replica.Close()
	}
}

// Health is what the last probe saw.
func (r *Router) Health() Health {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.health
}

// Caller is the key under which a principal's writes are remembered: the
// user when there is one (a person expects to see their own writes from any
// app), else the app, else the plugin acting as itself.
func Caller(p *auth.Principal) string {
	switch {
	case p == nil:
		return "p:"
	case p.UserID != "":
		return "u:" + p.UserID
	case p.AppID != "":
		return "a:" + p.AppID
	default:
		return "p:" + p.Plugin
	}
}

// Wrote remembers that p's call with side effects has ended: p's reads go
// to the primary until the replica has replayed past it.
func (r *Router) Wrote(p *auth.Principal) {
	if r == nil {
		return
	}
	key := Caller(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	m := &marker{seq: r.seq}
	if len(r.pending) >= maxPending {
		// Every caller now waits for this write too: correct for all of
		// them, and the memory stays bounded.
		r.all, r.pending = m, map[string]*marker{}
		return
	}
	r.pending[key] = m
}

// MayRead answers whether a read by p may be served by the replica, and
// counts the decision.
func (r *Router) MayRead(p *auth.Principal) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	_, own := r.pending[Caller(p)]
	d := decide(r.health, own || r.all != nil)
	r.mu.Unlock()
	r.reads.WithLabelValues(d.String()).Inc()
	return d == ReplicaServes
}

// Run probes the replica every interval until ctx ends.
func (r *Router) Run(ctx context.Context) {
	t := time.NewTicker(r.opts.Interval)
	defer t.Stop()
	wasWithin := true
	for {
		h := r.probe(ctx)
		if h.Within != wasWithin {
			if h.Within {
				r.opts.Log.Info("read replica serves reads", "lag", h.Lag.String(), "lag_bytes", h.LagBytes)
			} else {
				r.opts.Log.Warn("read replica skipped: reads go to the primary", "why", h.Why, "lag", h.Lag.String(), "lag_bytes", h.LagBytes,
					"max_lag", r.opts.MaxLag.String(), "max_lag_bytes", r.opts.MaxLagBytes)
			}
			wasWithin = h.Within
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// probe reads the primary's position, then the replica's, and updates the
// health, the pending callers and the metrics.
func (r *Router) probe(ctx context.Context) Health {
	ctx, cancel := context.WithTimeout(ctx, max(r.opts.Interval*4, time.Second))
	defer cancel()
	r.mu.Lock()
	r.seq++
	seq := r.seq
	r.mu.Unlock()

	var primary int64
	primaryErr := r.opts.Primary.QueryRow(ctx, `SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint`).Scan(&primary)
	var standby bool
	var replayed int64
	replicaErr := r.replica.QueryRow(ctx,
		`SELECT pg_is_in_recovery(), COALESCE((pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint, 0)`).Scan(&standby, &replayed)
	now := time.Now()

	r.mu.Lock()
	defer r.mu.Unlock()
	h := Health{}
	if primaryErr == nil {
		r.samples = append(r.samples, sample{at: now, lsn: primary})
		// Writes that ended before this probe began are at or before primary.
		for _, m := range r.pending {
			if m.lsn == 0 && m.seq < seq {
				m.lsn = primary
			}
		}
		if r.all != nil && r.all.lsn == 0 && r.all.seq < seq {
			r.all.lsn = primary
		}
	}
	switch {
	case replicaErr != nil:
		h.Why = "the replica does not answer"
		r.opts.Log.Debug("read replica probe failed", "error", replicaErr)
	case !standby:
		h.Why = "the replica is not in recovery: not a standby, or promoted"
	case primaryErr != nil:
		// Without the primary's position the lag is unknown.
		h.Why = "the primary's position is unknown"
		r.opts.Log.Debug("read replica probe: primary failed", "error", primaryErr)
	default:
		h.Up, h.Replayed = true, replayed
		h.LagBytes = max(primary-replayed, 0)
		h.Lag = lagOf(r.samples, replayed, now)
		h.Within = h.Lag <= r.opts.MaxLag && h.LagBytes <= r.opts.MaxLagBytes
		if !h.Within {
			h.Why = "the replica lags past a bound"
		}
		for key, m := range r.pending {
			if m.lsn != 0 && m.lsn <= replayed {
				delete(r.pending, key)
			}
		}
		if r.all != nil && r.all.lsn != 0 && r.all.lsn <= replayed {
			r.all = nil
		}
	}
	r.samples = trimSamples(r.samples, now, 2*r.opts.MaxLag)
	r.health = h
	r.up.Set(boolGauge(h.Up))
	r.healthy.Set(boolGauge(h.Within))
	if h.Up {
		r.lagSeconds.Set(h.Lag.Seconds())
		r.lagBytes.Set(float64(h.LagBytes))
	}
	return h
}

// lagOf is how long ago the primary was first seen past replayed, from
// samples oldest first: 0 when no sample is past it, and at least the age
// of the oldest sample when every one is.
func lagOf(samples []sample, replayed int64, now time.Time) time.Duration {
	for _, s := range samples {
		if s.lsn > replayed {
			return now.Sub(s.at)
		}
	}
	return 0
}

// trimSamples drops samples older than keep, but always keeps the newest.
func trimSamples(samples []sample, now time.Time, keep time.Duration) []sample {
	i := 0
	for i < len(samples)-1 && now.Sub(samples[i].at) > keep {
		i++
	}
	return append(samples[:0], samples[i:]...)
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func newReadsCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "svc_database_replica_reads_total",
		Help: "Reads of plugin methods without side effects, by where the gateway sent them and why."}, []string{"decision"})
}
