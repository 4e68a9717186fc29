package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/svcplatform/svc/gateway/internal/host/sandbox"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
	"github.com/svcplatform/svc/internal/plugin/protocol"
)

// Options configures a Host.
type Options struct {
	// Dir is the plugins folder: every executable file in it is a plugin,
	// named by its file name.
	Dir string
	// Pins optionally maps a plugin name to the SHA-256 (hex) its binary
	// must have; a binary that does not match is refused.
	Pins map[string]string
	// Logger receives the host's events and the plugins' own log lines;
	// nil: slog.Default().
	Logger *slog.Logger
	// HostServer is served to every plugin through go-plugin's broker, for
	// its calls back to the gateway. Nil: a server whose Call routes to the
	// plugin serving the procedure (Host.Route) as is, and whose PageAccess
	// is unimplemented. CallerPlugin tells a HostServer who is calling.
	HostServer protocol.HostService
	// OnChange is called before a new process starts taking calls, with the
	// manifests of every plugin that has routes (serving, or restarting
	// after a crash), the new one included. An error aborts the change: a
	// reload fails and the old process keeps serving.
	OnChange func(snapshot []*Loaded) error
	// StartTimeout bounds one start: exec, handshake, Describe and Health.
	// Zero: 10 s.
	StartTimeout time.Duration
	// DrainTimeout bounds the wait for calls in flight on a process being
	// replaced or stopped, after which it is killed anyway. Zero: 30 s.
	DrainTimeout time.Duration
	// Env returns extra environment variables (KEY=value) for one plugin's
	// processes, beyond the scrubbed environment every plugin gets (see
	// pluginEnv): its database URL, settings meant for that plugin alone.
	// An error stops that launch. Nil: none.
	Env func(plugin string) ([]string, error)
	// Isolation is how plugin processes are contained (package sandbox).
	// Empty: the strongest this process can give, sandbox.Available().
	Isolation sandbox.Level
	// RequireIsolation refuses to start a plugin that would run with
	// sandbox.None.
	RequireIsolation bool
	// DigestFile, when set, is where the plugin binaries' SHA-256 digests
	// are kept by file identity (device, inode, size, modification and
	// status change times), so a start does not hash an unchanged binary
	// again. It belongs in the gateway's data folder.
	DigestFile string
	// Instance names the installation (its data folder) when plugins run
	// as users of their own: it seeds their user ids, so that two
	// installations on one machine most likely give their plugins
	// different users.
	Instance string
}

// Loaded is one plugin process's description, as the gateway routes it.
type Loaded struct {
	// Name is the plugin's name.
	Name string
	// Launch numbers the processes the host started, across plugins.
	Launch uint64
	// SHA256 is the hex digest of the binary the process was started from.
	SHA256 string
	// Plugin is what the process described, checked and resolved when it
	// started (internal/plugin/manifestcheck): the gateway's one
	// description of a plugin, which the route table is built from.
	Plugin *manifestcheck.Plugin
}

// Info is a plugin as operators see it.
type Info struct {
	Name      string
	Version   string
	Protocol  int
	SHA256    string
	PID       int
	State     State
	StartedAt time.Time
	// Isolation is how the plugin's processes are contained.
	Isolation sandbox.Level
	// Plugin describes the plugin's routes; nil before its first
	// successful start.
	Plugin *manifestcheck.Plugin
	// Restarts counts the restarts after a crash.
	Restarts int
	// LastError is why the last start, restart or reload failed, if it did.
	LastError string
}

// String is a one-line summary for logs.
func (i Info) String() string {
	s := fmt.Sprintf("%s %s %s pid=%d protocol=%d sha256=%.12s restarts=%d", i.Name, i.Version, i.State, i.PID, i.Protocol, i.SHA256, i.Restarts)
	if i.LastError != "" {
		s += " last_error=" + strconv.Quote(i.LastError)
	}
	return s
}

