package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/svcplatform/svc/gateway/internal/webhook"
	webhookv1 "github.com/svcplatform/svc/gen/svc/webhook/v1"
	"github.com/svcplatform/svc/sdk/event"
)

// Every delivery carries Standard Webhooks headers that the reference
// library verifies with the app's client secret; during a rotation the
// signature verifies with the old secret and with the new one.
func TestStandardWebhooksSignaturesVerifyWithTheReferenceLibrary(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	run(t, b.svc)
	first := b.emit(t, b.pageEvent(1))[0]
	eventually(t, 10*time.Second, "the first event delivered", func() bool { return len(rcv.byEvent()[first]) == 1 })

	d := rcv.byEvent()[first][0]
	if d.Header.Get("webhook-id") != first {
		t.Errorf("webhook-id = %q, want the event id %q", d.Header.Get("webhook-id"), first)
	}
	wh, err := standardwebhooks.NewWebhookRaw([]byte(b.App.ClientSecret))
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(d.Raw, d.Header); err != nil {
		t.Fatalf("the reference library refuses our signature: %v (headers %v)", err, d.Header)
	}
	other, _ := standardwebhooks.NewWebhookRaw([]byte("not-the-secret"))
	if other.Verify(d.Raw, d.Header) == nil {
		t.Fatal("a wrong secret verifies")
	}

	// The receiver restarted with a new X-Svc key for the new secret; both
	// the old and the new Standard Webhooks key verify.
	rotated, err := b.IDs.Apps.RotateClientSecret(context.Background(), b.App.ID)
	if err != nil {
		t.Fatal(err)
	}
	previous := b.App.ClientSecret
	rcv.secret = rotated.Value
	second := b.emit(t, b.pageEvent(2))[0]
	eventually(t, 10*time.Second, "the second event delivered", func() bool { return len(rcv.byEvent()[second]) == 1 })
	d = rcv.byEvent()[second][0]
	for _, secret := range []string{rotated.Value, previous} {
		wh, _ := standardwebhooks.NewWebhookRaw([]byte(secret))
		if err := wh.Verify(d.Raw, d.Header); err != nil {
			t.Errorf("during the overlap the key %q… does not verify: %v (webhook-signature %q)", secret[:10], err, d.Header.Get("webhook-signature"))
		}
	}
}

// A receiver answering 410 Gone disables its endpoint at once; later
// events are held, and a replay of the range sends them once the
// subscription is saved again.
func TestGoneDisablesTheEndpointAndHoldsEventsUntilReplayed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	rcv.status.Store(http.StatusGone)
	run(t, b.svc)
	start := time.Now().Add(-time.Second).UTC().Format(time.RFC3339)
	b.emit(t, b.pageEvent(1))
	eventually(t, 10*time.Second, "the 410 holds the delivery", func() bool {
		return len(b.deliveries(t, &webhookv1.ListDeliveriesRequest{Status: webhook.StatusHeld})) == 1
	})
	res, e := call[*webhookv1.ListSubscriptionsResponse](t, b, "ListSubscriptions", b.appKey, &webhookv1.ListSubscriptionsRequest{AppId: b.App.ID})
	if e != nil || res.GetData()[0].GetActive() {
		t.Fatalf("after a 410 the endpoint is still active: %v %v", res, e)
	}
	if posts := rcv.posts.Load(); posts != 1 {
		t.Fatalf("%d requests after a 410, want 1 (no retry)", posts)
	}
	b.emit(t, b.pageEvent(2), b.pageEvent(3))
	eventually(t, 5*time.Second, "events of a disabled endpoint are held", func() bool {
		return len(b.deliveries(t, &webhookv1.ListDeliveriesRequest{Status: webhook.StatusHeld})) == 3
	})

	t.Run("a replay range is checked, naming the field", func(t *testing.T) {
		for _, req := range []*webhookv1.ReplayDeliveriesRequest{
			{AppId: b.App.ID},
			{AppId: b.App.ID, Since: "yesterday"},
			{AppId: b.App.ID, Since: start, Until: "2000-01-01T00:00:00Z"},
		} {
			_, e := call[*webhookv1.ReplayDeliveriesResponse](t, b, "ReplayDeliveries", b.appKey, req)
			if e == nil || e.HTTPStatus != 400 || e.Code != 100 {
				t.Errorf("replay %v = %v; want 400/100", req, e)
			}
		}
	})

	rcv.status.Store(0)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated) // enables it again
	rr, e := call[*webhookv1.ReplayDeliveriesResponse](t, b, "ReplayDeliveries", b.appKey,
		&webhookv1.ReplayDeliveriesRequest{AppId: b.App.ID, Since: start})
	if e != nil || rr.GetReplayed() != 3 {
		t.Fatalf("replay = %v, %v; want 3", rr, e)
	}
	eventually(t, 10*time.Second, "the held events delivered", func() bool { return len(rcv.byEvent()) == 3 })
	if n := len(b.deliveries(t, nil)); n != 3 {
		t.Errorf("%d deliveries, want the 3 held ones sent in place", n)
	}
}

