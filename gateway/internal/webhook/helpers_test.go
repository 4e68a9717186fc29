package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	"github.com/svcplatform/svc/gateway/internal/route"
	"github.com/svcplatform/svc/gateway/internal/secretbox"
	"github.com/svcplatform/svc/gateway/internal/webhook"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	webhookv1 "github.com/svcplatform/svc/gen/svc/webhook/v1"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/event"
)

func TestMain(m *testing.M) { identitytest.Main(m) }

// contractEvents are the event types of CONTRACT §6, as the plugins that
// emit them declare them.
var contractEvents = []string{
	webhook.EventPageMessageReceived, webhook.EventPageMessageSent, webhook.EventSvcchatMessageSent,
	webhook.EventSvcchatOptIn, webhook.EventSvcchatOptOut, webhook.EventSvcchatHandover,
	webhook.EventBookPostCreated, webhook.EventWearablesCardDelivered, webhook.EventWearablesActionConfirmed,
}

// fastRetries makes the retry schedule run in a test's time.
var fastRetries = []time.Duration{
	50 * time.Millisecond, 100 * time.Millisecond, 150 * time.Millisecond, 200 * time.Millisecond,
	250 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond,
}

// bundle is one test's world: a database with identitytest's World, a
// webhook Service over it, and the Service's methods on an in-process
// plugin.
type bundle struct {
	*identitytest.World
	box    *secretbox.Box
	svc    *webhook.Service
	plugin *sdk.Plugin
	// dns maps host names to addresses for the Service's resolver.
	dns *fakeDNS
	// appKey is the World app's own principal.
	appKey sdk.Principal
	// authn applies the platform's access rules.
	authn *auth.Authenticator
}

// setup builds a bundle; change the Service's options with tweak.
func setup(t testing.TB, tweak ...func(*webhook.Options)) *bundle {
	t.Helper()
	w := identitytest.NewWorld(t)
	b := &bundle{World: w, dns: &fakeDNS{names: map[string][]netip.Addr{}}, authn: auth.New(w.IDs, auth.Options{}),
		appKey: sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: w.App.ID}}
	var err error
	if b.box, err = secretbox.New(secretbox.NewKey()); err != nil {
		t.Fatal(err)
	}
	// Identity keeps client secrets sealed, as the gateway's does, in
	// core.apps, where the Service reads them to sign; the World app was
	// made before the sealer was set, so its secret is set again to be
	// sealed.
	ctx := context.Background()
	w.IDs.SetSealer(b.box)
	if _, err := w.IDs.Apps.SetClientSecret(ctx, w.App.ID, w.App.ClientSecret); err != nil {
		t.Fatal(err)
	}
	// The World app has svcchat; the tests also send it the Page's book
	// events and its own wearables events, which it must have (CONTRACT §15).
	if err := w.IDs.Apps.LinkPage(ctx, w.App.ID, w.Page.ID, []string{"svcchat", "book"}); err != nil {
		t.Fatal(err)
	}
	if err := w.IDs.Apps.EnableProduct(ctx, w.App.ID, "wearables"); err != nil {
		t.Fatal(err)
	}
	b.svc = b.newService(t, tweak...)
	b.plugin = sdk.New(sdk.Info{Name: "gateway"})
	b.svc.Register(b.plugin)
	return b
}

