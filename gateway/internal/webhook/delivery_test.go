package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/webhook"
	webhookv1 "github.com/svcplatform/svc/gen/svc/webhook/v1"
	"github.com/svcplatform/svc/sdk/event"
)

func TestEveryEventIsDeliveredSignedWithItsHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated, webhook.EventSvcchatOptIn, webhook.EventWearablesCardDelivered)
	run(t, b.svc)

	var want []event.Event
	for i := range 20 {
		want = append(want, b.pageEvent(i))
	}
	want = append(want,
		event.Event{Type: webhook.EventSvcchatOptIn, PageID: b.Page.ID,
			Data: map[string]any{"pageId": b.Page.ID, "userId": b.Consumer.ID, "purposes": []string{"transactional"}, "source": "mobile"}},
		// An app event without a Page reaches its own app.
		event.Event{Type: webhook.EventWearablesCardDelivered, AppID: b.App.ID,
			Data: map[string]any{"cardId": "c1", "userId": b.Consumer.ID, "deviceId": "d1"}},
	)
	before := time.Now().Add(-time.Second)
	ids := b.emit(t, want...)
	// Not delivered: a type the app did not subscribe to, a Page the app is
	// not linked to, an app event of another app.
	b.emit(t,
		event.Event{Type: webhook.EventSvcchatOptOut, PageID: b.Page.ID, Data: map[string]any{}},
		event.Event{Type: webhook.EventBookPostCreated, PageID: b.OtherPage.ID, Data: map[string]any{}},
		event.Event{Type: webhook.EventWearablesCardDelivered, AppID: "999999999", Data: map[string]any{}},
	)
	// A bound for liveness, not a timing: 25 commits and their deliveries on
	// a machine busy with the whole suite.
	eventually(t, 30*time.Second, "every event delivered", func() bool { return len(rcv.byEvent()) >= len(ids) })
	time.Sleep(200 * time.Millisecond) // let anything unexpected arrive

	got := rcv.byEvent()
	if len(got) != len(ids) {
		t.Fatalf("received %d distinct events, want %d", len(got), len(ids))
	}
	for i, id := range ids {
		ds := got[id]
		if len(ds) != 1 {
			t.Errorf("event %s arrived %d times, want once (the receiver always answered 200)", id, len(ds))
			continue
		}
		d := ds[0]
		if !strings.HasPrefix(d.ID, "whd_") || d.Event != want[i].Type {
			t.Errorf("headers: X-Svc-Delivery %q, X-Svc-Event %q; want whd_… and %s", d.ID, d.Event, want[i].Type)
		}
		ts, err := strconv.ParseInt(d.Timestamp, 10, 64)
		if err != nil || time.Unix(ts, 0).Before(before) || time.Unix(ts, 0).After(time.Now().Add(time.Second)) {
			t.Errorf("X-Svc-Timestamp %q is not the time of sending", d.Timestamp)
		}
		body := d.Body
		if body.ID != id || body.Type != want[i].Type || body.APIVersion != "v1" || body.AppID != b.App.ID {
			t.Errorf("body %s: id/type/api_version/app_id wrong", d.Raw)
		}
		if created := time.Unix(body.Created, 0); created.Before(before) || created.After(time.Now()) {
			t.Errorf("body %s: created %d is not the event's time", d.Raw, body.Created)
		}
		wantPage := want[i].PageID
		if (body.PageID == nil && wantPage != "") || (body.PageID != nil && *body.PageID != wantPage) {
			t.Errorf("body %s: page_id, want %q", d.Raw, wantPage)
		}
		wantData, _ := json.Marshal(want[i].Data)
		if !jsonEqual(t, body.Data, wantData) {
			t.Errorf("body data %s, want %s", body.Data, wantData)
		}
	}
	if !strings.Contains(string(got[ids[0]][0].Raw), `"content":"post <a>"`) {
		t.Errorf("body %s: text is escaped or reordered oddly", got[ids[0]][0].Raw)
	}
	// Outcomes are recorded after the receiver answered, in batches: wait
	// for the records, then check each.
	eventually(t, 30*time.Second, "every delivery recorded", func() bool {
		for _, d := range b.deliveries(t, nil) {
			if d.GetStatus() == webhook.StatusPending {
				return false
			}
		}
		return true
	})
	for _, d := range b.deliveries(t, nil) {
		if d.GetStatus() != webhook.StatusSucceeded || len(d.GetAttempts()) != 1 || d.GetAttempts()[0].GetStatusCode() != 200 {
			t.Errorf("delivery %s: status %s, attempts %v", d.GetId(), d.GetStatus(), d.GetAttempts())
		}
	}
}

func jsonEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}

func TestReceiverDownThenUpLosesNoEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	rcv.stop()
	run(t, b.svc)

	var evs []event.Event
	for i := range 30 {
		evs = append(evs, b.pageEvent(i))
	}
	ids := b.emit(t, evs...)
	eventually(t, 10*time.Second, "failed attempts logged while the receiver is down", func() bool {
		ds := b.deliveries(t, nil)
		if len(ds) != len(ids) {
			return false
		}
		for _, d := range ds {
			if len(d.GetAttempts()) < 2 {
				return false
			}
		}
		return true
	})
	rcv.start()
	eventually(t, 60*time.Second, "every event delivered once the receiver is up", func() bool { return len(rcv.byEvent()) == len(ids) })

	for _, id := range ids {
		ds := rcv.byEvent()[id]
		if len(ds) == 0 {
			t.Errorf("event %s lost", id)
		}
		for _, d := range ds[1:] {
			if d.ID != ds[0].ID {
				t.Errorf("event %s arrived in deliveries %s and %s: duplicates must share X-Svc-Delivery", id, ds[0].ID, d.ID)
			}
		}
	}
	eventually(t, 5*time.Second, "every delivery succeeded", func() bool {
		return len(b.deliveries(t, &webhookv1.ListDeliveriesRequest{Status: webhook.StatusSucceeded})) == len(ids)
	})
	d := b.deliveries(t, nil)[0]
	first := d.GetAttempts()[0]
	if first.GetStatusCode() != 0 || !strings.Contains(first.GetError(), "connection refused") {
		t.Errorf("first attempt while down = %v, want status 0 and connection refused", first)
	}
	last := d.GetAttempts()[len(d.GetAttempts())-1]
	if last.GetStatusCode() != 200 || last.GetError() != "" || last.GetResponseExcerpt() != `{"ok":true}` {
		t.Errorf("last attempt = %v, want 200 with the receiver's answer as excerpt", last)
	}
}

func TestStoppedGatewayDeliversAfterTheNextRun(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *webhook.Options) { o.DrainTimeout = 200 * time.Millisecond })
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	release := rcv.holdRequests()
	stop := run(t, b.svc)

	ids := b.emit(t, b.pageEvent(1))
	eventually(t, 5*time.Second, "the slow receiver holds the request", func() bool { return rcv.holding.Load() == 1 })
	stop() // the worker is cut mid-delivery
	release()
	if n := len(rcv.received()); n != 0 {
		t.Fatalf("the receiver accepted %d deliveries before the new run", n)
	}
	ds := b.deliveries(t, nil)
	if len(ds) != 1 || ds[0].GetStatus() != webhook.StatusPending || len(ds[0].GetAttempts()) != 1 ||
		!strings.HasPrefix(ds[0].GetAttempts()[0].GetError(), "interrupted") {
		t.Fatalf("after the stop: %v, want one pending delivery with an interrupted attempt", ds)
	}

	run(t, b.newService(t))
	eventually(t, 5*time.Second, "delivered by the next run", func() bool { return len(rcv.received()) == 1 })
	got := rcv.received()[0]
	if got.Body.ID != ids[0] || got.ID != ds[0].GetId() {
		t.Errorf("delivered event %s as %s, want event %s as the same delivery %s", got.Body.ID, got.ID, ids[0], ds[0].GetId())
	}
}

