package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/graph"
	"github.com/svcplatform/svc/gateway/internal/host"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/route"
	"github.com/svcplatform/svc/gateway/internal/server"
	corev1 "github.com/svcplatform/svc/gen/svc/core/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/plugins/sdk"
)

// routing owns the route table in use: the gateway's in-process services
// plus every serving plugin's. It is rebuilt whole when a plugin starts,
// restarts or is reloaded, and swapped atomically on the server.
type routing struct {
	srv      *server.Server
	guard    route.Guard
	core     route.Source
	compiled []server.Service // compiled-in Connect services (platform, admin)
	host     *host.Host
	calls    *observe.Calls
	// reads, when a read replica is configured, decides which reads it
	// serves (gateway/internal/replica); nil otherwise.
	reads route.Reads

	mu    sync.Mutex // serialises rebuilds
	table atomic.Pointer[route.Table]
	// onTable, when set, is told of each new table; it must not block.
	onTable func()
}

// rebuild makes and publishes a table for the plugins of snapshot. On error
// nothing changes: the host then keeps the old process serving.
func (r *routing) rebuild(snapshot []*host.Loaded) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	sources := []route.Source{r.core}
	for _, l := range snapshot {
		sources = append(sources, route.Source{Name: l.Name, Manifest: l.Manifest, Invoker: hostInvoker{h: r.host, plugin: l.Name, calls: r.calls}})
	}
	t, err := route.Build(sources, r.guard)
	if err != nil {
		return err
	}
	if r.reads != nil {
		t.WithReads(r.reads)
	}
	if err := graph.CheckNodes(t); err != nil {
		return err
	}
	if err := r.srv.SetServices(append(slices.Clone(r.compiled), t.Services()...), t.Files()); err != nil {
		return fmt.Errorf("transcoder: %w", err)
	}
	r.table.Store(t)
	if r.onTable != nil {
		r.onTable()
	}
	return nil
}

// Table is the route table in use.
func (r *routing) Table() *route.Table { return r.table.Load() }

// routes lists a plugin's bindings, for the admin service.
func (r *routing) routes(plugin string) []string {
	if t := r.table.Load(); t != nil {
		return t.Routes(plugin)
	}
	return nil
}

// hostInvoker calls one plugin through the host, timing each call.
type hostInvoker struct {
	h      *host.Host
	plugin string
	calls  *observe.Calls
}

func (i hostInvoker) Invoke(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	start := time.Now()
	resp, err := i.h.Invoke(ctx, i.plugin, req)
	i.calls.Observe(i.plugin, req.GetProcedure(), callOutcome(resp, err), start)
	return resp, err
}

func (i hostInvoker) InvokeStream(ctx context.Context, req *pluginv1.InvokeRequest, send func(*pluginv1.InvokeResponse) error) error {
	start := time.Now()
	refused := false
	err := i.h.InvokeStream(ctx, i.plugin, req, func(resp *pluginv1.InvokeResponse) error {
		refused = refused || resp.GetError() != nil
		return send(resp)
	})
	outcome := callOutcome(nil, err)
	if refused {
		outcome = observe.CallRefused
	}
	i.calls.Observe(i.plugin, req.GetProcedure(), outcome, start)
	return err
}

// callOutcome labels a call: a hop error failed it, an error in the
// answer is the plugin's refusal.
func callOutcome(resp *pluginv1.InvokeResponse, err error) string {
	switch {
	case err != nil:
		return observe.CallFailed
	case resp.GetError() != nil:
		return observe.CallRefused
	}
	return observe.CallOK
}

// localInvoker runs an in-process sdk.Plugin: the gateway's own services,
// timed as the plugin "core".
type localInvoker struct {
	p     *sdk.Plugin
	calls *observe.Calls
}

func (l localInvoker) Invoke(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	start := time.Now()
	resp := l.p.Invoke(ctx, req)
	l.calls.Observe("core", req.GetProcedure(), callOutcome(resp, nil), start)
	return resp, nil
}

func (l localInvoker) InvokeStream(ctx context.Context, req *pluginv1.InvokeRequest, send func(*pluginv1.InvokeResponse) error) error {
	return l.p.InvokeStream(ctx, req, send)
}