// newService returns another Service on the bundle's database, as a second
// gateway would have.
func (b *bundle) newService(t testing.TB, tweak ...func(*webhook.Options)) *webhook.Service {
	t.Helper()
	opts := webhook.Options{
		Pool: b.Pool, SecretBox: b.box, Logger: testLogger(t),
		EventTypes: func() []string { return contractEvents },
		Guard: func(ctx context.Context, appID string, least pluginv1.AppRole) error {
			return b.authn.AuthorizeApp(ctx, auth.FromContext(ctx), least, appID)
		},
		RetrySchedule: fastRetries, PollInterval: 20 * time.Millisecond,
		AttemptTimeout: 2 * time.Second, VerifyTimeout: 2 * time.Second, DrainTimeout: time.Second,
		LookupIP: b.dns.lookup,
	}
	for _, f := range tweak {
		f(&opts)
	}
	s, err := webhook.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("WEBHOOK_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// run starts s.Run until the test ends (or stop is called) and returns
// stop, which waits for Run to return.
func run(t testing.TB, s *webhook.Service) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(15 * time.Second):
				t.Errorf("Run did not return within 15s of its context ending")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// call invokes a WebhookService method as principal, as the gateway would.
func call[Res proto.Message](t testing.TB, b *bundle, method string, principal sdk.Principal, req proto.Message) (Res, *sdk.Error) {
	t.Helper()
	var zero Res
	in, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The gateway's access check first, as a routed call has it.
	md := webhookv1.File_svc_webhook_v1_webhook_proto.Services().ByName("WebhookService").Methods().ByName(protoreflect.Name(method))
	access := route.AccessOf(md)
	// The test speaks of callers as a plugin sees them; the gateway's
	// dispatcher has its own principal in the call's context.
	wp := wire.PrincipalToProto(principal)
	caller := auth.FromProto(wp)
	ctx = auth.WithPrincipal(ctx, caller)
	if err := b.authn.Authorize(ctx, caller, access, auth.TargetOf(req, access)); err != nil {
		e, _ := apierr.As(err)
		return zero, e
	}
	resp := wire.Invoke(ctx, b.plugin, &pluginv1.InvokeRequest{
		Procedure: "/svc.webhook.v1.WebhookService/" + method, Request: in, Principal: wp, TraceId: "test",
	})
	if resp.GetError() != nil {
		return zero, wire.ErrorFromProto(resp.GetError())
	}
	res := zero.ProtoReflect().Type().New().Interface().(Res)
	if err := proto.Unmarshal(resp.GetResponse(), res); err != nil {
		t.Fatal(err)
	}
	return res, nil
}

// subscribe saves a subscription for the World app through the Graph
// method, failing the test on refusal.
func (b *bundle) subscribe(t testing.TB, callback string, events ...string) {
	t.Helper()
	if _, e := call[*webhookv1.SaveSubscriptionResponse](t, b, "SaveSubscription", b.appKey, &webhookv1.SaveSubscriptionRequest{
		AppId: b.App.ID, CallbackUrl: callback, Events: events, VerifyToken: verifyToken,
	}); e != nil {
		t.Fatalf("save subscription to %s: %v", callback, e)
	}
}

// otherApp is a second app of the World's owner, linked to the World's
// Page with products (its signing secret sealed by identity) and subscribed to events
// at a receiver of its own. enabled are products enabled on the app itself.
func (b *bundle) otherApp(t testing.TB, name string, products, enabled []string, events ...string) (identity.CreatedApp, *receiver) {
	t.Helper()
	ctx := context.Background()
	app, err := b.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: name, AdminID: b.Owner.ID, Products: enabled})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.IDs.Apps.LinkPage(ctx, app.ID, b.Page.ID, products); err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t, app.ClientSecret)
	if _, e := call[*webhookv1.SaveSubscriptionResponse](t, b, "SaveSubscription", sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: app.ID},
		&webhookv1.SaveSubscriptionRequest{AppId: app.ID, CallbackUrl: rcv.URL(), Events: events, VerifyToken: verifyToken}); e != nil {
		t.Fatalf("save subscription of %s: %v", name, e)
	}
	return app, rcv
}

// deliveries lists the World app's deliveries, newest first.
func (b *bundle) deliveries(t testing.TB, filter *webhookv1.ListDeliveriesRequest) []*webhookv1.Delivery {
	t.Helper()
	if filter == nil {
		filter = &webhookv1.ListDeliveriesRequest{}
	}
	filter.AppId = b.App.ID
	if filter.Limit == 0 {
		filter.Limit = 100
	}
	res, e := call[*webhookv1.ListDeliveriesResponse](t, b, "ListDeliveries", b.appKey, filter)
	if e != nil {
		t.Fatalf("list deliveries: %v", e)
	}
	return res.GetData()
}

// emit commits one event per entry of events in one transaction each.
func (b *bundle) emit(t testing.TB, events ...event.Event) []string {
	t.Helper()
	ids := make([]string, len(events))
	for i, e := range events {
		err := pgx.BeginFunc(context.Background(), b.Pool, func(tx pgx.Tx) error {
			var err error
			ids[i], err = event.Emit(context.Background(), tx, e)
			return err
		})
		if err != nil {
			t.Fatalf("emit %s: %v", e.Type, err)
		}
	}
	return ids
}

// pageEvent is a book.post.created event of the World Page.
func (b *bundle) pageEvent(n int) event.Event {
	return event.Event{Type: webhook.EventBookPostCreated, PageID: b.Page.ID,
		Data: map[string]any{"postId": n, "pageId": b.Page.ID, "content": "post <" + string(rune('a'+n%26)) + ">", "audience": "everyone"}}
}

// eventually polls cond until it holds or timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const verifyToken = "let-me-in"

// delivery is one request a receiver accepted.
type delivery struct {
	ID        string // X-Svc-Delivery
	Event     string // X-Svc-Event
	Timestamp string
	UserAgent string
	Body      webhook.Body
	Raw       []byte
	Header    http.Header
}

// receiver is a webhook endpoint on loopback that checks every request's
// signature independently of the package under test.
type receiver struct {
	t      testing.TB
	secret string
	addr   string

	mu      sync.Mutex
	srv     *http.Server
	got     []delivery
	posts   atomic.Int64
	status  atomic.Int32 // answer to POSTs; 0 means 200
	hold    chan struct{}
	holding atomic.Int32
	// peak is the most requests held at once.
	peak  atomic.Int32
	echo  func(challenge string) string
	delay time.Duration
	// noKeepAlive closes every connection after one request.
	noKeepAlive bool
}

