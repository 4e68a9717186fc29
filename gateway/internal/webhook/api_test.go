package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/webhook"
	webhookv1 "github.com/svcplatform/svc/gen/svc/webhook/v1"
	"github.com/svcplatform/svc/sdk"
)

func TestSubscriptionIsSavedAfterTheVerificationHandshake(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL()+"?team=blue", webhook.EventBookPostCreated, webhook.EventSvcchatOptIn, webhook.EventBookPostCreated)
	res, e := call[*webhookv1.ListSubscriptionsResponse](t, b, "ListSubscriptions", b.appKey,
		&webhookv1.ListSubscriptionsRequest{AppId: b.App.ID})
	if e != nil {
		t.Fatal(e)
	}
	if len(res.GetData()) != 1 {
		t.Fatalf("subscriptions %v", res.GetData())
	}
	sub := res.GetData()[0]
	if sub.GetCallbackUrl() != rcv.URL()+"?team=blue" || !sub.GetActive() ||
		strings.Join(sub.GetEvents(), ",") != "book.post.created,svcchat.opt_in" {
		t.Errorf("subscription %v", sub)
	}
}

func TestFailedVerificationHandshakeIsRefusedNamingCallbackURL(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"a receiver that echoes another challenge", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("not-the-challenge"))
		}, "did not echo hub.challenge"},
		{"a receiver that refuses the verify token", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "wrong token", http.StatusForbidden)
		}, "HTTP 403"},
		{"a receiver that redirects", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusFound)
		}, "HTTP 302"},
		{"a receiver that never answers in time is only unreachable", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, "unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			_, e := call[*webhookv1.SaveSubscriptionResponse](t, b, "SaveSubscription", b.appKey, &webhookv1.SaveSubscriptionRequest{
				AppId: b.App.ID, CallbackUrl: srv.URL + "/hook", Events: []string{webhook.EventBookPostCreated}, VerifyToken: verifyToken,
			})
			sdkErr(t, e, 400, 100, 0, "callback_url")
			if !strings.Contains(e.Message, tc.want) || !strings.Contains(e.Message, "callback_url") {
				t.Errorf("message %q, want it to name callback_url and say %q", e.Message, tc.want)
			}
			if strings.Contains(e.Message, verifyToken) {
				t.Errorf("message %q repeats the verify token", e.Message)
			}
		})
	}
	t.Run("a receiver that is down", func(t *testing.T) {
		t.Parallel()
		rcv := newReceiver(t, b.App.ClientSecret)
		rcv.stop()
		_, e := call[*webhookv1.SaveSubscriptionResponse](t, b, "SaveSubscription", b.appKey, &webhookv1.SaveSubscriptionRequest{
			AppId: b.App.ID, CallbackUrl: rcv.URL(), Events: []string{webhook.EventBookPostCreated}, VerifyToken: verifyToken,
		})
		sdkErr(t, e, 400, 100, 0, "callback_url")
	})
	res, _ := call[*webhookv1.ListSubscriptionsResponse](t, b, "ListSubscriptions", b.appKey,
		&webhookv1.ListSubscriptionsRequest{AppId: b.App.ID})
	if len(res.GetData()) != 0 {
		t.Errorf("a refused subscription was saved: %v", res.GetData())
	}
}

func TestInvalidSubscriptionsAreRefusedNamingTheField(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := newReceiver(t, b.App.ClientSecret)
	for _, tc := range []struct {
		name  string
		req   *webhookv1.SaveSubscriptionRequest
		field string
	}{
		{"an unknown event type", &webhookv1.SaveSubscriptionRequest{CallbackUrl: rcv.URL(), Events: []string{"book.post.deleted"}, VerifyToken: "x"}, "events"},
		{"no event types", &webhookv1.SaveSubscriptionRequest{CallbackUrl: rcv.URL(), VerifyToken: "x"}, "events"},
		{"no verify token", &webhookv1.SaveSubscriptionRequest{CallbackUrl: rcv.URL(), Events: []string{webhook.EventBookPostCreated}}, "verify_token"},
		{"a relative URL", &webhookv1.SaveSubscriptionRequest{CallbackUrl: "/hook", Events: []string{webhook.EventBookPostCreated}, VerifyToken: "x"}, "callback_url"},
		{"an ftp URL", &webhookv1.SaveSubscriptionRequest{CallbackUrl: "ftp://example.com/", Events: []string{webhook.EventBookPostCreated}, VerifyToken: "x"}, "callback_url"},
		{"credentials in the URL", &webhookv1.SaveSubscriptionRequest{CallbackUrl: "https://u:p@example.com/", Events: []string{webhook.EventBookPostCreated}, VerifyToken: "x"}, "callback_url"},
		{"a fragment", &webhookv1.SaveSubscriptionRequest{CallbackUrl: "https://example.com/#x", Events: []string{webhook.EventBookPostCreated}, VerifyToken: "x"}, "callback_url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.AppId = b.App.ID
			_, e := call[*webhookv1.SaveSubscriptionResponse](t, b, "SaveSubscription", b.appKey, tc.req)
			sdkErr(t, e, 400, 100, 0, tc.field)
		})
	}
}

