package host

import (
	"context"
	"fmt"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
)

// Probe asks plugin name's serving process whether it is healthy: its
// Health call, answered within ctx (the platform status page's probe,
// CONTRACT §18). It fails when the plugin is not loaded, has no process
// taking calls (starting, restarting, stopped) or does not answer, and
// with ErrUnhealthy when the plugin answers that it is not serving.
func (h *Host) Probe(ctx context.Context, name string) error {
	m := h.lookup(name)
	if m == nil {
		return fmt.Errorf("plugin %q is not loaded", name)
	}
	g := m.acquire()
	if g == nil {
		return fmt.Errorf("plugin %s is %s", name, m.info().State)
	}
	defer g.release()
	res := new(pluginv1.HealthResponse)
	if err := protocol.CallControl(ctx, g.lane, protocol.ProcHealth, &pluginv1.HealthRequest{}, res); err != nil {
		return fmt.Errorf("plugin %s: health check: %w", name, err)
	}
	if !res.GetServing() {
		return refuse(ErrUnhealthy, "plugin %s is not healthy: %s", name, res.GetMessage())
	}
	return nil
}