func newReceiver(t testing.TB, secret string, opts ...func(*receiver)) *receiver {
	t.Helper()
	r := &receiver{t: t, secret: secret, echo: func(c string) string { return c }}
	for _, o := range opts {
		o(r)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	r.serve(ln)
	t.Cleanup(r.stop)
	return r
}

// URL is the receiver's callback URL.
func (r *receiver) URL() string { return "http://" + r.addr + "/hook" }

func (r *receiver) serve(ln net.Listener) {
	r.mu.Lock()
	defer r.mu.Unlock()
	srv := &http.Server{Handler: http.HandlerFunc(r.handle)}
	srv.SetKeepAlivesEnabled(!r.noKeepAlive)
	r.srv = srv
	go func() { _ = srv.Serve(ln) }()
}

// stop closes the listener: connections are refused until start.
func (r *receiver) stop() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// start listens again on the same address.
func (r *receiver) start() {
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Fatalf("listen again on %s: %v", r.addr, err)
	}
	r.serve(ln)
}

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodGet {
		q := req.URL.Query()
		if q.Get("hub.mode") != "subscribe" || q.Get("hub.verify_token") != verifyToken {
			http.Error(w, "bad verify token", http.StatusForbidden)
			return
		}
		_, _ = io.WriteString(w, r.echo(q.Get("hub.challenge")))
		return
	}
	r.posts.Add(1)
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		return
	}
	mac := hmac.New(sha256.New, []byte(r.secret))
	mac.Write(raw)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	if got := req.Header.Get("X-Svc-Signature-256"); got != want {
		r.t.Errorf("delivery %s: X-Svc-Signature-256 = %q, want %q", req.Header.Get("X-Svc-Delivery"), got, want)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if hold := r.holdChan(); hold != nil {
		n := r.holding.Add(1)
		for p := r.peak.Load(); n > p && !r.peak.CompareAndSwap(p, n); p = r.peak.Load() {
		}
		select {
		case <-hold:
		case <-req.Context().Done():
			r.holding.Add(-1)
			return
		}
		r.holding.Add(-1)
	}
	if r.delay > 0 {
		time.Sleep(r.delay)
	}
	if s := r.status.Load(); s != 0 {
		http.Error(w, "not now", int(s))
		return
	}
	var body webhook.Body
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		r.t.Errorf("body %s is not the documented shape: %v", raw, err)
	}
	r.mu.Lock()
	r.got = append(r.got, delivery{ID: req.Header.Get("X-Svc-Delivery"), Event: req.Header.Get("X-Svc-Event"),
		Timestamp: req.Header.Get("X-Svc-Timestamp"), UserAgent: req.Header.Get("User-Agent"), Body: body, Raw: raw, Header: req.Header.Clone()})
	r.mu.Unlock()
	_, _ = io.WriteString(w, `{"ok":true}`)
}

func (r *receiver) holdChan() chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hold
}

// holdRequests makes POSTs wait until release is called.
func (r *receiver) holdRequests() (release func()) {
	c := make(chan struct{})
	r.mu.Lock()
	r.hold = c
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			r.hold = nil
			r.mu.Unlock()
			close(c)
		})
	}
}

// received returns the deliveries accepted so far.
func (r *receiver) received() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

// byEvent groups accepted deliveries by event id.
func (r *receiver) byEvent() map[string][]delivery {
	out := map[string][]delivery{}
	for _, d := range r.received() {
		out[d.Body.ID] = append(out[d.Body.ID], d)
	}
	return out
}

// fakeDNS is the Service's resolver in tests; names not listed resolve
// with the system resolver.
type fakeDNS struct {
	mu    sync.Mutex
	names map[string][]netip.Addr
}

func (d *fakeDNS) set(host string, addrs ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.names[host] = nil
	for _, a := range addrs {
		d.names[host] = append(d.names[host], netip.MustParseAddr(a))
	}
}

func (d *fakeDNS) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	d.mu.Lock()
	addrs, ok := d.names[host]
	d.mu.Unlock()
	if ok {
		return addrs, nil
	}
	if strings.HasSuffix(host, ".test") {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// setMode puts the World app in development or live mode.
func (b *bundle) setMode(t testing.TB, mode identity.AppMode) {
	t.Helper()
	b.setAppMode(t, b.App.ID, mode)
}

// setAppMode puts an app in development or live mode.
func (b *bundle) setAppMode(t testing.TB, appID string, mode identity.AppMode) {
	t.Helper()
	id, _ := identity.ParseID(appID)
	if _, err := coredb.New(b.Pool).SetAppMode(context.Background(), coredb.SetAppModeParams{ID: id, Mode: string(mode)}); err != nil {
		t.Fatal(err)
	}
}

// bigPool opens a pool sized like the gateway's.
func bigPool(t testing.TB, url string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// sdkErr checks a refusal's HTTP status, code, subcode and field.
func sdkErr(t testing.TB, e *sdk.Error, status, code, subcode int, field string) {
	t.Helper()
	if e == nil {
		t.Fatalf("no error, want %d %d/%d", status, code, subcode)
	}
	if e.HTTPStatus != status || e.Code != code || e.Subcode != subcode || e.Field != field {
		t.Fatalf("error = %d %d/%d field %q (%s), want %d %d/%d field %q",
			e.HTTPStatus, e.Code, e.Subcode, e.Field, e.Message, status, code, subcode, field)
	}
}