// The SSRF rules, at save and at connect time.
func TestCallbacksOutOfReachAreRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.dns.set("intranet.test", "10.20.30.40")
	b.dns.set("mixed.test", "93.184.216.34", "192.168.1.1")
	b.dns.set("loopback.test", "127.0.0.1")
	for _, tc := range []struct {
		name, url string
		live      bool
		want      string
	}{
		{"a private IPv4 address", "https://10.0.0.1/hook", false, "private"},
		{"a private IPv6 address", "https://[fd12::1]/hook", false, "private"},
		{"a shared (CGNAT) address", "https://100.64.1.1/hook", false, "private"},
		{"the cloud metadata address", "https://169.254.169.254/latest/meta-data/", false, "metadata"},
		{"the IPv6 cloud metadata address", "https://[fd00:ec2::254]/", false, "metadata"},
		{"a link-local address", "https://169.254.1.1/", false, "private"},
		{"the unspecified address", "https://0.0.0.0/", false, "unspecified"},
		{"a private address mapped into IPv6", "https://[::ffff:10.0.0.1]/", false, "private"},
		{"a private address behind NAT64", "https://[64:ff9b::a00:1]/", false, "private"},
		{"loopback IPv6 in live mode", "https://[::1]:8443/hook", true, "loopback"},
		{"loopback IPv4 in live mode", "https://127.0.0.1/hook", true, "loopback"},
		{"a host name resolving to a private address", "https://intranet.test/hook", false, "10.20.30.40"},
		{"a host name with one private address among public ones", "https://mixed.test/hook", false, "192.168.1.1"},
		{"a host name resolving to loopback in live mode", "https://loopback.test/hook", true, "loopback"},
		{"plain http to a public host", "http://93.184.216.34/hook", false, "https"},
		{"plain http to loopback in live mode", "http://127.0.0.1:9/hook", true, "https"},
		{"plain http to a private address", "http://10.0.0.1/hook", false, "https"},
		{"a host name that does not resolve", "https://nowhere.test/hook", false, "does not resolve"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := b
			if tc.live {
				b = setup(t)
				b.dns.set("loopback.test", "127.0.0.1")
				b.setMode(t, identity.ModeLive)
			}
			_, e := call[*webhookv1.SaveSubscriptionResponse](t, b, "SaveSubscription", b.appKey, &webhookv1.SaveSubscriptionRequest{
				AppId: b.App.ID, CallbackUrl: tc.url, Events: []string{webhook.EventBookPostCreated}, VerifyToken: verifyToken,
			})
			sdkErr(t, e, 400, 100, 0, "callback_url")
			if !strings.Contains(e.Message, tc.want) {
				t.Errorf("message %q, want it to mention %q", e.Message, tc.want)
			}
		})
	}
}

func TestDNSRebindingIsRefusedAtConnectTime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Every request dials anew, as it would after the idle connection closed.
	rcv := newReceiver(t, b.App.ClientSecret, func(r *receiver) { r.noKeepAlive = true })
	port := rcv.addr[strings.LastIndex(rcv.addr, ":"):]
	b.dns.set("rebind.test", "127.0.0.1")
	b.subscribe(t, "http://rebind.test"+port+"/hook", webhook.EventBookPostCreated)
	// After the check at save time the name moves to a private address.
	b.dns.set("rebind.test", "10.0.0.1")
	run(t, b.svc)
	b.emit(t, b.pageEvent(1))
	eventually(t, 5*time.Second, "a refused attempt logged", func() bool {
		ds := b.deliveries(t, nil)
		return len(ds) == 1 && len(ds[0].GetAttempts()) > 0
	})
	a := b.deliveries(t, nil)[0].GetAttempts()[0]
	if a.GetStatusCode() != 0 || !strings.Contains(a.GetError(), "refused by the platform") || !strings.Contains(a.GetError(), "10.0.0.1") {
		t.Errorf("attempt %v, want the connection refused by the platform, naming 10.0.0.1", a)
	}
	if rcv.posts.Load() != 0 {
		t.Error("the receiver was reached")
	}
}