func TestCrashedGatewaysClaimsComeBackWhenTheLeaseEnds(t *testing.T) {
	t.Parallel()
	const lease = 1500 * time.Millisecond
	b := setup(t)
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	// Dispatch only: a Run stopped as soon as the delivery exists.
	stop := run(t, b.svc)
	b.emit(t, b.pageEvent(1))
	rcv.holdRequests() // never released: this "gateway" dies holding the request
	eventually(t, 5*time.Second, "the first gateway is mid-attempt", func() bool { return rcv.holding.Load() == 1 })
	stop()
	// A gateway that claimed and then died without a word: claim directly.
	// The lease starts at the claim's transaction time, which is no earlier
	// than beforeClaim (same clock), so the lease ends no earlier than
	// beforeClaim+lease. Timing from after the call would count the call's
	// own latency against the lease.
	beforeClaim := time.Now()
	rows, err := coredb.New(b.Pool).ClaimDeliveries(context.Background(), coredb.ClaimDeliveriesParams{
		MaxRows: 10, ScanRows: 10, AppShare: 10, LeaseMs: lease.Milliseconds(), LeaseToken: 42,
	})
	if err != nil || len(rows) != 1 {
		t.Fatalf("claim as the crashed gateway: %d rows, %v", len(rows), err)
	}

	rcv2 := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv2.URL(), webhook.EventBookPostCreated)
	run(t, b.newService(t))
	eventually(t, 10*time.Second, "delivered after the lease ended", func() bool { return len(rcv2.received()) == 1 })
	if since := time.Since(beforeClaim); since < lease {
		t.Errorf("delivered %s after the claim, inside the crashed gateway's %s lease", since, lease)
	}
}

func TestRolledBackTransactionEmitsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	run(t, b.svc)

	errRollback := errors.New("the change failed")
	err := pgx.BeginFunc(context.Background(), b.Pool, func(tx pgx.Tx) error {
		if _, err := event.Emit(context.Background(), tx, b.pageEvent(1)); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
	marker := b.emit(t, b.pageEvent(2))[0]
	eventually(t, 5*time.Second, "the committed event delivered", func() bool { return len(rcv.byEvent()[marker]) == 1 })
	time.Sleep(100 * time.Millisecond)
	if got := rcv.received(); len(got) != 1 {
		t.Fatalf("received %d deliveries, want only the committed event's", len(got))
	}
	if n := len(b.deliveries(t, nil)); n != 1 {
		t.Fatalf("%d deliveries exist, want 1", n)
	}
}

func TestTwoGatewaysShareTheWorkWithoutDoubleDelivery(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, b.App.ClientSecret)
	rcv.delay = 5 * time.Millisecond // so that one gateway alone cannot keep up
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	for _, name := range []string{"one", "two"} {
		run(t, b.newService(t, func(o *webhook.Options) {
			o.Workers = 2
			o.PublicURL = "https://" + name + ".example"
		}))
	}
	const n = 150
	var evs []event.Event
	for i := range n {
		evs = append(evs, b.pageEvent(i))
	}
	b.emit(t, evs...)
	eventually(t, 20*time.Second, "every event delivered", func() bool { return len(rcv.byEvent()) == n })
	time.Sleep(100 * time.Millisecond)

	perDelivery := map[string]int{}
	perGateway := map[string]int{}
	for _, d := range rcv.received() {
		perDelivery[d.ID]++
		perGateway[d.UserAgent]++
	}
	for id, c := range perDelivery {
		if c != 1 {
			t.Errorf("delivery %s was sent %d times; the receiver always answered 200", id, c)
		}
	}
	if len(perDelivery) != n || rcv.posts.Load() != n {
		t.Errorf("%d deliveries, %d requests; want %d of each", len(perDelivery), rcv.posts.Load(), n)
	}
	if len(perGateway) != 2 {
		t.Errorf("requests per gateway: %v; want both gateways to share the work", perGateway)
	}
	t.Logf("requests per gateway: %v", perGateway)
}

