package pluginrt

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/memtrim"
	"github.com/svcplatform/svc/internal/tracing"
)

// Refuse turns the error a handler returned into its wire form, logging it
// with call's logger when it is a fault of the plugin. Package sdk gives it
// to New: only sdk knows its error type.
type Refuse func(call *Call, err error) *pluginv1.Error

// Plugin is one plugin: its identity, its methods and its connection to the
// gateway.
type Plugin struct {
	name, version string
	events        []string
	log           *slog.Logger
	refuse        Refuse

	mu       sync.Mutex // guards registration; methods is read-only once frozen
	frozen   bool
	methods  map[string]*Method
	services []protoreflect.ServiceDescriptor
	health   func(context.Context) error
	stops    []func(context.Context)
	stopOnce sync.Once
	manifest *pluginv1.Manifest

	host     atomic.Pointer[hostConn]
	hostDial sync.Mutex // one dial of the host service at a time

	laneSocket string // set before serving when the fast lane listens
	served     bool   // Serve runs the process: the gateway is its parent

	// trim hands memory back to the OS after bursts of calls; nil outside
	// Serve (in-process plugins and tests).
	trim *memtrim.Trimmer
}

// New returns a plugin with no methods yet.
func New(name, version string, events []string, refuse Refuse) *Plugin {
	p := &Plugin{
		name: name, version: version, events: events,
		log:     newLogger(stderr),
		refuse:  refuse,
		methods: make(map[string]*Method),
	}
	// Tracing is on when the gateway passed its endpoint; the spans go to
	// the gateway over the Host socket, and are flushed when the plugin
	// stops.
	if tracing.FromEnv() {
		flush := tracing.Start(name, version, spanExporter{p})
		p.stops = append(p.stops, func(ctx context.Context) { _ = flush(ctx) })
	}
	return p
}

// Logger returns the plugin's logger.
func (p *Plugin) Logger() *slog.Logger { return p.log }

// OnHealth sets the readiness check run before calls are routed to the
// plugin.
func (p *Plugin) OnHealth(check func(ctx context.Context) error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mustNotBeFrozen()
	p.health = check
}

// stopTimeout bounds the stop hooks together: the gateway kills a plugin
// that has not exited two seconds after asking it to stop.
const stopTimeout = 1500 * time.Millisecond

// OnStop adds a hook run once when the plugin stops (sdk.Plugin.OnStop).
func (p *Plugin) OnStop(hook func(ctx context.Context)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mustNotBeFrozen()
	p.stops = append(p.stops, hook)
}

// stop runs the stop hooks, once.
func (p *Plugin) stop() {
	p.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		for _, hook := range p.stops {
			hook(ctx)
		}
	})
}

// Host returns a client of the gateway's Host service acting for no one.
func (p *Plugin) Host() *HostClient { return &HostClient{p: p} }

func (p *Plugin) mustNotBeFrozen() {
	if p.frozen {
		panic(fmt.Sprintf("sdk: plugin %q is already serving; register everything before Serve", p.name))
	}
}

// Freeze ends registration and builds the manifest, once.
func (p *Plugin) Freeze() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen {
		return nil
	}
	m, err := p.buildManifest()
	if err != nil {
		return err
	}
	p.manifest = m
	p.frozen = true
	return nil
}

func (p *Plugin) checkHealth(ctx context.Context) *pluginv1.HealthResponse {
	if p.health == nil {
		return &pluginv1.HealthResponse{Serving: true}
	}
	if err := p.health(ctx); err != nil {
		return &pluginv1.HealthResponse{Serving: false, Message: err.Error()}
	}
	return &pluginv1.HealthResponse{Serving: true}
}
