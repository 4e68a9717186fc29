package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/gateway/internal/webhook"
	"github.com/svcplatform/svc/sdk/event"
)

// benchReceiver answers the handshake and 200 to every delivery, as fast
// as it can, calling onBody with each body.
func benchReceiver(b *testing.B, onBody func(raw []byte)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, r.URL.Query().Get("hub.challenge"))
			return
		}
		raw, _ := io.ReadAll(r.Body)
		onBody(raw)
		w.WriteHeader(http.StatusOK)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// benchSetup is a bundle whose Service runs on a pool sized like the
// gateway's, subscribed to a fast local receiver.
func benchSetup(b *testing.B, onBody func([]byte)) (*bundle, *webhook.Service) {
	bb := setup(b)
	svc := bb.newService(b, func(o *webhook.Options) {
		o.Pool = bigPool(b, bb.URL)
		o.RetrySchedule = webhook.DefaultRetrySchedule
	})
	srv := benchReceiver(b, onBody)
	bb.subscribe(b, srv.URL+"/hook", webhook.EventBookPostCreated)
	return bb, svc
}

// BenchmarkDeliveryThroughput measures signed deliveries per second to a
// fast local receiver: b.N events wait in the outbox, then Run dispatches
// and delivers them all.
func BenchmarkDeliveryThroughput(b *testing.B) {
	var received atomic.Int64
	bb, svc := benchSetup(b, func([]byte) { received.Add(1) })
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, bb.Pool, func(tx pgx.Tx) error {
		for i := range b.N {
			if _, err := event.Emit(ctx, tx, bb.pageEvent(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}

	b.ResetTimer()
	start := time.Now()
	stop := run(b, svc)
	for received.Load() < int64(b.N) {
		time.Sleep(time.Millisecond)
	}
	delivered := time.Since(start)
	for {
		n, err := svc.Backlog(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	recorded := time.Since(start)
	b.StopTimer()
	stop()
	b.ReportMetric(float64(b.N)/delivered.Seconds(), "deliveries/s")
	b.ReportMetric(float64(b.N)/recorded.Seconds(), "recorded/s")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkCommitToDeliveryLatency commits events at a steady 1,000 per
// second for 3 seconds and measures the time from each commit's return to
// the receiver holding the event. The scenario runs once whatever b.N: its
// figures are the percentiles, not a time per operation.
func BenchmarkCommitToDeliveryLatency(b *testing.B) {
	const (
		rate     = 1000
		duration = 3 * time.Second
	)
	var (
		mu      sync.Mutex
		arrived = map[string]time.Time{}
	)
	bb, svc := benchSetup(b, func(raw []byte) {
		now := time.Now()
		var body struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(raw, &body)
		mu.Lock()
		if _, dup := arrived[body.ID]; !dup {
			arrived[body.ID] = now
		}
		mu.Unlock()
	})
	emitPool := bigPool(b, bb.URL)
	run(b, svc)

	b.ResetTimer()
	ids, committed, achieved := emitSteadily(b, emitPool, bb, rate, duration)
	latencies := make([]time.Duration, len(ids))
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; i < len(ids); {
		mu.Lock()
		at, ok := arrived[ids[i]]
		mu.Unlock()
		if ok {
			latencies[i] = at.Sub(committed[i])
			i++
			continue
		}
		if time.Now().After(deadline) {
			b.Fatalf("event %d of %d not delivered 30 s after the last commit", i, len(ids))
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.StopTimer()

	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(achieved, "events/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(1), "max-ms")
	b.ReportMetric(0, "ns/op")
}

// emitSteadily commits one event every 1/rate seconds for duration, from
// several connections so that one slow commit does not delay the next, and
// returns the event ids, the time each commit returned, and the rate
// achieved.
func emitSteadily(b *testing.B, pool *pgxpool.Pool, bb *bundle, rate int, duration time.Duration) ([]string, []time.Time, float64) {
	const emitters = 8
	ctx := context.Background()
	total := int(int64(rate) * int64(duration) / int64(time.Second))
	ids := make([]string, total)
	committed := make([]time.Time, total)
	var next atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range emitters {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))))
				err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
					var err error
					ids[i], err = event.Emit(ctx, tx, bb.pageEvent(i))
					return err
				})
				committed[i] = time.Now()
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return ids, committed, float64(total) / time.Since(start).Seconds()
}
