// Package sla measures the platform's service levels (CONTRACT §18): every
// request of a measured surface (the Graph, OAuth, completions) and every
// webhook attempt is counted on the hot path with a few atomic adds, in
// memory, per surface; once a minute (and at shutdown) each gateway adds
// its minute into core.sla_minutes, a row per surface and minute that every
// gateway adds to. A window's requests, availability and p99 latency are
// read from those rows, so that restarts and other gateways count and no
// single process's memory is the measure.
//
// Latencies are kept as a histogram of fixed log-scale buckets (Buckets of
// them, two per power of two of microseconds): histograms add up across
// minutes and gateways, and the p99 of the sum is exact to a bucket (at
// most a third above the true value).
package sla

import (
	"context"
	"log/slog"
	"math"
	"math/bits"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/gateway/internal/coredb"
)

// Surface is a measured part of the platform.
type Surface int

// The surfaces, in the order the SLA lists them.
const (
	Graph Surface = iota
	OAuth
	Completions
	Webhooks
	surfaces
	// None is a request no surface measures (pages, the console, ops).
	None Surface = -1
)

var surfaceNames = [surfaces]string{"graph", "oauth", "completions", "webhooks"}

// Surfaces lists every surface.
func Surfaces() []Surface { return []Surface{Graph, OAuth, Completions, Webhooks} }

func (s Surface) String() string {
	if s < 0 || s >= surfaces {
		return ""
	}
	return surfaceNames[s]
}

// Target is a surface's published objective (docs/DECISIONS.md).
type Target struct {
	Availability float64 // fraction of requests answered without a platform fault
	LatencyP99Ms float64
}

// Targets are the published objectives per surface.
var Targets = [surfaces]Target{
	Graph:       {Availability: 0.999, LatencyP99Ms: 1000},
	OAuth:       {Availability: 0.999, LatencyP99Ms: 1000},
	Completions: {Availability: 0.995, LatencyP99Ms: 30000},
	Webhooks:    {Availability: 0.999, LatencyP99Ms: 60000},
}

// GraphPath is the Graph endpoint's path (graph.Path, which this floor
// cannot import; a test checks they agree).
const GraphPath = "/api/v1/graph"

// SurfaceOf names the surface an HTTP request's path belongs to: the
// Graph endpoint, the OAuth server's pages and API, the OpenAI-shaped
// completions API; None for the rest.
func SurfaceOf(path string) Surface {
	switch {
	case path == GraphPath:
		return Graph
	case strings.HasPrefix(path, "/oauth/"), strings.HasPrefix(path, "/api/oauth/"):
		return OAuth
	case strings.HasPrefix(path, "/v1/"):
		return Completions
	}
	return None
}

// Failed says whether an HTTP status is the platform's failure: a 5xx. A
// 4xx is the caller's (a bad token, a refused write, a rate limit).
func Failed(status int) bool { return status >= 500 }

// Buckets is the number of latency buckets.
const Buckets = 56

// bucket is the index of d's bucket: two per power of two of microseconds
// (the upper half of [2^(n-1), 2^n) is a bucket of its own), the last
// holding everything longer.
func bucket(d time.Duration) int {
	us := uint64(d.Microseconds())
	if us < 2 {
		return int(us)
	}
	n := bits.Len64(us)             // us in [2^(n-1), 2^n)
	i := 2*(n-1) + int(us>>(n-2)&1) // the bit below the top: upper half
	return min(i, Buckets-1)
}

// upperMs is the upper bound of bucket i in milliseconds (the last
// bucket's is its lower bound: it has none).
func upperMs(i int) float64 {
	if i <= 1 {
		return float64(i+1) / 1000
	}
	n := i/2 + 1 // bucket i holds values of n bits
	low := math.Ldexp(1, n-1)
	if i%2 == 1 {
		low *= 1.5 // the upper half
	}
	if i == Buckets-1 {
		return low / 1000
	}
	if i%2 == 1 {
		return math.Ldexp(1, n) / 1000
	}
	return low * 1.5 / 1000
}

// P99 is the 99th percentile of a histogram in milliseconds, to the upper
// bound of its bucket; 0 for an empty one.
func P99(hist []int64) float64 {
	var total int64
	for _, c := range hist {
		total += c
	}
	if total == 0 {
		return 0
	}
	rank := (total*99 + 99) / 100 // ceil(0.99 × total)
	var seen int64
	for i, c := range hist {
		seen += c
		if seen >= rank {
			return math.Round(upperMs(min(i, Buckets-1))*10) / 10
		}
	}
	return upperMs(Buckets - 1)
}

// counts is one surface's counters since the last flush.
type counts struct {
	requests, errors atomic.Int64
	buckets          [Buckets]atomic.Int64
}