func TestOperatorMayAllowPrivateNetworks(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *webhook.Options) { o.AllowPrivateNetworks = true; o.VerifyTimeout = 300 * time.Millisecond })
	// 10.255.255.1 accepts no connection here: the save fails at the
	// handshake, not at the rules.
	_, e := call[*webhookv1.SaveSubscriptionResponse](t, b, "SaveSubscription", b.appKey, &webhookv1.SaveSubscriptionRequest{
		AppId: b.App.ID, CallbackUrl: "https://10.255.255.1/hook", Events: []string{webhook.EventBookPostCreated}, VerifyToken: verifyToken,
	})
	sdkErr(t, e, 400, 100, 0, "callback_url")
	if !strings.Contains(e.Message, "did not answer the verification request: unreachable") {
		t.Errorf("message %q, want the handshake tried and nothing said but unreachable", e.Message)
	}
	_, e = call[*webhookv1.SaveSubscriptionResponse](t, b, "SaveSubscription", b.appKey, &webhookv1.SaveSubscriptionRequest{
		AppId: b.App.ID, CallbackUrl: "https://169.254.169.254/", Events: []string{webhook.EventBookPostCreated}, VerifyToken: verifyToken,
	})
	if e == nil || !strings.Contains(e.Message, "metadata") {
		t.Errorf("the metadata address with private networks allowed: %v, want refused", e)
	}
}

func TestOnlyTheAppOrItsTeamMayManageItsWebhooks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	developer, tester := b.PageAdmin, b.Consumer
	if err := b.IDs.Apps.SetTeamRole(ctx, b.App.ID, developer.ID, identity.TeamDeveloper); err != nil {
		t.Fatal(err)
	}
	if err := b.IDs.Apps.SetTeamRole(ctx, b.App.ID, tester.ID, identity.TeamTester); err != nil {
		t.Fatal(err)
	}
	otherApp, err := b.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: "Other", AdminID: b.Stranger.ID})
	if err != nil {
		t.Fatal(err)
	}
	user := func(id string) sdk.Principal {
		return sdk.Principal{Kind: sdk.TokenKindUser, UserID: id, AppID: otherApp.ID}
	}
	session := func(id string) sdk.Principal {
		return sdk.Principal{Kind: sdk.TokenKindSession, UserID: id}
	}
	list := func(p sdk.Principal, app string) *sdk.Error {
		_, e := call[*webhookv1.ListSubscriptionsResponse](t, b, "ListSubscriptions", p, &webhookv1.ListSubscriptionsRequest{AppId: app})
		return e
	}
	deliveries := func(p sdk.Principal, app string) *sdk.Error {
		_, e := call[*webhookv1.ListDeliveriesResponse](t, b, "ListDeliveries", p, &webhookv1.ListDeliveriesRequest{AppId: app})
		return e
	}
	const ok, forbidden, missing = 200, 403, 404
	for _, tc := range []struct {
		name   string
		do     func(sdk.Principal, string) *sdk.Error
		caller sdk.Principal
		app    string
		want   int
	}{
		{"the app's own key manages subscriptions", list, b.appKey, b.App.ID, ok},
		{"a team Admin's user token of the app manages subscriptions", list, sdk.Principal{Kind: sdk.TokenKindUser, UserID: b.Owner.ID, AppID: b.App.ID}, b.App.ID, ok},
		{"a team Developer's session manages subscriptions", list, session(developer.ID), b.App.ID, ok},
		{"a team Tester may not manage subscriptions", list, session(tester.ID), b.App.ID, forbidden},
		{"a team Tester reads deliveries", deliveries, session(tester.ID), b.App.ID, ok},
		{"another app's key is refused", list, sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: otherApp.ID}, b.App.ID, forbidden},
		{"another app's key may not read deliveries", deliveries, sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: otherApp.ID}, b.App.ID, forbidden},
		{"a user off the team is refused", list, user(b.Stranger.ID), b.App.ID, forbidden},
		{"a user off the team may not read deliveries", deliveries, session(b.Stranger.ID), b.App.ID, forbidden},
		{"the app's system user token manages subscriptions", list, sdk.Principal{Kind: sdk.TokenKindSystemUser, AppID: b.App.ID}, b.App.ID, ok},
		{"a team Admin's token issued to another app is refused", list, user(b.Owner.ID), b.App.ID, forbidden},
		{"an unknown app is not found", list, b.appKey, "123456789", missing},
		{"an unknown app's deliveries are not found", deliveries, session(b.Owner.ID), "123456789", missing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.do(tc.caller, tc.app)
			switch tc.want {
			case ok:
				if e != nil {
					t.Fatalf("refused: %v", e)
				}
			case forbidden:
				sdkErr(t, e, 403, 200, 2069004, "")
			case missing:
				sdkErr(t, e, 404, 100, 33, "")
			}
		})
	}

	t.Run("a team Tester may not replay or send test events", func(t *testing.T) {
		_, e := call[*webhookv1.SendTestEventResponse](t, b, "SendTestEvent", session(tester.ID),
			&webhookv1.SendTestEventRequest{AppId: b.App.ID, Type: webhook.EventBookPostCreated})
		sdkErr(t, e, 403, 200, 2069004, "")
		_, e = call[*webhookv1.DeleteSubscriptionResponse](t, b, "DeleteSubscription", session(tester.ID),
			&webhookv1.DeleteSubscriptionRequest{AppId: b.App.ID})
		sdkErr(t, e, 403, 200, 2069004, "")
	})
	t.Run("another app's key may not replay this app's delivery", func(t *testing.T) {
		rcv := newReceiver(t, b.App.ClientSecret)
		b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
		res, e := call[*webhookv1.SendTestEventResponse](t, b, "SendTestEvent", b.appKey,
			&webhookv1.SendTestEventRequest{AppId: b.App.ID, Type: webhook.EventBookPostCreated})
		if e != nil {
			t.Fatal(e)
		}
		ds := b.deliveries(t, nil)
		if len(ds) != 1 || ds[0].GetEventId() != res.GetId() {
			t.Fatalf("deliveries %v", ds)
		}
		_, e = call[*webhookv1.ReplayDeliveryResponse](t, b, "ReplayDelivery",
			sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: otherApp.ID},
			&webhookv1.ReplayDeliveryRequest{DeliveryId: ds[0].GetId()})
		sdkErr(t, e, 403, 200, 2069004, "")
	})
}