func TestDeliveryFailsAfterItsLastRetry(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *webhook.Options) {
		o.RetrySchedule = []time.Duration{50 * time.Millisecond, 50 * time.Millisecond}
	})
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	rcv.status.Store(500)
	run(t, b.svc)
	b.emit(t, b.pageEvent(1))
	eventually(t, 5*time.Second, "the delivery failed", func() bool {
		return len(b.deliveries(t, &webhookv1.ListDeliveriesRequest{Status: webhook.StatusFailed})) == 1
	})
	d := b.deliveries(t, nil)[0]
	if len(d.GetAttempts()) != 3 {
		t.Fatalf("%d attempts, want 3 (the first and two retries)", len(d.GetAttempts()))
	}
	for _, a := range d.GetAttempts() {
		if a.GetStatusCode() != 500 || !strings.Contains(a.GetError(), "HTTP 500") || !strings.Contains(a.GetResponseExcerpt(), "not now") {
			t.Errorf("attempt %v, want 500 with the error and the response excerpt", a)
		}
		if _, err := time.Parse(time.RFC3339, a.GetAt()); err != nil {
			t.Errorf("attempt at %q is not RFC 3339", a.GetAt())
		}
	}
	if rcv.posts.Load() != 3 {
		t.Errorf("the receiver got %d requests, want 3", rcv.posts.Load())
	}
}

func TestEndpointIsDisabledAfterFailingForTheWholeWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *webhook.Options) { o.FailureWindow = 400 * time.Millisecond })
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	rcv.status.Store(503)
	run(t, b.svc)
	b.emit(t, b.pageEvent(1), b.pageEvent(2))

	active := func() bool {
		res, e := call[*webhookv1.ListSubscriptionsResponse](t, b, "ListSubscriptions", b.appKey,
			&webhookv1.ListSubscriptionsRequest{AppId: b.App.ID})
		if e != nil || len(res.GetData()) != 1 {
			t.Fatalf("list subscriptions: %v %v", res, e)
		}
		return res.GetData()[0].GetActive()
	}
	eventually(t, 10*time.Second, "the endpoint is disabled", func() bool { return !active() })
	// Pending deliveries stop and are held; new events are held too, not
	// sent.
	eventually(t, 5*time.Second, "pending deliveries are held", func() bool {
		return len(b.deliveries(t, &webhookv1.ListDeliveriesRequest{Status: webhook.StatusPending})) == 0
	})
	posts := rcv.posts.Load()
	b.emit(t, b.pageEvent(3))
	eventually(t, 5*time.Second, "the new event's delivery is held", func() bool {
		return len(b.deliveries(t, &webhookv1.ListDeliveriesRequest{Status: webhook.StatusHeld})) == 3
	})
	time.Sleep(300 * time.Millisecond)
	if rcv.posts.Load() != posts || len(b.deliveries(t, nil)) != 3 {
		t.Fatalf("a disabled endpoint still gets requests, or events were not held")
	}
	all := b.deliveries(t, nil) // newest first: the last one was held at once, without an attempt
	if len(all[0].GetAttempts()) != 0 {
		t.Errorf("the event after the disabling was attempted: %v", all[0].GetAttempts())
	}
	last := all[len(all)-1].GetAttempts()
	if e := last[len(last)-1].GetError(); !strings.Contains(e, "disabled") {
		t.Errorf("last attempt error %q, want it to say the endpoint is disabled", e)
	}

	// Saving the subscription again enables it.
	rcv.status.Store(0)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	if !active() {
		t.Fatal("saving did not enable the endpoint")
	}
	id := b.emit(t, b.pageEvent(4))[0]
	eventually(t, 5*time.Second, "delivered after re-enabling", func() bool { return len(rcv.byEvent()[id]) == 1 })

	// The held events wait for a replay of their time range.
	res, e := call[*webhookv1.ReplayDeliveriesResponse](t, b, "ReplayDeliveries", b.appKey, &webhookv1.ReplayDeliveriesRequest{
		AppId: b.App.ID, Since: time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), Status: webhook.StatusHeld})
	if e != nil || res.GetReplayed() != 3 {
		t.Fatalf("replay held = %v, %v; want 3 replayed", res, e)
	}
	eventually(t, 5*time.Second, "the held events delivered after the replay", func() bool { return len(rcv.byEvent()) == 4 })
}