// Host runs the plugins of one folder.
type Host struct {
	opts Options
	log  *slog.Logger

	// plugins maps a name to its plugin; replaced, never modified, so that
	// calls read it without a lock.
	plugins atomic.Pointer[map[string]*managed]
	// services maps a service's full name to the plugin serving it.
	services atomic.Pointer[map[string]string]

	mu       sync.Mutex     // guards writes of plugins, sockRoot, live
	sockRoot string         // folder of the plugins' private folders: 0700, or 0711 when plugins have users of their own
	uids     map[string]int // each plugin's user id, at isolation sandbox.UID
	live     map[*process]struct{}

	// delegated holds the principals of calls in flight, for the plugins'
	// calls back to the Host service.
	delegated delegations

	commitMu sync.Mutex // serialises route changes across plugins
	launches atomic.Uint64
	digests  digestCache

	ctx     context.Context // ends background work at Close
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	started atomic.Bool
	closed  atomic.Bool
}

// New returns a Host; Start starts the plugins.
func New(opts Options) *Host {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 10 * time.Second
	}
	if opts.DrainTimeout == 0 {
		opts.DrainTimeout = 30 * time.Second
	}
	if opts.Isolation == "" {
		opts.Isolation = sandbox.Available()
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Host{opts: opts, log: opts.Logger, ctx: ctx, cancel: cancel, live: make(map[*process]struct{})}
	h.digests.file = opts.DigestFile
	h.plugins.Store(&map[string]*managed{})
	h.services.Store(&map[string]string{})
	return h
}

// Start starts every plugin in the folder and returns when each one is
// serving or has failed. A plugin that fails is logged, shown in Plugins
// with its error, and retried with backoff in the background; it does not
// stop the others. Start fails only when the host cannot work at all.
func (h *Host) Start(ctx context.Context) error {
	if !h.started.CompareAndSwap(false, true) {
		return errors.New("the plugin host is already started")
	}
	if h.closed.Load() {
		return errClosed
	}
	if _, err := h.ensureSockRoot(); err != nil {
		return err
	}
	names, err := h.scan()
	if err != nil {
		return err
	}
	type started struct {
		g   *process
		err error
	}
	results := make([]started, len(names))
	ms := make([]*managed, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		ms[i] = h.add(name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i].g, results[i].err = h.launch(ctx, ms[i])
		}()
	}
	wg.Wait()
	// Routes change one plugin at a time, in name order, so that a conflict
	// between two plugins always refuses the same one.
	for i, m := range ms {
		m.lifecycle.Lock()
		err := results[i].err
		if err == nil {
			var old *process
			old, err = h.commit(m, results[i].g)
			if err != nil {
				h.kill(results[i].g)
			}
			h.retire(old)
		}
		if err != nil {
			m.startFailed(err)
			m.retry()
		}
		m.lifecycle.Unlock()
	}
	return nil
}

// Close stops every plugin: new calls answer Unavailable, calls in flight
// are drained (bounded by ctx and DrainTimeout), then the processes are
// stopped.
func (h *Host) Close(ctx context.Context) error {
	if !h.closed.CompareAndSwap(false, true) {
		return nil
	}
	h.cancel()
	var wg sync.WaitGroup
	for _, m := range h.list() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.lifecycle.Lock()
			g := m.current.Swap(nil)
			m.transition(evStopped, nil)
			m.lifecycle.Unlock()
			if g != nil {
				g.drain(ctx, h.opts.DrainTimeout)
				h.kill(g)
			}
		}()
	}
	wg.Wait()

	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		// Drains still running are cut short: kill what is left.
		h.mu.Lock()
		left := make([]*process, 0, len(h.live))
		for g := range h.live {
			left = append(left, g)
		}
		h.mu.Unlock()
		for _, g := range left {
			h.kill(g)
		}
		<-done
	}
	h.mu.Lock()
	root := h.sockRoot
	h.mu.Unlock()
	if root != "" {
		_ = os.RemoveAll(root)
	}
	return ctx.Err()
}

// Plugins lists the plugins by name.
func (h *Host) Plugins() []Info {
	ms := h.list()
	out := make([]Info, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.info())
	}
	return out
}

