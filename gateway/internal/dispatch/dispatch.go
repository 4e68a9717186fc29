package dispatch

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/graph"
	"github.com/svcplatform/svc/gateway/internal/host"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/route"
	"github.com/svcplatform/svc/gateway/internal/server"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/sdk"
)

// Options configure a Dispatcher.
type Options struct {
	// Server is the server whose services follow the route table.
	Server *server.Server
	// Auth authorizes every call against its method's access rule.
	Auth *auth.Authenticator
	// Core is the gateway's own services, run in-process and timed as the
	// plugin "core". They read the primary only: their lookups (tokens,
	// apps, roles) must not lag.
	Core *sdk.Plugin
	// Calls counts and times every call.
	Calls *observe.Calls
	// Reads, when a read replica is configured, decides which reads it
	// serves (gateway/internal/replica); nil otherwise.
	Reads route.Reads
}

// Dispatcher owns the route table in use: the gateway's in-process
// services plus every serving plugin's. It is rebuilt whole when a plugin
// starts, restarts or is reloaded, and swapped atomically on the server.
type Dispatcher struct {
	srv      *server.Server
	guard    guard
	core     route.Source
	calls    *observe.Calls
	reads    route.Reads
	rates    *route.UserRates
	host     *host.Host
	compiled []server.Service // compiled-in Connect services (platform, admin)
	onTable  func()

	mu      sync.Mutex // serialises rebuilds
	current atomic.Pointer[generation]
}

// generation is one route table and the Graph node router compiled from it,
// published together so that a Graph request never sees one without the
// other and never compiles a router itself.
type generation struct {
	table *route.Table
	graph *graph.Router
}

// New returns a Dispatcher with no table yet: set the host, the
// compiled-in services and OnTable, then Rebuild.
func New(opts Options) (*Dispatcher, error) {
	manifest, err := wire.Manifest(opts.Core)
	if err != nil {
		return nil, fmt.Errorf("core services: %w", err)
	}
	core, err := manifestcheck.Check(manifest)
	if err != nil {
		return nil, fmt.Errorf("core services: %w", err)
	}
	core.Name = "core"
	return &Dispatcher{
		srv:   opts.Server,
		guard: guard{a: opts.Auth},
		core: route.Source{Plugin: core,
			Invoker: localInvoker{p: opts.Core, calls: opts.Calls}, PrimaryOnly: true},
		calls: opts.Calls,
		reads: opts.Reads,
		rates: route.NewUserRates(nil),
	}, nil
}

// UseHost sets the host that runs the plugins' processes. The host is
// built with the Dispatcher's Rebuild and HostServer, hence after it.
func (d *Dispatcher) UseHost(h *host.Host) { d.host = h }

// Compiled sets the compiled-in Connect services served beside the route
// table's (they do not take the plugin path).
func (d *Dispatcher) Compiled(services ...server.Service) { d.compiled = services }

// OnTable sets what is told of each new table; it must not block.
func (d *Dispatcher) OnTable(f func()) { d.onTable = f }

// Rebuild makes and publishes a table for the plugins of snapshot. On
// error nothing changes: the host then keeps the old process serving.
func (d *Dispatcher) Rebuild(snapshot []*host.Loaded) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	sources := []route.Source{d.core}
	for _, l := range snapshot {
		sources = append(sources, route.Source{Plugin: l.Plugin,
			Invoker: hostInvoker{h: d.host, plugin: l.Name, calls: d.calls}})
	}
	t, err := route.Build(sources, d.guard)
	if err != nil {
		return err
	}
	if d.reads != nil {
		t.WithReads(d.reads)
	}
	t.WithUserRates(d.rates)
	// The Graph router is built now, once, and published with its table:
	// a request never builds one.
	g := graph.NewRouter(t)
	if err := d.srv.SetServices(append(slices.Clone(d.compiled), t.Services()...), t.Files()); err != nil {
		return fmt.Errorf("transcoder: %w", err)
	}
	d.current.Store(&generation{table: t, graph: g})
	if d.onTable != nil {
		d.onTable()
	}
	return nil
}

