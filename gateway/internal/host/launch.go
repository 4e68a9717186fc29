package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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
	var secure *goplugin.SecureConfig
	pin := ""
	if h.opts.Pins[name] != "" {
		sum, err := digest()
		if err != nil {
			return nil, err
		}
		if secure, err = h.checkPin(name, sum); err != nil {
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
	if level != sandbox.None {
		// The trampoline checks the pin on the file it executes; go-plugin's
		// check would hash the trampoline.
		secure = nil
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
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig: protocol.Handshake,
		VersionedPlugins: map[int]goplugin.PluginSet{
			protocol.Version: {protocol.PluginKey: &protocol.GoPlugin{Host: hs}},
		},
		Cmd:              cmd,
		SkipHostEnv:      true, // pluginEnv passes the environment on, minus go-plugin's own variables
		SecureConfig:     secure,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         h.opts.transport != transportGRPCPlain,
		GRPCDialOptions:  protocol.DialOptions(),
		StartTimeout:     h.opts.StartTimeout,
		Stderr:           stderrTail,
		SyncStdout:       writerFunc(func(p []byte) (int, error) { log.Warn("plugin wrote to stdout", "text", string(p)); return len(p), nil }),
		Logger:           newHCLog(log, name),
		UnixSocketConfig: socketConfig(spec),
	})
	fail := func(err error) (*process, error) {
		client.Kill()
		hl.close()
		_ = os.RemoveAll(dir)
		return nil, err
	}

	rpc, err := client.Client()
	if err != nil {
		return fail(explainStart(name, err, stderrTail.String(), h.opts.StartTimeout))
	}
	raw, err := rpc.Dispense(protocol.PluginKey)
	if err != nil {
		return fail(fmt.Errorf("plugin %q: dispense: %w", name, err))
	}
	conn := raw.(*protocol.Conn)
	pid := cmd.Process.Pid
	hl.pid.Store(int64(pid))
	conn.HostSocket = hl.path

	sctx, cancel := context.WithTimeout(ctx, h.opts.StartTimeout)
	defer cancel()
	manifest, err := conn.Describe(sctx)
	if err != nil {
		if status.Code(err) == codes.FailedPrecondition {
			return fail(refuse(ErrProtocolMismatch, "plugin %q: %s", name, status.Convert(err).Message()))
		}
		return fail(fmt.Errorf("plugin %q: %w%s", name, err, stderrNote(stderrTail.String())))
	}
	sum, err := digest()
	if err != nil {
		return fail(err)
	}
	loaded, err := h.checkManifest(name, sum, manifest)
	if err != nil {
		return fail(err)
	}
	health, err := conn.Plugin.Health(sctx, &pluginv1.HealthRequest{})
	if err != nil {
		return fail(fmt.Errorf("plugin %q: health check: %w", name, err))
	}
	if !health.GetServing() {
		return fail(refuse(ErrUnhealthy, "plugin %q is not healthy: %s", name, health.GetMessage()))
	}

	g := &process{loaded: loaded, pid: pid, startedAt: time.Now(), dir: dir, profiles: profiles,
		client: client, conn: conn, host: hl, drained: make(chan struct{}), killed: make(chan struct{})}
	g.laneSocket = manifest.GetFastLane().GetSocketPath()
	if sock := g.laneSocket; sock != "" && h.opts.transport == transportFastLane {
		if filepath.Dir(sock) != dir {
			return fail(fmt.Errorf("plugin %q offers a fast lane outside its private folder: %s", name, sock))
		}
		if g.lane, err = protocol.DialLane(sctx, sock, laneConns, pid); err != nil {
			// gRPC still works: slower, not wrong.
			log.Warn("fast lane unreachable; calls go over gRPC", "error", err)
		}
	}
	h.mu.Lock()
	h.live[g] = struct{}{}
	h.mu.Unlock()
	go h.watch(m, g, cmd)
	log.Debug("plugin process ready", "pid", pid, "version", manifest.GetVersion(), "fast_lane", g.lane != nil)
	return g, nil
}

