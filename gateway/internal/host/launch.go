package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/svcplatform/svc/gateway/internal/host/sandbox"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
	"github.com/svcplatform/svc/internal/plugin/protocol"
)

// laneConns is the number of fast-lane connections opened with a process,
// ready for the first concurrent calls; the pool grows on demand.
const laneConns = 4

// launch starts a new process of m's plugin and brings it to the point where
// it can take calls: handshake, Describe, Health and the fast lane. It does
// not route calls to it; commit does.
func (h *Host) launch(ctx context.Context, m *managed) (*process, error) {
	name := m.name
	if err := h.checkBinary(name); err != nil {
		return nil, err
	}
	path := filepath.Join(h.opts.Dir, name)
	level := h.opts.Isolation
	if level == sandbox.None && h.opts.RequireIsolation {
		return nil, fmt.Errorf("plugin %q would run uncontained (isolation none) and --require-plugin-isolation is set: run the gateway as root, or on a kernel with Landlock", name)
	}
	digest := h.hashAsync(path)
	pin := ""
	if h.opts.Pins[name] != "" {
		sum, err := digest()
		if err != nil {
			return nil, err
		}
		if err = h.checkPin(name, sum); err != nil {
			return nil, err
		}
		pin = sum
	}
	root, err := h.ensureSockRoot()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(root, name+"-")
	if err != nil {
		return nil, fmt.Errorf("create plugin socket folder: %w", err)
	}
	spec := sandbox.Spec{Binary: path, Dir: dir, Level: level, SHA256: pin}
	if level == sandbox.UID {
		if spec.UID, err = h.pluginUID(name); err == nil {
			spec.GID = spec.UID
			err = os.Chown(dir, spec.UID, spec.GID)
		}
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("plugin %s: its own user: %w", name, err)
		}
	}
	cmd, err := sandbox.Command(spec)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}

	log := h.log.With("plugin", name)
	stderrTail := &tailBuffer{max: 2048}
	var profiles []profileCopy
	if cmd.Env, profiles, err = h.pluginEnv(name, dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	hs := h.hostServerFor(name)
	hl, err := listenHost(dir, spec.UID, hs, log)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("plugin %s: host socket: %w", name, err)
	}
	if pin != "" && level == sandbox.None {
		// Hashed again right before exec: the file may have been replaced
		// since. (Contained, the trampoline checks the file it executes.)
		if sum, err := fileSHA256(path); err != nil || sum != pin {
			hl.close()
			_ = os.RemoveAll(dir)
			return nil, refuse(ErrChecksumMismatch, "plugin %q changed after its checksum was checked", name)
		}
	}
	proc, err := startProcess(cmd, log, stderrTail)
	if err != nil {
		hl.close()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start plugin %q: %w", name, err)
	}
	var lane *protocol.LaneClient
	fail := func(err error) (*process, error) {
		if lane != nil {
			_ = lane.Close()
		}
		proc.kill()
		hl.close()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	lanePath, err := proc.handshake(h.opts.StartTimeout)
	if err != nil {
		return fail(explainStart(name, err, stderrTail.String(), h.opts.StartTimeout))
	}
	pid := cmd.Process.Pid
	hl.pid.Store(int64(pid))
	if filepath.Dir(lanePath) != dir {
		return fail(fmt.Errorf("plugin %q listens outside its private folder: %s", name, lanePath))
	}

	sctx, cancel := context.WithTimeout(ctx, h.opts.StartTimeout)
	defer cancel()
	if lane, err = protocol.DialLane(sctx, lanePath, laneConns, pid); err != nil {
		return fail(fmt.Errorf("plugin %q: %w%s", name, err, stderrNote(stderrTail.String())))
	}
	manifest := new(pluginv1.Manifest)
	err = protocol.CallControl(sctx, lane, protocol.ProcDescribe,
		&pluginv1.DescribeRequest{ProtocolVersion: protocol.Version, HostSocket: hl.path}, manifest)
	if err != nil {
		var fault *protocol.ControlFault
		if errors.As(err, &fault) && fault.Code == uint32(codes.FailedPrecondition) {
			return fail(refuse(ErrProtocolMismatch, "plugin %q: %s", name, fault.Message))
		}
		return fail(fmt.Errorf("plugin %q: describe: %w%s", name, err, stderrNote(stderrTail.String())))
	}
	sum, err := digest()
	if err != nil {
		return fail(err)
	}
	loaded, err := h.checkManifest(name, sum, manifest)
	if err != nil {
		return fail(err)
	}
	health := new(pluginv1.HealthResponse)
	if err := protocol.CallControl(sctx, lane, protocol.ProcHealth, &pluginv1.HealthRequest{}, health); err != nil {
		return fail(fmt.Errorf("plugin %q: health check: %w", name, err))
	}
	if !health.GetServing() {
		return fail(refuse(ErrUnhealthy, "plugin %q is not healthy: %s", name, health.GetMessage()))
	}

	g := &process{loaded: loaded, pid: pid, startedAt: time.Now(), dir: dir, profiles: profiles,
		proc: proc, lane: lane, laneSocket: lanePath, host: hl, drained: make(chan struct{}), killed: make(chan struct{})}
	h.mu.Lock()
	h.live[g] = struct{}{}
	h.mu.Unlock()
	go h.watch(m, g, cmd)
	log.Debug("plugin process ready", "pid", pid, "version", manifest.GetVersion())
	return g, nil
}

