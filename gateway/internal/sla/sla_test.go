package sla

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/gateway/internal/graph"
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

// Every duration lands in a bucket whose upper bound is above it and at
// most a half above it, and the buckets rise with the duration.
func TestEachDurationFallsInABucketBoundingItWithinAHalf(t *testing.T) {
	t.Parallel()
	prev := 0
	for us := int64(0); us < 1<<28; us = us*17/16 + 1 {
		d := time.Duration(us) * time.Microsecond
		i := bucket(d)
		if i < prev {
			t.Fatalf("%v in bucket %d after bucket %d", d, i, prev)
		}
		prev = i
		ms := float64(us) / 1000
		if i == Buckets-1 {
			if upperMs(i) > ms {
				t.Fatalf("%v in the last bucket, whose lower bound %.3f ms is above it", d, upperMs(i))
			}
			continue
		}
		if up := upperMs(i); up <= ms || up > 1.5*ms+0.002 {
			t.Fatalf("%v in bucket %d bounded by %.4f ms", d, i, up)
		}
	}
	if bucket(time.Hour) != Buckets-1 {
		t.Fatalf("an hour in bucket %d", bucket(time.Hour))
	}
}

// The p99 of summed histograms is the p99 of all the samples, to a bucket:
// what several gateways' minutes give.
func TestP99OfMergedHistogramsIsTheP99OfAllSamples(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	var all []time.Duration
	merged := make([]int64, Buckets)
	for range 3 { // three gateways
		h := make([]int64, Buckets)
		for range 2000 {
			d := time.Duration(r.ExpFloat64()*20*float64(time.Millisecond)) + time.Millisecond
			all = append(all, d)
			h[bucket(d)]++
		}
		for i := range h {
			merged[i] += h[i]
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	exact := float64(all[(len(all)*99+99)/100-1].Microseconds()) / 1000
	got := P99(merged)
	if got < exact || got > exact*1.5+0.1 {
		t.Fatalf("p99 of the merged histograms %.1f ms, of the samples %.3f ms", got, exact)
	}
	if P99(make([]int64, Buckets)) != 0 {
		t.Fatal("the p99 of nothing is not 0")
	}
}

func TestRequestsAreMeasuredOnTheirSurfaceAndOnlyServerErrorsCount(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		path string
		want Surface
	}{
		{"/api/v1/graph", Graph}, {"/api/v1/graphx", None}, {"/oauth/authorize", OAuth}, {"/api/oauth/token", OAuth},
		{"/v1/chat/completions", Completions}, {"/v1/models", Completions}, {"/status", None}, {"/api/v1/platform/sla", None},
	} {
		if got := SurfaceOf(c.path); got != c.want {
			t.Errorf("%s: surface %v, want %v", c.path, got, c.want)
		}
	}
	if GraphPath != graph.Path {
		t.Fatalf("GraphPath %s, the Graph endpoint is at %s", GraphPath, graph.Path)
	}
	for status, want := range map[int]bool{200: false, 400: false, 401: false, 429: false, 500: true, 502: true, 503: true} {
		if Failed(status) != want {
			t.Errorf("status %d failed=%v", status, !want)
		}
	}
}

// Two gateways flushing the same minute add up in one row, the
// histograms bucket by bucket; the windows read them back.
func TestTwoGatewaysMinutesAddUpInOneRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pool(t)
	log := slog.New(slog.DiscardHandler)
	a, b := NewRecorder(p, log), NewRecorder(p, log)
	for range 90 {
		a.Record(Graph, 2*time.Millisecond, false)
	}
	for range 10 {
		b.ObserveHTTP("/api/v1/graph", 503, 3*time.Second)
	}
	b.ObserveHTTP("/api/oauth/token", 200, time.Millisecond)
	b.ObserveHTTP("/status", 500, time.Millisecond) // not measured
	minute := time.Now().Truncate(time.Minute)
	if err := a.Flush(ctx, minute); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(ctx, minute); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := p.QueryRow(ctx, `SELECT count(*) FROM core.sla_minutes WHERE surface = 'graph'`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("%d graph rows (%v), want 1", rows, err)
	}
	got, err := Since(ctx, p, minute.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	g := got[Graph]
	if g.Requests != 100 || g.Availability != 0.9 || g.LatencyP99Ms < 3000 || g.LatencyP99Ms > 4500 {
		t.Fatalf("graph window %+v", g)
	}
	if o := got[OAuth]; o.Requests != 1 || o.Availability != 1 {
		t.Fatalf("oauth window %+v", o)
	}
	if c := got[Completions]; c.Requests != 0 || c.Availability != 1 {
		t.Fatalf("an unused surface's window %+v", c)
	}
	// A flush empties the counters: nothing is added twice.
	if err := a.Flush(ctx, minute); err != nil {
		t.Fatal(err)
	}
	if again, _ := Since(ctx, p, minute.Add(-time.Minute)); again[Graph].Requests != 100 {
		t.Fatalf("after a second flush: %+v", again[Graph])
	}
	// A window starting after the minute does not see it.
	if later, _ := Since(ctx, p, minute.Add(time.Minute)); later[Graph].Requests != 0 {
		t.Fatalf("a later window: %+v", later[Graph])
	}
}

func TestANilRecorderRecordsNothing(t *testing.T) {
	t.Parallel()
	var r *Recorder
	r.Record(Graph, time.Millisecond, true)
	r.ObserveHTTP("/api/v1/graph", 500, time.Millisecond)
	if !slices.Equal(surfaceNames[:], []string{"graph", "oauth", "completions", "webhooks"}) {
		t.Fatal("surfaces renamed: the migration's CHECK names them")
	}
}

// The hot path: what every measured request costs.
func BenchmarkObserveHTTP(b *testing.B) {
	r := NewRecorder(nil, slog.New(slog.DiscardHandler))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.ObserveHTTP("/api/v1/graph", 200, 3*time.Millisecond)
		}
	})
}