// authenticate resolves every request's credential once, before routing.
func authenticate(a *auth.Authenticator) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, err := a.Authenticate(r.Context(), r)
			ctx := auth.WithPrincipal(r.Context(), p)
			if err != nil {
				ctx = auth.WithError(ctx, err)
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// guard enforces method access rules with the authenticator.
type guard struct{ a *auth.Authenticator }

func (g guard) Check(ctx context.Context, access *pluginv1.Access, target route.Target) (*pluginv1.Principal, error) {
	if access.GetPublic() {
		// A public method ignores a bad credential; a good one is passed on.
		return auth.FromContext(ctx).Proto(), nil
	}
	p, err := auth.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := g.a.Authorize(ctx, p, access, auth.Target(target)); err != nil {
		return nil, err
	}
	return p.Proto(), nil
}

// caller names the app and user of a request, for idempotency keys and
// rate limits.
func caller(ctx context.Context) (string, string) {
	if p := auth.FromContext(ctx); p != nil {
		return p.AppID, p.UserID
	}
	return "", ""
}

// hostServer is the Host service plugins call back: another method through
// the same route table and access checks as outside calls, as the principal
// the host resolved (the caller of the call the plugin serves, or the
// plugin itself; never one the plugin names), and Page and app facts from
// identity.
type hostServer struct {
	pluginv1.UnimplementedHostServer
	r   *routing
	ids *identity.Service
}

func (h hostServer) Call(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	ctx = observe.WithTraceID(ctx, req.GetTraceId())
	t := h.r.Table()
	m, ok := t.Method(req.GetProcedure())
	if !ok {
		return &pluginv1.InvokeResponse{Error: host.ErrorProto(apierr.UnknownPath(req.GetProcedure()))}, nil
	}
	if p := auth.FromProto(req.GetPrincipal()); p != nil {
		ctx = auth.WithPrincipal(ctx, p)
	}
	in := m.Input.New().Interface()
	if err := proto.Unmarshal(req.GetRequest(), in); err != nil {
		return &pluginv1.InvokeResponse{Error: host.ErrorProto(apierr.Invalid("", "The request is not a valid %s message.", m.Desc.Input().FullName()))}, nil
	}
	out, err := t.Call(ctx, m, in, req.GetRequest())
	if err != nil {
		return &pluginv1.InvokeResponse{Error: host.ErrorProto(err)}, nil
	}
	return &pluginv1.InvokeResponse{Response: out}, nil
}

func (h hostServer) PageAccess(ctx context.Context, req *pluginv1.PageAccessRequest) (*pluginv1.PageAccessResponse, error) {
	return h.ids.PageAccess(ctx, req.GetPageId(), req.GetUserId(), req.GetAppId())
}

// UserInfo tells a plugin whether a user exists and the user's name. An id
// that names no user answers user_exists false.
func (h hostServer) UserInfo(ctx context.Context, req *pluginv1.UserInfoRequest) (*pluginv1.UserInfoResponse, error) {
	u, err := h.ids.User(ctx, req.GetUserId())
	if errors.Is(err, identity.ErrNotFound) {
		return &pluginv1.UserInfoResponse{}, nil
	}
	if err != nil {
		return nil, err
	}
	return &pluginv1.UserInfoResponse{UserExists: true, Name: u.Name}, nil
}

// AppInfo describes an app to a plugin: name, mode, products and
// platformConfig. An id that names no app answers app_exists false.
func (h hostServer) AppInfo(ctx context.Context, req *pluginv1.AppInfoRequest) (*pluginv1.AppInfoResponse, error) {
	app, err := h.ids.App(ctx, req.GetAppId())
	if errors.Is(err, identity.ErrNotFound) {
		return &pluginv1.AppInfoResponse{}, nil
	}
	if err != nil {
		return nil, err
	}
	products, err := h.ids.AppProducts(ctx, app.ID)
	if err != nil {
		return nil, err
	}
	raw, err := h.ids.AppConfig(ctx, app.ID)
	if err != nil {
		return nil, err
	}
	cfg := &structpb.Struct{}
	if err := cfg.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("app %s: platformConfig: %w", app.ID, err)
	}
	return &pluginv1.AppInfoResponse{AppExists: true, Name: app.Name, Live: app.Live(), Products: products,
		PlatformConfig: cfg}, nil
}

// eventTypes is the catalog of event types apps may subscribe to: every
// type the plugins declare in their manifests (sdk.Info.Events), sorted.
// A partner plugin's events join it when the plugin loads, with no change
// to the gateway. Plugins that were loaded once keep their types while
// they restart, since their last manifest is kept.
func eventTypes(plugins []host.Info) []string {
	var out []string
	for _, p := range plugins {
		for _, t := range p.Manifest.GetEvents() {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}

// adAccountsProcedure lists the caller's ad accounts, in the ads plugin.
const adAccountsProcedure = "/svc.ads.v1.AdsService/ListMyAdAccounts"

// adAccountTasks are what a business's owner may do on its ad accounts, as
// Meta's assigned_assets names them.
var adAccountTasks = []string{"MANAGE", "ADVERTISE", "ANALYZE"}

// pluginAssets lists the caller's ad accounts as assigned assets, asking
// the ads plugin through the route table as the caller, with the same
// access checks as the caller's own call of me/adaccounts: a token that may
// not read them (no ads_read) lists none, as Meta lists only the assets a
// token may see, and so does a gateway without the ads plugin. The answer
// is read through its descriptor, so the gateway does not depend on the
// plugin's types.
func (r *routing) pluginAssets(ctx context.Context, caller sdk.Principal) ([]*corev1.AssignedAsset, error) {
	t := r.Table()
	m, ok := t.Method(adAccountsProcedure)
	if !ok {
		return nil, nil
	}
	ctx = auth.WithPrincipal(ctx, auth.FromSDK(caller))
	req := m.Input.New()
	if f := req.Descriptor().Fields().ByName("limit"); f != nil {
		req.Set(f, protoreflect.ValueOfInt32(100))
	}
	raw, err := proto.Marshal(req.Interface())
	if err != nil {
		return nil, err
	}
	out, err := t.Call(ctx, m, req.Interface(), raw)
	if e, ok := apierr.As(err); ok && (e.HTTPStatus == http.StatusUnauthorized || e.HTTPStatus == http.StatusForbidden) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	res := m.Output.New().Interface()
	if err := proto.Unmarshal(out, res); err != nil {
		return nil, err
	}
	js, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(res)
	if err != nil {
		return nil, err
	}
	var list struct {
		Data []struct {
			ID         string `json:"id"`
			Name       string `json:"name"`
			BusinessID string `json:"business_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(js, &list); err != nil {
		return nil, err
	}
	assets := make([]*corev1.AssignedAsset, 0, len(list.Data))
	for _, a := range list.Data {
		assets = append(assets, &corev1.AssignedAsset{Id: a.ID, Type: "AD_ACCOUNT", Name: a.Name,
			BusinessId: a.BusinessID, Tasks: adAccountTasks})
	}
	return assets, nil
}