// Table is the route table in use (nil before the first Rebuild).
func (d *Dispatcher) Table() *route.Table {
	if g := d.current.Load(); g != nil {
		return g.table
	}
	return nil
}

// GraphRouter is the Graph node router of the route table in use, for the
// Graph endpoint (nil before the first Rebuild).
func (d *Dispatcher) GraphRouter() *graph.Router {
	if g := d.current.Load(); g != nil {
		return g.graph
	}
	return nil
}

// Routes lists a plugin's bindings, for the admin service.
func (d *Dispatcher) Routes(plugin string) []string {
	if t := d.Table(); t != nil {
		return t.Routes(plugin)
	}
	return nil
}

// Authenticate resolves every request's credential once, before routing,
// into its context (server.Options.Authenticate); a bad one is kept in the
// context, refused by the guard of any method that is not public.
func Authenticate(a *auth.Authenticator) func(context.Context, *http.Request) context.Context {
	return func(ctx context.Context, r *http.Request) context.Context {
		p, err := a.Authenticate(ctx, r)
		ctx = auth.WithPrincipal(ctx, p)
		if err != nil {
			ctx = auth.WithError(ctx, err)
		}
		return ctx
	}
}

// Caller names the app and user of a request, for idempotency keys and
// rate limits.
func Caller(ctx context.Context) (string, string) {
	if p := auth.FromContext(ctx); p != nil {
		return p.AppID, p.UserID
	}
	return "", ""
}

// guard enforces method access rules with the authenticator.
type guard struct{ a *auth.Authenticator }

func (guard) Admit(ctx context.Context, access *pluginv1.Access) error {
	return auth.Admit(ctx, access)
}

func (g guard) Check(ctx context.Context, access *pluginv1.Access, target route.Target) (route.Grant, error) {
	if access.GetPublic() {
		// A public method ignores a bad credential; a good one is passed on.
		return route.Grant{Principal: auth.FromContext(ctx).Proto()}, nil
	}
	p, err := auth.Caller(ctx)
	if err != nil {
		return route.Grant{}, err
	}
	facts, err := g.a.AuthorizeFacts(ctx, p, access, auth.Target(target))
	if err != nil {
		return route.Grant{}, err
	}
	return route.Grant{Principal: p.Proto(), PageAccess: facts}, nil
}

// CallJSON calls procedure through the route table as caller, with the
// same validation and access checks as the caller's own call. The request
// is protojson (fields the method's input does not have are ignored, so a
// caller may offer a limit to methods that take none); the answer is
// protojson with the proto field names. ok is false when no loaded plugin
// serves procedure. It lets the gateway's own services read what a plugin
// keeps without depending on the plugin's types.
func (d *Dispatcher) CallJSON(ctx context.Context, caller sdk.Principal, procedure string, req []byte) (res []byte, ok bool, err error) {
	t := d.Table()
	m, ok := t.Method(procedure)
	if !ok {
		return nil, false, nil
	}
	ctx = auth.WithPrincipal(ctx, auth.FromSDK(caller))
	in := m.Input.New().Interface()
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(req, in); err != nil {
		return nil, true, apierr.Internal(fmt.Errorf("call %s: request: %w", procedure, err))
	}
	raw, err := proto.Marshal(in)
	if err != nil {
		return nil, true, apierr.Internal(err)
	}
	out, err := t.Call(ctx, m, in, raw)
	if err != nil {
		return nil, true, err
	}
	msg := m.Output.New().Interface()
	if err := proto.Unmarshal(out, msg); err != nil {
		return nil, true, apierr.Internal(fmt.Errorf("call %s: answer: %w", procedure, err))
	}
	js, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(msg)
	if err != nil {
		return nil, true, apierr.Internal(err)
	}
	return js, true, nil
}