// pluginUID is plugin name's user id at isolation sandbox.UID: the same
// for the host's life, never another plugin's.
func (h *Host) pluginUID(name string) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if uid, ok := h.uids[name]; ok {
		return uid, nil
	}
	uid, err := sandbox.UIDFor(h.opts.Instance, name, func(uid int) bool {
		for _, other := range h.uids {
			if other == uid {
				return true
			}
		}
		return false
	})
	if err != nil {
		return 0, err
	}
	if h.uids == nil {
		h.uids = make(map[string]int)
	}
	h.uids[name] = uid
	return uid, nil
}

// hashAsync starts hashing the binary at path and returns a function that
// waits for the digest. Hashing a 20 MB binary takes about as long as the
// handshake, so unless the binary is pinned (checked before exec) the two
// run side by side.
func (h *Host) hashAsync(path string) func() (string, error) {
	type result struct {
		sum string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		sum, err := h.digests.sum(path)
		ch <- result{sum, err}
	}()
	var once sync.Once
	var r result
	return func() (string, error) {
		once.Do(func() { r = <-ch })
		if r.err != nil {
			return "", fmt.Errorf("read plugin binary: %w", r.err)
		}
		return r.sum, nil
	}
}

// watch waits for g's process to exit and, unless the host stopped it,
// treats the exit as a crash.
func (h *Host) watch(m *managed, g *process, cmd *exec.Cmd) {
	<-g.proc.exited
	if g.stopping.Load() {
		return
	}
	reason := "unknown"
	if cmd.ProcessState != nil { // set by Wait before exited closes
		reason = cmd.ProcessState.String()
	}
	m.crashed(g, reason)
}

// checkManifest verifies what a new process described, resolves its
// descriptors and reads it into the gateway's description of a plugin
// (manifestcheck), applying the manifest rules once, here, where the
// manifest crosses the wire.
func (h *Host) checkManifest(name, sum string, m *pluginv1.Manifest) (*Loaded, error) {
	if m.GetName() != name {
		return nil, fmt.Errorf("plugin file %q describes itself as %q; the file must be named after the plugin", name, m.GetName())
	}
	if v := m.GetProtocolVersion(); v != protocol.Version {
		return nil, refuse(ErrProtocolMismatch, "plugin %q describes plugin protocol version %d; this gateway speaks version %d",
			name, v, protocol.Version)
	}
	files, err := ResolveFiles(m.GetFiles())
	if err != nil {
		return nil, fmt.Errorf("plugin %q: its descriptor set does not resolve: %w", name, err)
	}
	if len(m.GetServices()) == 0 {
		return nil, fmt.Errorf("plugin %q serves no service", name)
	}
	for _, s := range m.GetServices() {
		d, err := files.FindDescriptorByName(protoreflect.FullName(s))
		if err != nil {
			return nil, fmt.Errorf("plugin %q: service %s is not in its descriptor set: %w", name, s, err)
		}
		if _, ok := d.(protoreflect.ServiceDescriptor); !ok {
			return nil, fmt.Errorf("plugin %q: %s is not a service", name, s)
		}
	}
	p, err := manifestcheck.CheckFiles(m, files)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	// The wire manifest is not kept: its descriptor protos are a few MB
	// across the plugins, and everything after this reads p.
	return &Loaded{Name: name, Launch: h.launches.Add(1), SHA256: sum, Plugin: p}, nil
}

// checkPin refuses a binary whose digest is not the pinned one. The launch
// hashes the file again right before exec.
func (h *Host) checkPin(name, sum string) error {
	pin := strings.ToLower(strings.TrimSpace(h.opts.Pins[name]))
	if pin == "" {
		return nil
	}
	want, err := hex.DecodeString(pin)
	if err != nil || len(want) != sha256.Size {
		return fmt.Errorf("the pin of plugin %q is not a SHA-256 hex digest: %q", name, pin)
	}
	if pin != sum {
		return refuse(ErrChecksumMismatch, "plugin %q: checksum mismatch: the binary's sha256 is %s, the pin is %s", name, sum, pin)
	}
	return nil
}