// EventTypes is the catalog of event types apps may subscribe to: every
// type the plugins declare in their manifests (sdk.Info.Events), sorted.
// A partner plugin's events join it when the plugin loads, with no change
// to the gateway. Plugins that were loaded once keep their types while
// they restart, since their last manifest is kept.
func (h *Host) EventTypes() []string {
	var out []string
	for _, p := range h.Plugins() {
		if p.Plugin == nil {
			continue
		}
		for _, t := range p.Plugin.Events {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Ready returns nil when every plugin is serving, and otherwise says which
// are not and why.
func (h *Host) Ready() error {
	var errs []error
	for _, m := range h.list() {
		if i := m.info(); i.State != StateServing {
			msg := fmt.Sprintf("plugin %s is %s", i.Name, i.State)
			if i.LastError != "" {
				msg += ": " + i.LastError
			}
			errs = append(errs, errors.New(msg))
		}
	}
	return errors.Join(errs...)
}

// Route returns the plugin serving procedure ("/package.Service/Method"),
// by the services the plugins described.
func (h *Host) Route(procedure string) (plugin string, ok bool) {
	service, _, found := strings.Cut(strings.TrimPrefix(procedure, "/"), "/")
	if !found {
		return "", false
	}
	plugin, ok = (*h.services.Load())[service]
	return plugin, ok
}

// list returns the plugins in name order.
func (h *Host) list() []*managed {
	table := *h.plugins.Load()
	out := make([]*managed, 0, len(table))
	for _, m := range table {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func (h *Host) lookup(name string) *managed {
	return (*h.plugins.Load())[name]
}

// add returns the plugin called name, registering it first if needed.
func (h *Host) add(name string) *managed {
	h.mu.Lock()
	defer h.mu.Unlock()
	old := *h.plugins.Load()
	if m, ok := old[name]; ok {
		return m
	}
	m := &managed{name: name, host: h, state: StateStarting,
		unavailable: fmt.Sprintf("The %s plugin", name)}
	table := make(map[string]*managed, len(old)+1)
	for k, v := range old {
		table[k] = v
	}
	table[name] = m
	h.plugins.Store(&table)
	return m
}

// remove forgets a plugin that never served.
func (h *Host) remove(m *managed) {
	h.mu.Lock()
	defer h.mu.Unlock()
	old := *h.plugins.Load()
	if old[m.name] != m {
		return
	}
	table := make(map[string]*managed, len(old))
	for k, v := range old {
		if k != m.name {
			table[k] = v
		}
	}
	h.plugins.Store(&table)
}

// validName keeps plugin names to what is safe in paths, logs and URLs.
var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// scan lists the plugins in the folder: executable regular files (or links
// to them) with a valid name.
func (h *Host) scan() ([]string, error) {
	entries, err := os.ReadDir(h.opts.Dir)
	if errors.Is(err, os.ErrNotExist) {
		h.log.Warn("plugins folder does not exist; no plugins loaded", "dir", h.opts.Dir)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read plugins folder: %w", err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		if err := h.checkBinary(name); err != nil {
			if validName.MatchString(name) {
				h.log.Debug("not a plugin", "file", name, "reason", err)
			} else {
				h.log.Warn("ignoring a file in the plugins folder", "file", name, "reason", err)
			}
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// checkBinary tells whether name is a plugin binary in the folder.
func (h *Host) checkBinary(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("%q is not a valid plugin name (lower-case letters, digits, - and _)", name)
	}
	path := filepath.Join(h.opts.Dir, name)
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("no plugin binary %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return checkOwnership(path, fi, os.Geteuid())
}

// checkOwnership refuses a plugin binary that someone other than the
// gateway's user (or root) could have written: owned by another user, or
// writable by group or others. Whoever can replace a plugin runs code with
// the gateway's database access.
func checkOwnership(path string, fi os.FileInfo, euid int) error {
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by group or others (mode %v): chmod go-w it", path, fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != euid && st.Uid != 0 {
		return fmt.Errorf("%s is owned by uid %d, not by the gateway's user (uid %d) or root", path, st.Uid, euid)
	}
	return nil
}

// ensureSockRoot returns the private folder of the plugins' sockets,
// creating it the first time.
func (h *Host) ensureSockRoot() (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sockRoot != "" {
		return h.sockRoot, nil
	}
	// MkdirTemp creates the folder with mode 0700: no other user can reach
	// a socket inside. Plugins with users of their own must pass through
	// it to their own folders (0700 each), but not list it.
	root, err := os.MkdirTemp("", "svc-plugins-")
	if err != nil {
		return "", fmt.Errorf("create the plugins' socket folder: %w", err)
	}
	if h.opts.Isolation == sandbox.UID {
		if err := os.Chmod(root, 0o711); err != nil {
			return "", fmt.Errorf("create the plugins' socket folder: %w", err)
		}
	}
	h.sockRoot = root
	return root, nil
}