// socketConfig makes the sockets go-plugin's broker listens on for a
// plugin's calls back to the gateway (made by the gateway, in its temporary
// folder) writable by the plugin's group when it runs as a user of its own:
// by default only their owner, the gateway, could connect.
func socketConfig(spec sandbox.Spec) *goplugin.UnixSocketConfig {
	if spec.Level != sandbox.UID {
		return nil
	}
	return &goplugin.UnixSocketConfig{Group: strconv.Itoa(spec.GID)}
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
	<-g.conn.Exited()
	if g.stopping.Load() {
		return
	}
	reason := "unknown"
	if cmd.ProcessState != nil { // set by go-plugin's Wait before Exited closes
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

// checkPin refuses a binary whose digest is not the pinned one, and returns
// go-plugin's check, which hashes the file again right before exec.
func (h *Host) checkPin(name, sum string) (*goplugin.SecureConfig, error) {
	pin := strings.ToLower(strings.TrimSpace(h.opts.Pins[name]))
	if pin == "" {
		return nil, nil
	}
	want, err := hex.DecodeString(pin)
	if err != nil || len(want) != sha256.Size {
		return nil, fmt.Errorf("the pin of plugin %q is not a SHA-256 hex digest: %q", name, pin)
	}
	if pin != sum {
		return nil, refuse(ErrChecksumMismatch, "plugin %q: checksum mismatch: the binary's sha256 is %s, the pin is %s", name, sum, pin)
	}
	return &goplugin.SecureConfig{Checksum: want, Hash: sha256.New()}, nil
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
	env = append(env, protocol.EnvGoPluginSocketDir+"="+dir)
	if h.opts.transport == transportFastLane {
		env = append(env, protocol.EnvFastLaneDir+"="+dir)
	}
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
// restart after a crash does not hash 20 MB again. A pinned binary is hashed
// again anyway, right before exec (SecureConfig).
type digestCache struct {
	mu    sync.Mutex
	files map[string]fileDigest
}

type fileDigest struct {
	ino, size uint64
	mtime     time.Time
	sum       string
}

func (c *digestCache) sum(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	id := fileDigest{size: uint64(fi.Size()), mtime: fi.ModTime(), ino: inode(fi)}
	c.mu.Lock()
	d, ok := c.files[path]
	c.mu.Unlock()
	if ok && d.ino == id.ino && d.size == id.size && d.mtime.Equal(id.mtime) {
		return d.sum, nil
	}
	if id.sum, err = fileSHA256(path); err != nil {
		return "", err
	}
	c.mu.Lock()
	if c.files == nil {
		c.files = make(map[string]fileDigest)
	}
	c.files[path] = id
	c.mu.Unlock()
	return id.sum, nil
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
	// ErrStdoutBeforeHandshake: the plugin printed to stdout, where go-plugin
	// expects the handshake.
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

// explainStart rewrites go-plugin's start errors into what an operator needs
// to read: which plugin, what went wrong, and the end of its stderr.
func explainStart(name string, err error, stderrTail string, timeout time.Duration) error {
	msg := err.Error()
	const unrecognized = "Unrecognized remote plugin message: "
	switch {
	case errors.Is(err, goplugin.ErrChecksumsDoNotMatch), strings.Contains(stderrTail, sandbox.PinMismatchMessage):
		return refuse(ErrChecksumMismatch, "plugin %q changed after its checksum was checked", name)
	case strings.HasPrefix(msg, unrecognized):
		line, _, _ := strings.Cut(strings.TrimPrefix(msg, unrecognized), "\n")
		if line == "" {
			return fmt.Errorf("plugin %q exited before the handshake%s", name, stderrNote(stderrTail))
		}
		return refuse(ErrStdoutBeforeHandshake, "plugin %q wrote to stdout before the handshake: %q; plugins must log to stderr only",
			name, line)
	case strings.HasPrefix(msg, "incompatible API version with plugin"):
		theirs := "another"
		if _, v, ok := strings.Cut(msg, "Plugin version: "); ok {
			theirs, _, _ = strings.Cut(v, ",")
		}
		return refuse(ErrProtocolMismatch, "plugin %q speaks plugin protocol version %s; this gateway speaks version %d",
			name, theirs, protocol.Version)
	case strings.Contains(msg, "plugin exited before we could connect"):
		return fmt.Errorf("plugin %q exited before the handshake%s", name, stderrNote(stderrTail))
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
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