func TestEndpointThatSucceedsSometimesStaysEnabled(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *webhook.Options) { o.FailureWindow = 300 * time.Millisecond })
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	run(t, b.svc)
	rcv.status.Store(500)
	b.emit(t, b.pageEvent(1))
	eventually(t, 5*time.Second, "a failed attempt", func() bool { return rcv.posts.Load() >= 1 })
	rcv.status.Store(0)
	id := b.emit(t, b.pageEvent(2))[0]
	eventually(t, 5*time.Second, "a success", func() bool { return len(rcv.byEvent()[id]) == 1 })
	time.Sleep(400 * time.Millisecond)
	res, _ := call[*webhookv1.ListSubscriptionsResponse](t, b, "ListSubscriptions", b.appKey,
		&webhookv1.ListSubscriptionsRequest{AppId: b.App.ID})
	if !res.GetData()[0].GetActive() {
		t.Fatal("an endpoint with a success inside the window was disabled")
	}
}

func TestRotatedSecretSignsLaterDeliveries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, "rotated-secret")
	rcv.echo = func(c string) string { return c }
	if _, err := b.IDs.Apps.SetClientSecret(context.Background(), b.App.ID, "rotated-secret"); err != nil {
		t.Fatal(err)
	}
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	run(t, b.svc)
	id := b.emit(t, b.pageEvent(1))[0]
	eventually(t, 5*time.Second, "delivered with the new secret", func() bool { return len(rcv.byEvent()[id]) == 1 })
}

func TestSlowEndpointHoldsNoMoreThanItsAppShareOfTheWorkers(t *testing.T) {
	t.Parallel()
	const workers, share, events = 4, 2, 10
	b := setup(t, func(o *webhook.Options) {
		o.Workers, o.AppShare = workers, share
		o.AttemptTimeout, o.DrainTimeout = time.Minute, 100*time.Millisecond
	})
	// The World app's endpoint hangs.
	slow := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, slow.URL(), webhook.EventBookPostCreated)
	release := slow.holdRequests()
	defer release()

	// Another app of the same Page answers at once.
	_, fast := b.otherApp(t, "Fast", []string{"book"}, nil, webhook.EventBookPostCreated)

	evs := make([]event.Event, events)
	for i := range evs {
		evs[i] = b.pageEvent(i)
	}
	b.emit(t, evs...)
	run(t, b.svc)
	// Without the share, the hanging endpoint takes every worker after a
	// few events and the other app waits a whole attempt timeout.
	eventually(t, 30*time.Second, "every event delivered to the fast app while the slow one hangs",
		func() bool { return len(fast.received()) == events })
	eventually(t, 5*time.Second, "the slow endpoint holding its share", func() bool { return slow.holding.Load() == share })
	if peak := slow.peak.Load(); peak != share {
		t.Errorf("the slow endpoint held %d requests at once, want its share %d", peak, share)
	}
}