// inheritedEnv are the variables of the gateway's environment a plugin
// receives: what any process needs to run, never the gateway's
// configuration or secrets (SVC_MASTER_KEY, SVC_ADMIN_TOKEN, its database
// URL, upstream API keys).
var inheritedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "TZ", "LANG",
	"GODEBUG", "GOTRACEBACK", "GOMAXPROCS", "GOGC", "GOMEMLIMIT", "GOCOVERDIR"}

// pluginEnv is the environment of plugin name's process: the inherited
// variables (inheritedEnv, LC_*), the variables named for the plugin
// (SVC_<NAME>_…, e.g. SVC_HELLO_GREETING for plugin "hello", so that an
// operator configures a partner's plugin without the gateway's help), where
// its sockets go, and what the gateway gives it (Options.Env: its database
// URL, its settings). Nothing else of the gateway's environment leaks.
func (h *Host) pluginEnv(name, dir string) ([]string, []profileCopy, error) {
	env, err := h.pluginEnvFrom(os.Environ(), name, dir)
	if err != nil {
		return nil, nil, err
	}
	env, profiles := redirectProfiles(env, name, dir)
	return env, profiles, nil
}

// profileCopy is a profile file the operator asked of a plugin: written by
// the plugin at from, in its private folder, and copied by the host to to
// once the process has stopped.
type profileCopy struct{ from, to string }

// redirectProfiles points the profiles the operator asked of plugin name
// (SVC_<NAME>_CPUPROFILE, SVC_<NAME>_MEMPROFILE, read by the plugin's
// runtime) into its private folder, the one place a contained plugin may
// write, and answers where each is to be copied when the process stops
// (saveProfiles).
func redirectProfiles(env []string, name, dir string) ([]string, []profileCopy) {
	own := "SVC_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name)) + "_"
	var copies []profileCopy
	for i, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if v == "" || (k != own+"CPUPROFILE" && k != own+"MEMPROFILE") {
			continue
		}
		from := filepath.Join(dir, strings.ToLower(strings.TrimPrefix(k, own))+".pprof")
		copies = append(copies, profileCopy{from: from, to: v})
		env[i] = k + "=" + from
	}
	return env, copies
}

// saveProfiles copies a stopped process's profiles to where the operator
// asked for them; a profile the plugin did not write is logged.
func (h *Host) saveProfiles(g *process) {
	for _, c := range g.profiles {
		b, err := os.ReadFile(c.from)
		if err == nil {
			err = os.WriteFile(c.to, b, 0o644)
		}
		if err != nil {
			h.log.Warn("plugin profile not saved", "plugin", g.loaded.Name, "path", c.to, "error", err)
		}
	}
}

// pluginEnvFrom is pluginEnv with the gateway's environment given.
func (h *Host) pluginEnvFrom(parent []string, name, dir string) ([]string, error) {
	own := "SVC_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name)) + "_"
	env := make([]string, 0, 16)
	for _, kv := range parent {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(inheritedEnv, k) || strings.HasPrefix(k, "LC_") || strings.HasPrefix(k, own) {
			env = append(env, kv)
		}
	}
	// Its private folder is its temporary folder and home too: under
	// containment it is the only place it may write.
	env = slices.DeleteFunc(env, func(kv string) bool {
		return strings.HasPrefix(kv, "TMPDIR=") || strings.HasPrefix(kv, "HOME=")
	})
	env = append(env, "TMPDIR="+dir, "HOME="+dir)
	env = append(env, protocol.EnvFastLaneDir+"="+dir, protocol.EnvMagicCookie+"="+protocol.MagicCookie)
	if h.opts.Env != nil {
		own, err := h.opts.Env(name)
		if err != nil {
			return nil, err
		}
		env = append(env, own...)
	}
	return env, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	hash := sha256.New()
	if _, err := io.Copy(hash, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(hash.Sum(nil)), nil
}

// digestCache remembers binaries' SHA-256 by file identity, so that a
// restart after a crash does not hash 20 MB again and, with a file, neither
// does the gateway's next start (hashing every plugin was about a tenth of
// a start on an initialised database). A pinned binary is hashed again
// anyway, right before exec (SecureConfig) or by the sandbox's trampoline.
type digestCache struct {
	// file, when set, keeps the digests across processes (Options.DigestFile).
	file string
	// hash is fileSHA256; tests count its calls.
	hash func(path string) (string, error)

	mu     sync.Mutex
	loaded bool
	files  map[string]fileDigest
	// changes counts the digests added; saved is how many of them the
	// file holds, so that the saves of plugins launched together write
	// the file once rather than once each.
	changes, saved uint64
	// saving orders the file's writes.
	saving sync.Mutex
}

// fileIdentity tells one file from another at a path (identityOf).
type fileIdentity struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime_ns"`
	Ctime int64  `json:"ctime_ns"`
}

type fileDigest struct {
	fileIdentity
	Sum string `json:"sha256"`
}

