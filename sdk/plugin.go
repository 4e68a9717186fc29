package sdk

import (
	"context"
	"log/slog"

	"github.com/svcplatform/svc/internal/plugin/pluginrt"
)

// Plugin is one plugin: its identity, its methods and its connection to the
// gateway. Register methods with Handle and HandleStream, then
// call Serve.
type Plugin pluginrt.Plugin

// rt is p's protocol side, which this package's API does not show.
func (p *Plugin) rt() *pluginrt.Plugin { return (*pluginrt.Plugin)(p) }

// New returns a plugin with no methods yet.
func New(info Info) *Plugin {
	return (*Plugin)(pluginrt.New(info.Name, info.Version, info.Events, refuse))
}

// Logger returns the plugin's logger, for what happens outside calls (start
// up, background work). In a handler, use Call.Logger.
func (p *Plugin) Logger() *slog.Logger { return p.rt().Logger() }

// OnHealth sets the readiness check the gateway runs before routing calls
// to this process, e.g. a database ping. Without one the plugin is ready as
// soon as it serves.
func (p *Plugin) OnHealth(check func(ctx context.Context) error) { p.rt().OnHealth(check) }

// OnStop adds a hook run once when the plugin stops, after it has stopped
// serving calls and before the process exits: when the gateway shuts it
// down (a reload, the gateway's own stop) and when the gateway has died.
// Hooks run in the order added and share a deadline of 1.5 s; use them to
// write what is still held in memory (batched counters), not for long work.
func (p *Plugin) OnStop(hook func(ctx context.Context)) { p.rt().OnStop(hook) }

// Host returns a client of the gateway's Host service acting for no one, for
// work outside a call. In a handler, use Call.Host, which acts for the
// caller.
func (p *Plugin) Host() *HostClient { return (*HostClient)(p.rt().Host()) }

// Serve runs the plugin until the gateway stops it or dies, then exits the
// process; it never returns. It must be called from main after every method
// is registered.
//
// Run by hand, outside a gateway, the binary explains that it is a plugin
// and exits.
func (p *Plugin) Serve() { p.rt().Serve() }
