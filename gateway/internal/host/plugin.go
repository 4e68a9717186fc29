package host

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcplatform/svc/internal/plugin/protocol"
)

// Restart backoff after a crash or a failed start: 100 ms, doubling, at most
// 10 s; back to 100 ms once a process has served for a minute.
const (
	backoffMin   = 100 * time.Millisecond
	backoffMax   = 10 * time.Second
	backoffReset = time.Minute
)

// managed is one plugin: the process taking its calls, and its
// lifecycle.
type managed struct {
	name        string
	host        *Host
	unavailable string // what Unavailable names: "The <name> plugin"

	// current takes the calls; nil while the plugin is not serving.
	current atomic.Pointer[process]

	// lifecycle serialises everything that starts or replaces a process of
	// this plugin: start, reload, restart, close.
	lifecycle sync.Mutex

	mu       sync.Mutex // guards the fields below
	state    State
	loaded   *Loaded // last process that served, for routes and Info
	lastErr  error
	restarts int
	retrying bool
	backoff  time.Duration
}

// transition moves the plugin's state, recording err as the last error (or
// clearing it when a process took over).
func (m *managed) transition(e event, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	next, terr := m.state.next(e)
	if terr != nil {
		m.host.log.Error("plugin state machine", "plugin", m.name, "error", terr)
		return
	}
	m.state = next
	switch {
	case e == evServing:
		m.lastErr = nil
	case err != nil:
		m.lastErr = err
	}
}

func (m *managed) startFailed(err error) {
	m.host.log.Error("plugin failed to start", "plugin", m.name, "error", err)
	m.transition(evStartFail, err)
}

func (m *managed) info() Info {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := Info{Name: m.name, State: m.state, Restarts: m.restarts, Isolation: m.host.opts.Isolation}
	if m.lastErr != nil {
		i.LastError = m.lastErr.Error()
	}
	if l := m.loaded; l != nil {
		i.Version = l.Plugin.Version
		i.Protocol = protocol.Version // a plugin that speaks another is refused at start
		i.SHA256 = l.SHA256
		i.Plugin = l.Plugin
	}
	if g := m.current.Load(); g != nil {
		i.PID = g.pid
		i.StartedAt = g.startedAt
	}
	return i
}

// crashed handles the unexpected exit of g: if it was taking the calls, they
// answer Unavailable from now on and a new process is started with backoff.
func (m *managed) crashed(g *process, reason string) {
	h := m.host
	// Without waiting for the lifecycle lock (a reload may hold it for
	// seconds): calls stop going to a dead process now.
	swapped := m.current.CompareAndSwap(g, nil)
	if swapped {
		m.noteCrash(g, reason)
	}
	m.lifecycle.Lock()
	defer m.lifecycle.Unlock()
	if !swapped {
		if !m.current.CompareAndSwap(g, nil) {
			h.kill(g) // replaced, or never took calls: nothing to recover
			return
		}
		m.noteCrash(g, reason)
	}
	h.log.Error("plugin process exited", "plugin", m.name, "pid", g.pid, "exit", reason)
	h.kill(g)
	if m.current.Load() != nil {
		return // a reload took over while we waited for the lock
	}
	m.retry()
}

// noteCrash records that g, which was serving, exited.
func (m *managed) noteCrash(g *process, reason string) {
	m.mu.Lock()
	m.restarts++
	if time.Since(g.startedAt) >= backoffReset {
		m.backoff = 0
	}
	m.mu.Unlock()
	m.transition(evCrashed, &exitError{pid: g.pid, reason: reason})
}

// retry starts the restart loop unless it runs already. The caller holds
// lifecycle.
func (m *managed) retry() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.retrying || m.host.closed.Load() {
		return
	}
	m.retrying = true
	m.host.wg.Add(1)
	go m.retryLoop()
}

func (m *managed) nextBackoff() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.backoff == 0:
		m.backoff = backoffMin
	case m.backoff < backoffMax:
		m.backoff = min(2*m.backoff, backoffMax)
	}
	return m.backoff
}

// retryLoop starts a process until one serves, the plugin is reloaded by
// other means, or the host closes.
func (m *managed) retryLoop() {
	h := m.host
	defer h.wg.Done()
	defer func() {
		m.mu.Lock()
		m.retrying = false
		m.mu.Unlock()
	}()
	for {
		t := time.NewTimer(m.nextBackoff())
		select {
		case <-t.C:
		case <-h.ctx.Done():
			t.Stop()
			return
		}
		if done := m.retryOnce(); done {
			return
		}
	}
}

func (m *managed) retryOnce() (done bool) {
	h := m.host
	m.lifecycle.Lock()
	defer m.lifecycle.Unlock()
	if h.closed.Load() || m.current.Load() != nil {
		return true
	}
	g, err := h.launch(h.ctx, m)
	if err == nil {
		var old *process
		if old, err = h.commit(m, g); err != nil {
			h.kill(g)
		}
		h.retire(old)
	}
	if err != nil {
		m.startFailed(err)
		return false
	}
	h.log.Info("plugin serving again", "plugin", m.name, "pid", g.pid)
	return true
}

// exitError is why a serving process stopped.
type exitError struct {
	pid    int
	reason string
}

func (e *exitError) Error() string {
	return fmt.Sprintf("process %d exited: %s", e.pid, e.reason)
}