// Issue 16: on an installation without the development world, a signed-in
// developer must not make the gateway request its own loopback ports.
func TestLoopbackCallbacksAreRefusedWhenTheOperatorSaysSo(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *webhook.Options) { o.RefuseLoopback = true })
	var asked atomic.Int32
	rcv := newReceiver(t, b.App.ClientSecret, func(r *receiver) {
		r.echo = func(c string) string { asked.Add(1); return c }
	})
	_, e := call[*webhookv1.SaveSubscriptionResponse](t, b, "SaveSubscription", b.appKey, &webhookv1.SaveSubscriptionRequest{
		AppId: b.App.ID, CallbackUrl: rcv.URL(), Events: []string{webhook.EventBookPostCreated}, VerifyToken: verifyToken,
	})
	sdkErr(t, e, 400, 100, 0, "callback_url")
	// The app is in development: the refusal names the operator's switch,
	// not the app's mode.
	if !strings.Contains(e.Message, "--webhook-allow-loopback") {
		t.Fatalf("the refusal does not say how loopback is allowed: %s", e.Message)
	}
	if asked.Load() != 0 {
		t.Fatal("the loopback receiver was requested")
	}
}

func TestTestEventsAndReplaysAreLimitedPerApp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The limit counts in fixed minute windows: a slow run must not
	// straddle two.
	webhook.StopManualClock(b.svc, time.Now())
	rcv := newReceiver(t, b.App.ClientSecret)
	b.subscribe(t, rcv.URL(), webhook.EventBookPostCreated)
	var refused *sdk.Error
	sent := 0
	for range 40 {
		_, e := call[*webhookv1.SendTestEventResponse](t, b, "SendTestEvent", b.appKey,
			&webhookv1.SendTestEventRequest{AppId: b.App.ID, Type: webhook.EventBookPostCreated})
		if e != nil {
			refused = e
			break
		}
		sent++
	}
	if refused == nil || sent != 30 {
		t.Fatalf("%d test events sent before a refusal (%v); want 30 per minute", sent, refused)
	}
	sdkErr(t, refused, 429, 4, 0, "")
}
