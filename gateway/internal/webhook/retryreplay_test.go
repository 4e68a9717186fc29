package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/webhook"
	webhookv1 "github.com/svcplatform/svc/gen/svc/webhook/v1"
)

// A receiver answering 503 with "Retry-After: 2" hears nothing more for
// those 2 seconds, not even another event that is due meanwhile; then the
// failed delivery is retried at once (the 10-second schedule would come
// much later) and the other event follows.
func TestA503WithRetryAfterSilencesTheEndpointForThatLong(t *testing.T) {
	t.Parallel()
	b := setup(t)
	type request struct {
		at    time.Time
		event string
	}
	var (
		mu   sync.Mutex
		reqs []request
	)
	srv := serveHook(t, func(w http.ResponseWriter, r *http.Request, raw []byte) {
		var body struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(raw, &body)
		mu.Lock()
		reqs = append(reqs, request{time.Now(), body.ID})
		first := len(reqs) == 1
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "2")
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
		}
	})
	seen := func() []request {
		mu.Lock()
		defer mu.Unlock()
		return append([]request(nil), reqs...)
	}
	b.subscribe(t, srv, webhook.EventBookPostCreated)
	run(t, b.svc)
	one := b.emit(t, b.pageEvent(1))[0]
	eventually(t, 10*time.Second, "the endpoint paused", func() bool {
		var until *time.Time
		if err := b.Pool.QueryRow(context.Background(),
			`SELECT paused_until FROM core.webhook_subscriptions WHERE app_id = $1`, b.App.ID).Scan(&until); err != nil {
			t.Fatal(err)
		}
		return until != nil
	})
	// Due now, but the endpoint is paused. (An event already on its way
	// when the 503 came back is not stopped: the pause starts with the
	// answer.)
	two := b.emit(t, b.pageEvent(2))[0]
	eventually(t, 10*time.Second, "both events delivered", func() bool { return len(seen()) == 3 })

	got := seen()
	if got[0].event != one {
		t.Fatalf("first request for %s, want %s", got[0].event, one)
	}
	for _, r := range got[1:] {
		if wait := r.at.Sub(got[0].at); wait < 2*time.Second {
			t.Errorf("a request for %s came %s after the 503 with Retry-After: 2", r.event, wait)
		}
	}
	retried := false
	for _, r := range got[1:] {
		if r.event == one {
			retried = true
			if wait := r.at.Sub(got[0].at); wait > 8*time.Second {
				t.Errorf("the retry came %s later: the schedule's, not the Retry-After", wait)
			}
		}
	}
	if !retried || (got[1].event != two && got[2].event != two) {
		t.Errorf("requests %v; want the retry of %s and %s", got, one, two)
	}
}

// A replay of a time range sends again the deliveries that failed for good
// (as new deliveries of the same events) and leaves the delivered ones
// alone.
func TestAReplayOfATimeRangeResendsTheFailedDeliveries(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *webhook.Options) {
		o.RetrySchedule = []time.Duration{50 * time.Millisecond, 50 * time.Millisecond}
	})
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	rcv.status.Store(500)
	run(t, b.svc)
	start := time.Now().Add(-time.Second).UTC().Format(time.RFC3339)
	failed := b.emit(t, b.pageEvent(1), b.pageEvent(2))
	eventually(t, 10*time.Second, "both deliveries failed", func() bool {
		return len(b.deliveries(t, &webhookv1.ListDeliveriesRequest{Status: webhook.StatusFailed})) == 2
	})
	rcv.status.Store(0)
	ok := b.emit(t, b.pageEvent(3))[0]
	eventually(t, 10*time.Second, "the third event delivered", func() bool { return len(rcv.byEvent()[ok]) == 1 })

	rr, e := call[*webhookv1.ReplayDeliveriesResponse](t, b, "ReplayDeliveries", b.appKey,
		&webhookv1.ReplayDeliveriesRequest{AppId: b.App.ID, Since: start, Status: webhook.StatusFailed})
	if e != nil || rr.GetReplayed() != 2 {
		t.Fatalf("replay = %v, %v; want the 2 failed deliveries", rr, e)
	}
	eventually(t, 10*time.Second, "the failed events delivered", func() bool {
		by := rcv.byEvent()
		return len(by[failed[0]]) == 1 && len(by[failed[1]]) == 1
	})
	time.Sleep(200 * time.Millisecond)
	if n := len(rcv.byEvent()[ok]); n != 1 {
		t.Errorf("the delivered event arrived %d times, want once", n)
	}
	// Outcomes are recorded after the receiver answered, in batches.
	succeeded := func() int {
		return len(b.deliveries(t, &webhookv1.ListDeliveriesRequest{Status: webhook.StatusSucceeded}))
	}
	eventually(t, 10*time.Second, "three deliveries recorded as succeeded", func() bool { return succeeded() >= 3 })
	if n := succeeded(); n != 3 {
		t.Errorf("%d succeeded deliveries, want 3 (two replays and the third event)", n)
	}
}