func (c *digestCache) sum(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	id := identityOf(fi)
	c.mu.Lock()
	c.load()
	d, ok := c.files[path]
	c.mu.Unlock()
	if ok && d.fileIdentity == id {
		return d.Sum, nil
	}
	hash := c.hash
	if hash == nil {
		hash = fileSHA256
	}
	sum, err := hash(path)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.files[path] = fileDigest{fileIdentity: id, Sum: sum}
	c.changes++
	c.mu.Unlock()
	c.save()
	return sum, nil
}

// load reads the file's digests once (c.mu held). A missing or unreadable
// file is an empty cache: every binary is hashed again.
func (c *digestCache) load() {
	if c.loaded {
		return
	}
	c.loaded = true
	c.files = make(map[string]fileDigest)
	if c.file == "" {
		return
	}
	if b, err := os.ReadFile(c.file); err == nil {
		var files map[string]fileDigest
		if json.Unmarshal(b, &files) == nil {
			for path, d := range files {
				if sum, err := hex.DecodeString(d.Sum); err == nil && len(sum) == sha256.Size {
					c.files[path] = d
				}
			}
		}
	}
}

// save writes the digests of the binaries still present to the file, whole
// (a temporary file renamed over it). A failure is not an error: the next
// start hashes again.
func (c *digestCache) save() {
	if c.file == "" {
		return
	}
	c.saving.Lock()
	defer c.saving.Unlock()
	c.mu.Lock()
	if c.saved == c.changes {
		c.mu.Unlock()
		return // an earlier save, made while this one waited, wrote them
	}
	files, changes := maps.Clone(c.files), c.changes
	c.mu.Unlock()
	for path := range files {
		if _, err := os.Stat(path); err != nil {
			delete(files, path)
		}
	}
	b, err := json.Marshal(files)
	if err != nil {
		return
	}
	tmp := c.file + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return
	}
	if err := os.Rename(tmp, c.file); err != nil {
		_ = os.Remove(tmp)
		return
	}
	c.mu.Lock()
	c.saved = changes
	c.mu.Unlock()
}

// tailBuffer keeps the last bytes written to it: the end of a plugin's
// stderr, quoted when it fails to start.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// Reasons a plugin process is refused; the errors wrap them.
var (
	// ErrProtocolMismatch: the plugin speaks another plugin protocol version.
	ErrProtocolMismatch = errors.New("plugin protocol version mismatch")
	// ErrChecksumMismatch: the binary's SHA-256 is not the pinned one.
	ErrChecksumMismatch = errors.New("plugin checksum mismatch")
	// ErrStdoutBeforeHandshake: the plugin printed to stdout, where the
	// gateway expects the handshake line.
	ErrStdoutBeforeHandshake = errors.New("plugin wrote to stdout before the handshake")
	// ErrUnhealthy: the plugin's health check failed.
	ErrUnhealthy = errors.New("plugin is not healthy")
)

// refusal is an error of one of the kinds above, with its own message.
type refusal struct {
	kind error
	msg  string
}

func (r *refusal) Error() string { return r.msg }
func (r *refusal) Unwrap() error { return r.kind }

func refuse(kind error, format string, args ...any) error {
	return &refusal{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// explainStart rewrites a failed handshake into what an operator needs to
// read: which plugin, what went wrong, and the end of its stderr.
func explainStart(name string, err error, stderrTail string, timeout time.Duration) error {
	var version *protocol.VersionError
	var stdout *stdoutError
	switch {
	case strings.Contains(stderrTail, sandbox.PinMismatchMessage):
		return refuse(ErrChecksumMismatch, "plugin %q changed after its checksum was checked", name)
	case errors.As(err, &version):
		rebuild := ""
		if version.GoPlugin {
			rebuild = " (it was built with an SDK from before 2026-11-27, on hashicorp/go-plugin: rebuild it with the current SDK)"
		}
		return refuse(ErrProtocolMismatch, "plugin %q speaks plugin protocol version %s; this gateway speaks version %d%s",
			name, version.Version, protocol.Version, rebuild)
	case errors.As(err, &stdout):
		return refuse(ErrStdoutBeforeHandshake, "plugin %q wrote to stdout before the handshake: %q; plugins must log to stderr only",
			name, stdout.line)
	case errors.Is(err, errExited):
		return fmt.Errorf("plugin %q exited before the handshake%s", name, stderrNote(stderrTail))
	case errors.Is(err, errHandshakeTimeout):
		return fmt.Errorf("plugin %q did not complete the handshake within %s%s", name, timeout, stderrNote(stderrTail))
	}
	return fmt.Errorf("start plugin %q: %w%s", name, err, stderrNote(stderrTail))
}

func stderrNote(tail string) string {
	if tail == "" {
		return ""
	}
	return "; its stderr ends with: " + tail
}
