package webhook_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/webhook"
	webhookv1 "github.com/svcplatform/svc/gen/svc/webhook/v1"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/event"
)

// CONTRACT §15: events reach only apps entitled to them.

// messageEvent is a consumer's message to the World's Page.
func (b *bundle) messageEvent(text string) event.Event {
	return event.Event{Type: webhook.EventPageMessageReceived, PageID: b.Page.ID,
		Data: map[string]any{"pageId": b.Page.ID, "userId": b.Consumer.ID, "text": text, "kind": "session"}}
}

// eventTypesOf lists the types of an app's deliveries, oldest first. The
// dispatcher creates every delivery of an event at once, so the list shows
// what fan-out chose even for deliveries not attempted yet.
func (b *bundle) eventTypesOf(t testing.TB, appID string) []string {
	t.Helper()
	res, e := call[*webhookv1.ListDeliveriesResponse](t, b, "ListDeliveries", sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: appID},
		&webhookv1.ListDeliveriesRequest{AppId: appID, Limit: 100})
	if e != nil {
		t.Fatal(e)
	}
	var out []string
	for i := len(res.GetData()) - 1; i >= 0; i-- {
		out = append(out, res.GetData()[i].GetEventType())
	}
	return out
}

// reviewScope records an App Review outcome for an app's scope.
func (b *bundle) reviewScope(t testing.TB, appID, scope, status string) {
	t.Helper()
	if _, err := b.Pool.Exec(context.Background(), `INSERT INTO core.app_scope_reviews (app_id, scope, status) VALUES ($1::bigint, $2, $3)
		ON CONFLICT (app_id, scope) DO UPDATE SET status = excluded.status`, appID, scope, status); err != nil {
		t.Fatal(err)
	}
}

func TestPageEventsReachOnlyAppsWhoseLinkCarriesTheirProduct(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The World app's link carries svcchat and book. BookOnly has svcchat
	// enabled (for other Pages, say), but this Page granted it book only.
	chat := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, chat.URL(), webhook.EventPageMessageReceived, webhook.EventSvcchatOptIn)
	bookOnly, bookRcv := b.otherApp(t, "BookOnly", []string{"book"}, []string{"svcchat", "book"},
		webhook.EventPageMessageReceived, webhook.EventSvcchatOptIn, webhook.EventBookPostCreated)
	run(t, b.svc)

	ids := b.emit(t, b.messageEvent("my address is 1 Elm St"),
		event.Event{Type: webhook.EventSvcchatOptIn, PageID: b.Page.ID, Data: map[string]any{"pageId": b.Page.ID}},
		b.pageEvent(1))
	eventually(t, 10*time.Second, "the message and the opt-in at the svcchat app", func() bool { return len(chat.byEvent()) == 2 })
	// The post is the last event: once it arrived, every earlier one was dispatched.
	eventually(t, 10*time.Second, "the post at the book-only app", func() bool { return len(bookRcv.byEvent()[ids[2]]) == 1 })
	if got := b.eventTypesOf(t, bookOnly.ID); len(got) != 1 || got[0] != webhook.EventBookPostCreated {
		t.Fatalf("the app linked for book only got deliveries of %v, want only %s", got, webhook.EventBookPostCreated)
	}
	if got := b.eventTypesOf(t, b.App.ID); len(got) != 2 {
		t.Fatalf("the app linked with svcchat got deliveries of %v, want the message and the opt-in", got)
	}
}

func TestLiveAppsGetPageEventsOnlyWithTheApprovedScopeThatReadsThem(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// A live app may not call plain HTTP, so its attempts fail: the test
	// reads what fan-out created, the app's deliveries.
	app, _ := b.otherApp(t, "Live", []string{"svcchat", "book"}, nil,
		webhook.EventPageMessageReceived, webhook.EventBookPostCreated)
	b.setAppMode(t, app.ID, identity.ModeLive)
	b.reviewScope(t, app.ID, "pages:read", "automated_approved")
	b.reviewScope(t, app.ID, "svcchat:read", "pending")
	run(t, b.svc)

	// The post is the last event: once its delivery exists, every earlier
	// event was dispatched.
	b.emit(t, b.messageEvent("before review"), b.pageEvent(1))
	eventually(t, 10*time.Second, "the post's delivery (pages:read is approved)", func() bool { return len(b.eventTypesOf(t, app.ID)) > 0 })
	if got := b.eventTypesOf(t, app.ID); len(got) != 1 || got[0] != webhook.EventBookPostCreated {
		t.Fatalf("a live app without svcchat:read approved got deliveries of %v, want only the post", got)
	}

	b.reviewScope(t, app.ID, "svcchat:read", "approved")
	b.emit(t, b.messageEvent("after review"))
	eventually(t, 10*time.Second, "the message once svcchat:read is approved", func() bool {
		got := b.eventTypesOf(t, app.ID)
		return len(got) == 2 && got[1] == webhook.EventPageMessageReceived
	})
}

