package host

import (
	"context"
	"errors"
	"fmt"
	"sort"
)

var errClosed = errors.New("the plugin host is closed")

// Reload replaces a plugin's process with one started from the binary now in
// the plugins folder, make-before-break: the new process is started,
// described and health-checked, OnChange switches the routes, the calls
// switch to it atomically, and the old process is drained and stopped in
// the background. When any step fails the old process keeps serving and
// the error says why.
//
// Reloading a name that is not loaded yet loads a new plugin, so a partner's
// plugin dropped into the folder starts serving without a gateway restart.
func (h *Host) Reload(ctx context.Context, name string) (Info, error) {
	if h.closed.Load() {
		return Info{}, errClosed
	}
	m := h.lookup(name)
	if err := h.checkBinary(name); err != nil {
		if m != nil {
			m.transition(evStartFail, err)
			return m.info(), fmt.Errorf("reload %s: %w; %s", name, err, m.keeps())
		}
		return Info{}, fmt.Errorf("reload %s: %w", name, err)
	}
	isNew := m == nil
	if isNew {
		m = h.add(name)
	}
	m.lifecycle.Lock()
	defer m.lifecycle.Unlock()

	g, err := h.launch(ctx, m)
	if err == nil {
		var old *process
		if old, err = h.commit(m, g); err != nil {
			h.kill(g)
		}
		h.retire(old)
	}
	if err != nil {
		if isNew && m.info().Plugin == nil {
			// A plugin that never served leaves no trace but the error.
			h.remove(m)
			h.log.Error("new plugin refused", "plugin", name, "error", err)
			return Info{Name: name, State: StateStopped, LastError: err.Error()}, fmt.Errorf("load %s: %w", name, err)
		}
		h.log.Error("plugin reload failed", "plugin", name, "error", err)
		m.transition(evStartFail, err)
		return m.info(), fmt.Errorf("reload %s: %w; %s", name, err, m.keeps())
	}
	i := m.info()
	h.log.Info("plugin reloaded", "plugin", name, "version", i.Version, "pid", i.PID, "sha256", i.SHA256)
	return i, nil
}

// keeps tells the operator what still serves after a failed reload.
func (m *managed) keeps() string {
	if g := m.current.Load(); g != nil {
		return fmt.Sprintf("the running process (pid %d) keeps serving", g.pid)
	}
	return "the plugin stays down"
}

// ReloadAll reloads every plugin, and loads any new one found in the folder
// (SIGHUP). Each reload is independent; the error joins the failures.
func (h *Host) ReloadAll(ctx context.Context) error {
	names := make(map[string]bool)
	for _, m := range h.list() {
		names[m.name] = true
	}
	found, err := h.scan()
	if err != nil {
		return err
	}
	for _, n := range found {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var errs []error
	for _, n := range sorted {
		if _, err := h.Reload(ctx, n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// commit makes g take m's calls: OnChange first, with every plugin's
// manifest and g's in place of m's, then one atomic switch. It returns the
// process g replaced, for the caller to retire. The caller holds
// m.lifecycle.
func (h *Host) commit(m *managed, g *process) (old *process, err error) {
	h.commitMu.Lock()
	defer h.commitMu.Unlock()
	if h.closed.Load() {
		return nil, errClosed
	}
	snapshot := h.snapshot(m, g.loaded)
	if h.opts.OnChange != nil {
		if err := h.opts.OnChange(snapshot); err != nil {
			return nil, fmt.Errorf("the gateway refused plugin %q's routes: %w", m.name, err)
		}
	}
	services := make(map[string]string)
	for _, l := range snapshot {
		for _, s := range l.Plugin.Services {
			services[string(s.FullName())] = l.Name
		}
	}
	h.services.Store(&services)
	m.mu.Lock()
	m.loaded = g.loaded
	m.mu.Unlock()
	old = m.current.Swap(g)
	m.transition(evServing, nil)
	h.log.Info("plugin serving", "plugin", m.name, "version", g.loaded.Plugin.Version, "pid", g.pid,
		"launch", g.loaded.Launch)
	return old, nil
}

// snapshot lists what every plugin with routes serves, with next standing
// for target, in name order.
func (h *Host) snapshot(target *managed, next *Loaded) []*Loaded {
	var out []*Loaded
	for _, m := range h.list() {
		if m == target {
			out = append(out, next)
			continue
		}
		m.mu.Lock()
		l := m.loaded
		m.mu.Unlock()
		if l != nil {
			out = append(out, l)
		}
	}
	return out
}