// A receiver answering 429 with Retry-After is left alone for that long:
// the failed delivery is due then, and other events to it wait too.
func TestRetryAfterPausesTheEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var posts sync.WaitGroup
	posts.Add(1)
	var once sync.Once
	srv := serveHook(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		once.Do(posts.Done)
		w.Header().Set("Retry-After", "3600")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	})
	b.subscribe(t, srv, webhook.EventBookPostCreated)
	run(t, b.svc)
	b.emit(t, b.pageEvent(1))
	posts.Wait()
	eventually(t, 5*time.Second, "the attempt recorded", func() bool {
		d := b.deliveries(t, nil)
		return len(d) == 1 && len(d[0].GetAttempts()) == 1
	})
	var until *time.Time
	eventually(t, 5*time.Second, "the endpoint paused", func() bool {
		if err := b.Pool.QueryRow(context.Background(),
			`SELECT paused_until FROM core.webhook_subscriptions WHERE app_id = $1`, b.App.ID).Scan(&until); err != nil {
			t.Fatal(err)
		}
		return until != nil
	})
	if time.Until(*until) < 59*time.Minute {
		t.Fatalf("paused until %s, want about an hour from now", until)
	}
	var due time.Time
	if err := b.Pool.QueryRow(context.Background(),
		`SELECT next_attempt_at FROM core.webhook_deliveries WHERE app_id = $1`, b.App.ID).Scan(&due); err != nil {
		t.Fatal(err)
	}
	if time.Until(due) < 59*time.Minute {
		t.Fatalf("the retry is due at %s, want the Retry-After (an hour) rather than the schedule", due)
	}
	// Another event is due now but not sent while the endpoint is paused.
	b.emit(t, b.pageEvent(2))
	eventually(t, 5*time.Second, "the second event's delivery exists", func() bool { return len(b.deliveries(t, nil)) == 2 })
	time.Sleep(300 * time.Millisecond)
	if d := b.deliveries(t, nil)[0]; len(d.GetAttempts()) != 0 || d.GetStatus() != webhook.StatusPending {
		t.Fatalf("a paused endpoint got an attempt: %v", d)
	}
}

// FuzzRetryAfter: any header value gives either no wait or one within the
// bounds.
func FuzzRetryAfter(f *testing.F) {
	for _, v := range []string{"", "0", "120", "99999999999999999999", "Wed, 21 Oct 2015 07:28:00 GMT", "-5", " 7 ", "soon"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		wait, ok := webhook.ParseRetryAfter(v, time.Now())
		if ok && (wait < time.Second || wait > time.Hour) {
			t.Fatalf("Retry-After %q gives %s, outside [1s, 1h]", v, wait)
		}
		if !ok && wait != 0 {
			t.Fatalf("a refused Retry-After %q gives a wait", v)
		}
	})
}