func TestSubscriptionToAProductTheAppDoesNotHaveIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	newApp := func(name string, enabled []string, linked []string) sdk.Principal {
		app, err := b.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: name, AdminID: b.Owner.ID, Products: enabled})
		if err != nil {
			t.Fatal(err)
		}
		if linked != nil {
			if err := b.IDs.Apps.LinkPage(ctx, app.ID, b.Page.ID, linked); err != nil {
				t.Fatal(err)
			}
		}
		return sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: app.ID}
	}
	rcv := newReceiver(t, "unused")
	save := func(key sdk.Principal, events ...string) *sdk.Error {
		_, e := call[*webhookv1.SaveSubscriptionResponse](t, b, "SaveSubscription", key, &webhookv1.SaveSubscriptionRequest{
			AppId: key.AppID, CallbackUrl: rcv.URL(), Events: events, VerifyToken: verifyToken})
		return e
	}
	bare := newApp("Bare", nil, nil)
	linkedForBook := newApp("LinkedForBook", nil, []string{"book"})
	wearables := newApp("Wearables", []string{"wearables"}, nil)

	sdkErr(t, save(bare, webhook.EventBookPostCreated), 400, 100, 0, "events")
	sdkErr(t, save(linkedForBook, webhook.EventBookPostCreated, webhook.EventPageMessageReceived), 400, 100, 0, "events")
	sdkErr(t, save(wearables, webhook.EventWearablesCardDelivered, webhook.EventSvcchatOptIn), 400, 100, 0, "events")
	// A Page link's product, or a product enabled on the app, is enough.
	if e := save(linkedForBook, webhook.EventBookPostCreated); e != nil {
		t.Fatalf("an app whose link carries book subscribing to book.post.created: %v", e)
	}
	if e := save(wearables, webhook.EventWearablesCardDelivered); e != nil {
		t.Fatalf("an app with wearables enabled subscribing to its wearables events: %v", e)
	}
}

func TestAppEventsReachTheirOwnAppWithoutAPageLinkOrScope(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	app, err := b.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: "Glasses", AdminID: b.Owner.ID, Products: []string{"wearables"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, e := call[*webhookv1.SaveSubscriptionResponse](t, b, "SaveSubscription", sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: app.ID},
		&webhookv1.SaveSubscriptionRequest{AppId: app.ID, CallbackUrl: newReceiver(t, app.ClientSecret).URL(),
			Events: []string{webhook.EventWearablesCardDelivered}, VerifyToken: verifyToken}); e != nil {
		t.Fatal(e)
	}
	// Live with no scope approved: an app event is the app's own.
	b.setAppMode(t, app.ID, identity.ModeLive)
	run(t, b.svc)
	b.emit(t, event.Event{Type: webhook.EventWearablesCardDelivered, AppID: app.ID,
		Data: map[string]any{"cardId": "c1", "userId": b.Consumer.ID, "deviceId": "d1"}})
	eventually(t, 10*time.Second, "a delivery of the app event to its app", func() bool { return len(b.eventTypesOf(t, app.ID)) == 1 })
}

// A plugin that is no product an app can be granted (social, a partner's
// plugin) has no product to check: its Page events reach the apps linked to
// the Page, a live one with pages:read approved, and any app may subscribe.
func TestEventsOfAPluginThatIsNoProductNeedTheLinkAndForLiveAppsPagesRead(t *testing.T) {
	t.Parallel()
	const reelReady = "social.reel.ready"
	b := setup(t, func(o *webhook.Options) {
		o.EventTypes = func() []string { return append([]string{reelReady}, contractEvents...) }
	})
	dev, devRcv := b.otherApp(t, "Dev", []string{"book"}, nil, reelReady)
	live, _ := b.otherApp(t, "Live", []string{"book"}, nil, reelReady)
	b.setAppMode(t, live.ID, identity.ModeLive)
	run(t, b.svc)

	ids := b.emit(t, event.Event{Type: reelReady, PageID: b.Page.ID, Data: map[string]any{"id": "1"}})
	eventually(t, 10*time.Second, "the reel at the development app", func() bool { return len(devRcv.byEvent()[ids[0]]) == 1 })
	if got := b.eventTypesOf(t, live.ID); len(got) != 0 {
		t.Fatalf("a live app without pages:read got %v", got)
	}
	b.reviewScope(t, live.ID, "pages:read", "automated_approved")
	b.emit(t, event.Event{Type: reelReady, PageID: b.Page.ID, Data: map[string]any{"id": "2"}})
	eventually(t, 10*time.Second, "the second reel's delivery to the live app", func() bool { return len(b.eventTypesOf(t, live.ID)) == 1 })
	if got := b.eventTypesOf(t, dev.ID); len(got) != 2 {
		t.Fatalf("the development app got %v, want both reels", got)
	}
}