func TestAppWithoutASigningSecretIsNotSentUnsigned(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// An app made while identity kept no sealed secret (no Sealer).
	other, err := identity.New(b.Pool).Apps.CreateApp(context.Background(), identity.NewApp{Name: "Unsigned", AdminID: b.Owner.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.IDs.Apps.LinkPage(context.Background(), other.ID, b.Page.ID, []string{"book"}); err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t, other.ClientSecret)
	key := b.appKey
	key.AppID = other.ID
	if _, e := call[*webhookv1.SaveSubscriptionResponse](t, b, "SaveSubscription", key, &webhookv1.SaveSubscriptionRequest{
		AppId: other.ID, CallbackUrl: rcv.URL(), Events: []string{webhook.EventBookPostCreated}, VerifyToken: verifyToken,
	}); e != nil {
		t.Fatal(e)
	}
	run(t, b.svc)
	b.emit(t, b.pageEvent(1))
	eventually(t, 5*time.Second, "an attempt logged", func() bool {
		res, _ := call[*webhookv1.ListDeliveriesResponse](t, b, "ListDeliveries", key, &webhookv1.ListDeliveriesRequest{AppId: other.ID})
		return len(res.GetData()) == 1 && len(res.GetData()[0].GetAttempts()) > 0 &&
			strings.Contains(res.GetData()[0].GetAttempts()[0].GetError(), "no signing secret")
	})
	if rcv.posts.Load() != 0 {
		t.Fatal("a delivery was sent without a signing secret")
	}
}

func TestReplayCreatesANewDeliveryOfTheSameEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	run(t, b.svc)
	id := b.emit(t, b.pageEvent(1))[0]
	eventually(t, 5*time.Second, "delivered", func() bool { return len(rcv.received()) == 1 })
	first := rcv.received()[0]

	res, e := call[*webhookv1.ReplayDeliveryResponse](t, b, "ReplayDelivery", b.appKey,
		&webhookv1.ReplayDeliveryRequest{DeliveryId: first.ID})
	if e != nil {
		t.Fatal(e)
	}
	if res.GetId() == first.ID || !strings.HasPrefix(res.GetId(), "whd_") {
		t.Fatalf("replay id %q, want a new delivery id", res.GetId())
	}
	eventually(t, 5*time.Second, "replayed", func() bool { return len(rcv.received()) == 2 })
	again := rcv.received()[1]
	if again.ID != res.GetId() || again.Body.ID != id || string(again.Raw) != string(first.Raw) {
		t.Errorf("replay delivered %s as %s (%s), want event %s as %s with the same body", again.Body.ID, again.ID, again.Raw, id, res.GetId())
	}
	if ds := b.deliveries(t, nil); len(ds) != 2 || ds[0].GetId() != res.GetId() || ds[0].GetEventId() != id {
		t.Errorf("delivery log %v, want the replay listed first with the same event id", ds)
	}
	_, e = call[*webhookv1.ReplayDeliveryResponse](t, b, "ReplayDelivery", b.appKey,
		&webhookv1.ReplayDeliveryRequest{DeliveryId: "whd_00000000000000000000000000000000"})
	sdkErr(t, e, 404, 100, 33, "")
}

func TestTestEventBypassesTheEventFilter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	run(t, b.svc)
	res, e := call[*webhookv1.SendTestEventResponse](t, b, "SendTestEvent", b.appKey,
		&webhookv1.SendTestEventRequest{AppId: b.App.ID, Type: webhook.EventSvcchatHandover})
	if e != nil {
		t.Fatal(e)
	}
	if !strings.HasPrefix(res.GetId(), "evt_") {
		t.Fatalf("test event id %q", res.GetId())
	}
	eventually(t, 5*time.Second, "test event delivered", func() bool { return len(rcv.received()) == 1 })
	got := rcv.received()[0]
	if got.Body.ID != res.GetId() || got.Body.Type != webhook.EventSvcchatHandover || got.Event != webhook.EventSvcchatHandover ||
		string(got.Body.Data) != `{"test":true}` || got.Body.AppID != b.App.ID {
		t.Errorf("test event body %s", got.Raw)
	}

	_, e = call[*webhookv1.SendTestEventResponse](t, b, "SendTestEvent", b.appKey,
		&webhookv1.SendTestEventRequest{AppId: b.App.ID, Type: "page.message.deleted"})
	sdkErr(t, e, 400, 100, 0, "type")
	if _, e := call[*webhookv1.DeleteSubscriptionResponse](t, b, "DeleteSubscription", b.appKey,
		&webhookv1.DeleteSubscriptionRequest{AppId: b.App.ID}); e != nil {
		t.Fatal(e)
	}
	_, e = call[*webhookv1.SendTestEventResponse](t, b, "SendTestEvent", b.appKey,
		&webhookv1.SendTestEventRequest{AppId: b.App.ID, Type: webhook.EventSvcchatHandover})
	if e == nil || e.HTTPStatus != 400 || e.Code != 100 {
		t.Errorf("test event without a subscription: %v, want 400/100", e)
	}
}

