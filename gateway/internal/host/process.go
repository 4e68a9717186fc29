package host

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/svcplatform/svc/internal/plugin/protocol"
)

// process is one running process of a plugin. A hot swap runs two processes of
// the same plugin side by side until the old one has drained.
type process struct {
	loaded    *Loaded
	pid       int
	startedAt time.Time
	dir       string // private socket folder, removed with the process
	// profiles are copied out of dir when the process stops.
	profiles []profileCopy

	client *goplugin.Client
	conn   *protocol.Conn
	lane   *protocol.LaneClient // nil: Invoke over gRPC
	host   *hostLane            // the Host service's socket for this process
	// laneSocket is the fast lane's socket the plugin offered, if any.
	laneSocket string

	// inflight counts calls that hold this process. Once closing is set
	// no new call may hold it, and drained is closed when the count is
	// zero.
	inflight  atomic.Int64
	closing   atomic.Bool
	drained   chan struct{}
	drainOnce sync.Once

	// stopping is set before the host kills the process, so that its exit
	// is not taken for a crash.
	stopping atomic.Bool
	killOnce sync.Once
	killed   chan struct{} // closed when the process is being killed
}

// acquire returns the process taking m's calls, counted as in flight, or
// nil when the plugin is not serving. The caller must release it.
//
// A swap stores the new process before it marks the old one closing, and
// a call counts itself before it checks closing; so a call either sees
// closing and moves on to the new process, or is counted before the
// drain looks at the count.
func (m *managed) acquire() *process {
	for {
		g := m.current.Load()
		if g == nil {
			return nil
		}
		g.inflight.Add(1)
		if !g.closing.Load() {
			return g
		}
		g.release()
		if m.current.Load() == g {
			return nil // closing while still current: the host is closing
		}
	}
}

func (g *process) release() {
	if g.inflight.Add(-1) == 0 && g.closing.Load() {
		g.drainOnce.Do(func() { close(g.drained) })
	}
}

// drain refuses new calls and waits until those in flight are done, ctx
// ends, or timeout passes; it tells whether every call finished.
func (g *process) drain(ctx context.Context, timeout time.Duration) bool {
	g.closing.Store(true)
	if g.inflight.Load() == 0 {
		g.drainOnce.Do(func() { close(g.drained) })
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-g.drained:
		return true
	case <-ctx.Done():
	case <-g.killed:
	case <-t.C:
	}
	return false
}

// kill stops g's process (gracefully first, through go-plugin) and removes
// its sockets.
func (h *Host) kill(g *process) {
	if g == nil {
		return
	}
	g.killOnce.Do(func() {
		g.stopping.Store(true)
		close(g.killed)
		if g.lane != nil {
			_ = g.lane.Close()
		}
		g.client.Kill()
		g.host.close()
		h.saveProfiles(g)
		_ = os.RemoveAll(g.dir)
		h.mu.Lock()
		delete(h.live, g)
		h.mu.Unlock()
	})
}

// retire drains g in the background, then kills it.
func (h *Host) retire(g *process) {
	if g == nil {
		return
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		// Not h.ctx: Close lets drains finish within its own deadline.
		if !g.drain(context.Background(), h.opts.DrainTimeout) {
			h.log.Warn("killing a replaced plugin process with calls still in flight",
				"plugin", g.loaded.Name, "pid", g.pid, "in_flight", g.inflight.Load())
		}
		h.kill(g)
		h.log.Info("replaced plugin process stopped", "plugin", g.loaded.Name, "pid", g.pid)
	}()
}