// Recorder counts outcomes in memory and adds them to the database once a
// minute. The zero value is not usable; a nil *Recorder records nothing.
type Recorder struct {
	pool *pgxpool.Pool
	log  *slog.Logger
	s    [surfaces]counts
	now  func() time.Time
}

// NewRecorder returns a recorder flushing into pool.
func NewRecorder(pool *pgxpool.Pool, log *slog.Logger) *Recorder {
	return &Recorder{pool: pool, log: log, now: time.Now}
}

// Record counts one outcome of surface s: three atomic adds (two when it
// succeeded).
func (r *Recorder) Record(s Surface, d time.Duration, failed bool) {
	if r == nil || s < 0 || s >= surfaces {
		return
	}
	c := &r.s[s]
	c.requests.Add(1)
	if failed {
		c.errors.Add(1)
	}
	c.buckets[bucket(d)].Add(1)
}

// ObserveHTTP records a served HTTP request by its path and status.
func (r *Recorder) ObserveHTTP(path string, status int, d time.Duration) {
	if r == nil {
		return
	}
	if s := SurfaceOf(path); s != None {
		r.Record(s, d, Failed(status))
	}
}

// take empties the counters of s into a minute's row.
func (r *Recorder) take(s Surface) (requests, errors int64, hist []int64) {
	c := &r.s[s]
	requests, errors = c.requests.Swap(0), c.errors.Swap(0)
	hist = make([]int64, Buckets)
	for i := range c.buckets {
		hist[i] = c.buckets[i].Swap(0)
	}
	return requests, errors, hist
}

// Flush adds what was counted since the last flush to minute's rows. A
// failed write is logged and its counts are lost (a minute of one gateway):
// retrying would hold the next minute's counts back.
func (r *Recorder) Flush(ctx context.Context, minute time.Time) error {
	q := coredb.New(r.pool)
	minute = minute.UTC().Truncate(time.Minute)
	var firstErr error
	for _, s := range Surfaces() {
		requests, errors, hist := r.take(s)
		if requests == 0 {
			continue
		}
		err := q.AddSLAMinute(ctx, coredb.AddSLAMinuteParams{Surface: s.String(),
			Minute:   pgtype.Timestamptz{Time: minute, Valid: true},
			Requests: requests, Errors: errors, Latency: hist})
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// Run flushes just after each minute ends, into the minute that ended, and
// once more when ctx ends, into the current minute.
func (r *Recorder) Run(ctx context.Context) {
	for {
		now := r.now()
		next := now.Truncate(time.Minute).Add(time.Minute)
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if err := r.Flush(fctx, r.now()); err != nil {
				r.log.Warn("sla: cannot record the last minute's outcomes", "error", err)
			}
			cancel()
			return
		case <-time.After(next.Sub(now)):
		}
		if err := r.Flush(ctx, next.Add(-time.Minute)); err != nil && ctx.Err() == nil {
			r.log.Warn("sla: cannot record a minute's outcomes", "error", err)
		}
	}
}

// Window is a surface's measure over a window.
type Window struct {
	Requests     int64   `json:"requests"`
	Availability float64 `json:"availability"`
	LatencyP99Ms float64 `json:"latency_p99_ms"`
}

// Windows are the windows the SLA reports, by name.
var Windows = []struct {
	Name string
	Span time.Duration
}{{"1h", time.Hour}, {"24h", 24 * time.Hour}, {"30d", 30 * 24 * time.Hour}}

// Measure is one window's measure of every surface: availability is the
// share of requests without a platform fault (1 when there were none).
func Measure(rows []coredb.SLAWindowRow) map[Surface]Window {
	out := map[Surface]Window{}
	for _, s := range Surfaces() {
		out[s] = Window{Availability: 1}
	}
	for _, row := range rows {
		s := surfaceNamed(row.Surface)
		if s == None {
			continue
		}
		w := Window{Requests: row.Requests, Availability: 1, LatencyP99Ms: P99(row.Latency)}
		if row.Requests > 0 {
			w.Availability = float64(row.Requests-row.Errors) / float64(row.Requests)
		}
		out[s] = w
	}
	return out
}

func surfaceNamed(name string) Surface {
	for i, n := range surfaceNames {
		if n == name {
			return Surface(i)
		}
	}
	return None
}

// Since reads every surface's measure since a time.
func Since(ctx context.Context, pool *pgxpool.Pool, since time.Time) (map[Surface]Window, error) {
	rows, err := coredb.New(pool).SLAWindow(ctx, pgtype.Timestamptz{Time: since, Valid: true})
	if err != nil {
		return nil, err
	}
	return Measure(rows), nil
}