func TestDeletedSubscriptionStopsPendingDeliveries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	rcv.status.Store(500)
	run(t, b.svc)
	b.emit(t, b.pageEvent(1))
	eventually(t, 5*time.Second, "a failed attempt", func() bool { return rcv.posts.Load() >= 1 })
	if _, e := call[*webhookv1.DeleteSubscriptionResponse](t, b, "DeleteSubscription", b.appKey,
		&webhookv1.DeleteSubscriptionRequest{AppId: b.App.ID}); e != nil {
		t.Fatal(e)
	}
	eventually(t, 5*time.Second, "the delivery failed", func() bool {
		ds := b.deliveries(t, &webhookv1.ListDeliveriesRequest{Status: webhook.StatusFailed})
		return len(ds) == 1 && strings.Contains(ds[0].GetAttempts()[len(ds[0].GetAttempts())-1].GetError(), "no webhook subscription")
	})
	res, _ := call[*webhookv1.ListSubscriptionsResponse](t, b, "ListSubscriptions", b.appKey,
		&webhookv1.ListSubscriptionsRequest{AppId: b.App.ID})
	if len(res.GetData()) != 0 {
		t.Errorf("subscriptions after delete: %v", res.GetData())
	}
}

func TestDeliveryLogFiltersAndPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated, webhook.EventSvcchatOptIn)
	run(t, b.svc)
	var evs []event.Event
	for i := range 5 {
		evs = append(evs, b.pageEvent(i), event.Event{Type: webhook.EventSvcchatOptIn, PageID: b.Page.ID, Data: map[string]int{"n": i}})
	}
	ids := b.emit(t, evs...)
	eventually(t, 5*time.Second, "delivered", func() bool { return len(rcv.received()) == len(ids) })
	eventually(t, 5*time.Second, "recorded", func() bool {
		return len(b.deliveries(t, &webhookv1.ListDeliveriesRequest{Status: webhook.StatusSucceeded})) == len(ids)
	})

	optIns := b.deliveries(t, &webhookv1.ListDeliveriesRequest{EventType: webhook.EventSvcchatOptIn})
	if len(optIns) != 5 {
		t.Fatalf("event_type filter: %d deliveries, want 5", len(optIns))
	}
	for _, d := range optIns {
		if d.GetEventType() != webhook.EventSvcchatOptIn {
			t.Errorf("event_type filter let %s through", d.GetEventType())
		}
	}
	if n := len(b.deliveries(t, &webhookv1.ListDeliveriesRequest{Status: webhook.StatusPending})); n != 0 {
		t.Errorf("status filter: %d pending, want 0", n)
	}

	var seen []string
	req := &webhookv1.ListDeliveriesRequest{AppId: b.App.ID, Limit: 3}
	for page := 0; ; page++ {
		res, e := call[*webhookv1.ListDeliveriesResponse](t, b, "ListDeliveries", b.appKey, req)
		if e != nil {
			t.Fatal(e)
		}
		for _, d := range res.GetData() {
			seen = append(seen, d.GetEventId())
		}
		if !res.GetPaging().GetHasNext() {
			break
		}
		if page > 5 {
			t.Fatal("paging does not end")
		}
		req.After = res.GetPaging().GetAfter()
	}
	if len(seen) != len(ids) {
		t.Fatalf("paged through %d deliveries, want %d", len(seen), len(ids))
	}
	for i, id := range seen {
		if id != ids[len(ids)-1-i] {
			t.Fatalf("page order %v, want newest first %v", seen, ids)
		}
	}
	// Back one page from the last.
	res, _ := call[*webhookv1.ListDeliveriesResponse](t, b, "ListDeliveries", b.appKey,
		&webhookv1.ListDeliveriesRequest{AppId: b.App.ID, Limit: 3, Before: req.After})
	// The last page was fetched after the 9th delivery: the page before it
	// holds the 6th to the 8th.
	var back []string
	for _, d := range res.GetData() {
		back = append(back, d.GetEventId())
	}
	if strings.Join(back, ",") != strings.Join(seen[5:8], ",") {
		t.Errorf("before cursor: %v, want %v", back, seen[5:8])
	}
	_, e := call[*webhookv1.ListDeliveriesResponse](t, b, "ListDeliveries", b.appKey,
		&webhookv1.ListDeliveriesRequest{AppId: b.App.ID, After: "garbage"})
	sdkErr(t, e, 400, 100, 0, "after")
}

