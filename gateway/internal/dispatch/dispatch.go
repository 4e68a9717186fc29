package dispatch

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/host"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/route"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/sdk"
)

// Options configure a Dispatcher.
type Options struct {
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
	Reads Reads
}

// Reads decides which reads a read replica may serve (gateway/internal/replica).
type Reads interface {
	// MayRead answers whether a read by p (nil: anonymous) may be served
	// by the replica.
	MayRead(p *auth.Principal) bool
	// Wrote says that a call of p with side effects has ended.
	Wrote(p *auth.Principal)
}

// A Follower serves from the route table in use: the server's transcoder,
// the Graph node router. Rebuild has every follower prepare for a new table
// before any of them, or the Dispatcher, switches to it, so a table one of
// them cannot serve is refused whole and the old one stays
// (make-before-break).
type Follower interface {
	// Prepare builds what the follower serves from t without serving it
	// yet; commit switches to it and must not fail or block.
	Prepare(t *route.Table) (commit func(), err error)
}

// Dispatcher owns the path of every call of a plugin method (Admit, then
// Call or Stream: validate, authorize, invoke) and the route table in use:
// the gateway's in-process services plus every serving plugin's. The table
// is rebuilt whole when a plugin starts, restarts or is reloaded, and
// swapped atomically.
type Dispatcher struct {
	auth      *auth.Authenticator
	core      route.Source
	calls     *observe.Calls
	reads     Reads
	rates     *UserRates
	host      *host.Host
	followers []Follower
	onTable   func()

	mu    sync.Mutex // serialises rebuilds
	table atomic.Pointer[route.Table]
}

// New returns a Dispatcher with no table yet: set the host, the followers
// and OnTable, then Rebuild.
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
		auth: opts.Auth,
		core: route.Source{Plugin: core,
			Invoker: localInvoker{p: opts.Core, calls: opts.Calls}, PrimaryOnly: true},
		calls: opts.Calls,
		reads: opts.Reads,
		rates: NewUserRates(nil),
	}, nil
}

// UseHost sets the host that runs the plugins' processes. The host is
// built with the Dispatcher's Rebuild and HostServer, hence after it.
func (d *Dispatcher) UseHost(h *host.Host) { d.host = h }

// Follow adds followers of the route table (the server, the Graph
// endpoint); call it before the first Rebuild.
func (d *Dispatcher) Follow(fs ...Follower) { d.followers = append(d.followers, fs...) }

// OnTable sets what is told of each new table; it must not block.
func (d *Dispatcher) OnTable(f func()) { d.onTable = f }

// Rebuild makes and publishes a table for the plugins of snapshot. On
// error nothing changes: the host then keeps the old process serving.
func (d *Dispatcher) Rebuild(snapshot []*host.Loaded) error {
	sources := []route.Source{d.core}
	for _, l := range snapshot {
		sources = append(sources, route.Source{Plugin: l.Plugin,
			Invoker: hostInvoker{h: d.host, plugin: l.Name, calls: d.calls}})
	}
	return d.publish(sources)
}

// publish builds a table of sources, has every follower prepare for it,
// and only then switches all to it.
func (d *Dispatcher) publish(sources []route.Source) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, err := route.Build(sources)
	if err != nil {
		return err
	}
	commits := make([]func(), 0, len(d.followers))
	for _, f := range d.followers {
		commit, err := f.Prepare(t)
		if err != nil {
			return err
		}
		commits = append(commits, commit)
	}
	d.table.Store(t)
	for _, commit := range commits {
		commit()
	}
	if d.onTable != nil {
		d.onTable()
	}
	return nil
}

// Table is the route table in use (nil before the first Rebuild).
func (d *Dispatcher) Table() *route.Table { return d.table.Load() }

// Routes lists a plugin's bindings, for the admin service.
func (d *Dispatcher) Routes(plugin string) []string {
	if t := d.Table(); t != nil {
		return t.Routes(plugin)
	}
	return nil
}

// Authenticate resolves every request's credential once, before routing,
// into its context (server.Options.Authenticate); a bad one is kept in the
// context, refused by Admit for any method that is not public.
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

// Caller names the app and user of a request, for idempotency keys, rate
// limits and the access log.
func Caller(ctx context.Context) (appID, userID string) {
	if p := auth.FromContext(ctx); p != nil {
		return p.AppID, p.UserID
	}
	return "", ""
}

// Caller is the package's Caller, for the edges that take a Dispatcher.
func (d *Dispatcher) Caller(ctx context.Context) (appID, userID string) { return Caller(ctx) }

// CallJSON calls procedure through the route table as caller, with the
// same validation and access checks as the caller's own call. The request
// is protojson (fields the method's input does not have are ignored, so a
// caller may offer a limit to methods that take none); the answer is
// protojson with the proto field names. ok is false when no loaded plugin
// serves procedure. It lets the gateway's own services read what a plugin
// keeps without depending on the plugin's types.
func (d *Dispatcher) CallJSON(ctx context.Context, caller *auth.Principal, procedure string, req []byte) (res []byte, ok bool, err error) {
	m, ok := d.Table().Method(procedure)
	if !ok {
		return nil, false, nil
	}
	ctx = auth.WithPrincipal(ctx, caller)
	in := m.Input.New().Interface()
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(req, in); err != nil {
		return nil, true, apierr.Internal(fmt.Errorf("call %s: request: %w", procedure, err))
	}
	raw, err := proto.Marshal(in)
	if err != nil {
		return nil, true, apierr.Internal(err)
	}
	out, err := d.Call(ctx, m, in, raw)
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