// Entitlement holds until a delivery is sent, not only when it is created:
// a delivery retrying when the Page's link loses the event's product fails
// without another attempt.
func TestEventsReachOnlyEntitledAppsWhenARetryingDeliveryIsClaimed(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *webhook.Options) {
		o.RetrySchedule = []time.Duration{400 * time.Millisecond, 400 * time.Millisecond, 400 * time.Millisecond}
	})
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventPageMessageReceived)
	rcv.status.Store(500)
	run(t, b.svc)
	b.emit(t, b.messageEvent("my address is 1 Elm St"))
	eventually(t, 10*time.Second, "the first attempt", func() bool { return rcv.posts.Load() >= 1 })
	// The Page keeps the app for book only; the receiver would now accept.
	if err := b.IDs.Apps.LinkPage(context.Background(), b.App.ID, b.Page.ID, []string{"book"}); err != nil {
		t.Fatal(err)
	}
	posts := rcv.posts.Load()
	rcv.status.Store(0)
	var failed []*webhookv1.Delivery
	eventually(t, 10*time.Second, "the delivery failed", func() bool {
		failed = b.deliveries(t, &webhookv1.ListDeliveriesRequest{Status: webhook.StatusFailed})
		return len(failed) == 1
	})
	if got := rcv.received(); len(got) != 0 || rcv.posts.Load() > posts+1 {
		t.Fatalf("the message reached the app after its link lost svcchat: %d accepted, %d attempts", len(got), rcv.posts.Load())
	}
	attempts := failed[0].GetAttempts()
	if last := attempts[len(attempts)-1].GetError(); !strings.Contains(last, "no longer entitled") {
		t.Fatalf("the last attempt says %q, want why it was not sent", last)
	}
}

// A failed delivery is not replayed, alone or in a time range, once the
// Page unlinked the app.
func TestEventsReachOnlyEntitledAppsWhenReplayed(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *webhook.Options) { o.RetrySchedule = []time.Duration{50 * time.Millisecond} })
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventPageMessageReceived, webhook.EventBookPostCreated)
	rcv.status.Store(500)
	run(t, b.svc)
	start := time.Now().Add(-time.Second).UTC().Format(time.RFC3339)
	b.emit(t, b.messageEvent("hello"))
	var failed []*webhookv1.Delivery
	eventually(t, 10*time.Second, "the delivery failed", func() bool {
		failed = b.deliveries(t, &webhookv1.ListDeliveriesRequest{Status: webhook.StatusFailed})
		return len(failed) == 1
	})
	if err := b.IDs.Apps.UnlinkPage(context.Background(), b.App.ID, b.Page.ID); err != nil {
		t.Fatal(err)
	}
	rcv.status.Store(0)
	rr, e := call[*webhookv1.ReplayDeliveriesResponse](t, b, "ReplayDeliveries", b.appKey,
		&webhookv1.ReplayDeliveriesRequest{AppId: b.App.ID, Since: start})
	if e != nil || rr.GetReplayed() != 0 {
		t.Fatalf("range replay after unlinking = %v, %v; want nothing replayed", rr, e)
	}
	_, e = call[*webhookv1.ReplayDeliveryResponse](t, b, "ReplayDelivery", b.appKey,
		&webhookv1.ReplayDeliveryRequest{DeliveryId: failed[0].GetId()})
	sdkErr(t, e, 403, 10, 0, "")
	time.Sleep(300 * time.Millisecond)
	if got := rcv.received(); len(got) != 0 {
		t.Fatalf("a replay after unlinking was sent: %d deliveries accepted", len(got))
	}
}