// With ordering "conversation", the events of one conversation arrive one
// at a time in emit order although the receiver fails some deliveries and
// answers others slowly, in random order, under parallel emits to many
// conversations; a conversation whose delivery keeps failing holds back
// only itself.
func TestConversationOrderingUnderFailuresAndParallelSends(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *webhook.Options) { o.Workers = 16 })
	const (
		conversations = 12
		perConv       = 8
		stuck         = "conv-stuck"
	)
	var (
		mu       sync.Mutex
		got      = map[string][]int{}     // key → sequences in receipt order
		inFlight = map[string]int{}       // key → requests being answered
		attempts = map[string]int{}       // event id → attempts
		doneAt   = map[string]time.Time{} // key → when its last event arrived
		stuckOK  time.Time
		release  = make(chan struct{})
	)
	srv := serveHook(t, func(w http.ResponseWriter, r *http.Request, raw []byte) {
		var body struct {
			ID   string `json:"id"`
			Data struct {
				Key      string `json:"key"`
				Sequence int    `json:"sequence"`
			} `json:"data"`
		}
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("body %s: %v", raw, err)
			return
		}
		key := body.Data.Key
		mu.Lock()
		inFlight[key]++
		if inFlight[key] > 1 {
			t.Errorf("two deliveries of %s at once", key)
		}
		attempts[body.ID]++
		n := attempts[body.ID]
		mu.Unlock()
		defer func() { mu.Lock(); inFlight[key]--; mu.Unlock() }()

		if key == stuck && body.Data.Sequence == 1 {
			// Fails until every other conversation got all of its events.
			select {
			case <-release:
			default:
				http.Error(w, "stuck", http.StatusInternalServerError)
				return
			}
		}
		switch rand.IntN(4) {
		case 0:
			if n == 1 { // fail a first attempt now and then
				http.Error(w, "flaky", http.StatusBadGateway)
				return
			}
		case 1:
			time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond) // answer slowly
		}
		mu.Lock()
		got[key] = append(got[key], body.Data.Sequence)
		if len(got[key]) == perConv {
			doneAt[key] = time.Now()
		}
		if key == stuck && body.Data.Sequence == 1 {
			stuckOK = time.Now()
		}
		mu.Unlock()
	})
	if _, e := call[*webhookv1.SaveSubscriptionResponse](t, b, "SaveSubscription", b.appKey, &webhookv1.SaveSubscriptionRequest{
		AppId: b.App.ID, CallbackUrl: srv, Events: []string{webhook.EventSvcchatHandover}, VerifyToken: verifyToken,
		Ordering: webhook.OrderingConversation,
	}); e != nil {
		t.Fatal(e)
	}
	run(t, b.svc)
	run(t, b.newService(t)) // a second gateway claims too

	keys := []string{stuck}
	for i := range conversations - 1 {
		keys = append(keys, fmt.Sprintf("conv-%d", i))
	}
	// Each conversation's producer emits its events in order (as svcchat
	// does under the conversation's lock); the conversations run at once.
	var wg sync.WaitGroup
	for _, key := range keys {
		wg.Go(func() {
			for seq := 1; seq <= perConv; seq++ {
				b.emit(t, event.Event{Type: webhook.EventSvcchatHandover, PageID: b.Page.ID, OrderingKey: key,
					Data: map[string]any{"key": key, "sequence": seq}})
			}
		})
	}
	wg.Wait()
	eventually(t, 30*time.Second, "every other conversation delivered while one is held", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(doneAt) == conversations-1 && len(got[stuck]) == 0
	})
	close(release)
	eventually(t, 30*time.Second, "the held conversation delivered after it recovers", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return distinctSeqs(got[stuck]) == perConv
	})
	mu.Lock()
	defer mu.Unlock()
	for _, key := range keys {
		// At least once, in order: an attempt whose answer was lost (a
		// timeout under load) is sent again before the next event, so a
		// sequence may repeat, but never go back or skip.
		want := 1
		for _, seq := range got[key] {
			switch seq {
			case want:
				want++
			case want - 1: // the same event again
			default:
				t.Fatalf("%s received in the order %v, want 1…%d (repeats allowed)", key, got[key], perConv)
			}
		}
		if want != perConv+1 {
			t.Fatalf("%s received %v, want 1…%d", key, got[key], perConv)
		}
	}
	for key, at := range doneAt {
		if key != stuck && !at.Before(stuckOK) {
			t.Errorf("%s finished after the stuck conversation recovered: it was held back", key)
		}
	}
}

// serveHook serves a callback on loopback that answers the verification
// handshake and passes POSTs with their body to handle.
func serveHook(t *testing.T, handle func(http.ResponseWriter, *http.Request, []byte)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, r.URL.Query().Get("hub.challenge"))
			return
		}
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		handle(w, r, raw)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String() + "/hook"
}

// distinctSeqs counts the different sequences in seqs.
func distinctSeqs(seqs []int) int {
	seen := map[int]bool{}
	for _, s := range seqs {
		seen[s] = true
	}
	return len(seen)
}