func TestBacklogCountsPendingDeliveries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	stop := run(t, b.svc)
	release := rcv.holdRequests()
	defer release()
	b.emit(t, b.pageEvent(1), b.pageEvent(2))
	eventually(t, 5*time.Second, "two pending deliveries", func() bool {
		n, err := b.svc.Backlog(context.Background())
		return err == nil && n == 2
	})
	release()
	eventually(t, 5*time.Second, "no backlog", func() bool {
		n, err := b.svc.Backlog(context.Background())
		return err == nil && n == 0
	})
	if err := b.svc.Run(context.Background()); err == nil {
		t.Error("a second Run of one Service while the first runs was accepted")
	}
	stop()
}

// An event waits in core.outbox_pending from its commit until a dispatch
// takes it; the dispatch writes nothing to its outbox row (migration 0267:
// no second row version per event). A rolled-back event leaves no entry.
func TestDispatchTakesTheEventOffTheQueueAndLeavesItsOutboxRowAsWritten(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	ctx := context.Background()

	errRollback := errors.New("the change failed")
	if err := pgx.BeginFunc(ctx, b.Pool, func(tx pgx.Tx) error {
		if _, err := event.Emit(ctx, tx, b.pageEvent(1)); err != nil {
			return err
		}
		return errRollback
	}); !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
	id := b.emit(t, b.pageEvent(2))[0]
	var queued int
	var before string
	if err := b.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM core.outbox_pending p JOIN core.outbox o USING (seq) WHERE o.id = $1),
		(SELECT ctid::text FROM core.outbox WHERE id = $1)`, id).Scan(&queued, &before); err != nil {
		t.Fatal(err)
	}
	if queued != 1 {
		t.Fatalf("the committed event has %d queue entries before dispatch, want 1", queued)
	}
	var total int
	if err := b.Pool.QueryRow(ctx, `SELECT count(*) FROM core.outbox_pending`).Scan(&total); err != nil || total != 1 {
		t.Fatalf("%d queue entries (%v), want only the committed event's", total, err)
	}

	run(t, b.svc)
	eventually(t, 10*time.Second, "the event delivered", func() bool { return len(rcv.byEvent()[id]) == 1 })
	var after string
	var dispatchedAt *time.Time
	if err := b.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM core.outbox_pending), ctid::text, dispatched_at FROM core.outbox WHERE id = $1`,
		id).Scan(&total, &after, &dispatchedAt); err != nil {
		t.Fatal(err)
	}
	if total != 0 {
		t.Errorf("%d queue entries after the dispatch, want none", total)
	}
	if after != before || dispatchedAt != nil {
		t.Errorf("the outbox row moved from %s to %s (dispatched_at %v): the dispatch rewrote it", before, after, dispatchedAt)
	}
}
