package sdk

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

// Plugin is one plugin: its identity, its methods and its connection to the
// gateway. Register methods with Handle and HandleStream, then
// call Serve.
type Plugin struct {
	info Info
	log  *slog.Logger

	mu       sync.Mutex // guards registration; methods is read-only once frozen
	frozen   bool
	methods  map[string]*method
	services []protoreflect.ServiceDescriptor
	health   func(context.Context) error
	stops    []func(context.Context)
	stopOnce sync.Once
	manifest *pluginv1.Manifest

	host     atomic.Pointer[hostConn]
	hostDial sync.Mutex // one dial of the host service at a time

	laneSocket string // set before serving when the fast lane listens

	// trim hands memory back to the OS after bursts of calls; nil outside
	// Serve (in-process plugins and tests).
	trim *memtrim.Trimmer
}

// New returns a plugin with no methods yet.
func New(info Info) *Plugin {
	p := &Plugin{
		info:    info,
		log:     newLogger(stderr),
		methods: make(map[string]*method),
	}
	// Tracing is on when the gateway passed an endpoint; its spans are
	// flushed when the plugin stops.
	flush, err := tracing.FromEnv(context.Background(), info.Name, info.Version)
	if err != nil {
		p.log.Error("tracing stays off", "error", err)
	} else if tracing.Enabled() {
		p.stops = append(p.stops, func(ctx context.Context) { _ = flush(ctx) })
	}
	return p
}

// Info returns the plugin's identity.
func (p *Plugin) Info() Info { return p.info }

// Logger returns the plugin's logger, for what happens outside calls (start
// up, background work). In a handler, use Call.Logger.
func (p *Plugin) Logger() *slog.Logger { return p.log }

// OnHealth sets the readiness check the gateway runs before routing calls
// to this process, e.g. a database ping. Without one the plugin is ready as
// soon as it serves.
func (p *Plugin) OnHealth(check func(ctx context.Context) error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mustNotBeFrozen()
	p.health = check
}

// stopTimeout bounds the stop hooks together: the gateway kills a plugin
// that has not exited two seconds after asking it to stop.
const stopTimeout = 1500 * time.Millisecond

// OnStop adds a hook run once when the plugin stops, after it has stopped
// serving calls and before the process exits: when the gateway shuts it
// down (a reload, the gateway's own stop) and when the gateway has died.
// Hooks run in the order added and share a deadline of 1.5 s; use them to
// write what is still held in memory (batched counters), not for long work.
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

// Host returns a client of the gateway's Host service acting for no one, for
// work outside a call. In a handler, use Call.Host, which acts for the
// caller.
func (p *Plugin) Host() *HostClient { return &HostClient{p: p} }

func (p *Plugin) mustNotBeFrozen() {
	if p.frozen {
		panic(fmt.Sprintf("sdk: plugin %q is already serving; register everything before Serve", p.info.Name))
	}
}

// freeze ends registration and builds the manifest, once.
func (p *Plugin) freeze() error {
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
