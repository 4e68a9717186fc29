package host

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/gateway/internal/host/sandbox"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/internal/testplugin/testsvc"
)

// testpluginBinary returns internal/testplugin built: $SVC_BIN_DIR/testplugin
// when make built it, otherwise a fresh build shared by the package's tests.
var testpluginBinary = sync.OnceValues(func() (string, error) {
	if dir := os.Getenv("SVC_BIN_DIR"); dir != "" {
		if p := filepath.Join(dir, "testplugin"); fileExists(p) {
			return p, nil
		}
	}
	dir, err := os.MkdirTemp("", "svc-testplugin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "testplugin")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/svcplatform/svc/internal/testplugin")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build testplugin: %v\n%s", err, out)
	}
	return bin, nil
})

// installTestBinary puts the test plugin's binary itself (no script) into
// dir as plugin "testplugin", as an operator installs a plugin, and returns
// its path.
func installTestBinary(t *testing.T, dir string) string {
	t.Helper()
	bin, err := testpluginBinary()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "testplugin")
	if err := os.Link(bin, path); err != nil {
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		runHelper(mode)
		return
	}
	code := m.Run()
	if bin, err := testpluginBinary(); err == nil && os.Getenv("SVC_BIN_DIR") == "" {
		_ = os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

// bundle is what a test works with: a host over its own plugins folder.
type bundle struct {
	h       *Host
	dir     string
	changes *changeLog
}

// changeLog records OnChange calls, and refuses them on demand.
type changeLog struct {
	mu     sync.Mutex
	calls  [][]string // plugin@version of each snapshot
	refuse error
}

func (c *changeLog) onChange(snapshot []*Loaded) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refuse != nil {
		return c.refuse
	}
	var s []string
	for _, l := range snapshot {
		s = append(s, l.Name+"@"+l.Plugin.Version)
	}
	c.calls = append(c.calls, s)
	return nil
}

func (c *changeLog) snapshots() [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]string(nil), c.calls...)
}

// setup returns a started host whose folder holds one testplugin per name in
// plugins, configured by its environment. opts, when given, adjusts the
// host's options before it starts.
func setup(t *testing.T, plugins map[string]map[string]string, opts ...func(*Options)) *bundle {
	t.Helper()
	t.Parallel()
	b := &bundle{dir: t.TempDir(), changes: &changeLog{}}
	for name, env := range plugins {
		b.install(t, name, env)
	}
	w := &testWriter{t: t}
	t.Cleanup(func() { w.done.Store(true) }) // runs last: after the host is closed
	o := Options{
		Dir:          b.dir,
		Logger:       slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo})),
		OnChange:     b.changes.onChange,
		DrainTimeout: 5 * time.Second,
		// The lifecycle tests install scripts that exec one shared test
		// binary from a folder only root may enter; a contained plugin may
		// execute only its own file and the system's programs. Containment
		// has its own tests (isolation_test.go).
		Isolation: sandbox.None,
	}
	for _, f := range opts {
		f(&o)
	}
	b.h = New(o)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := b.h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.h.Close(ctx)
	})
	return b
}

// install writes a plugin called name: a script that sets env and execs the
// test plugin (same process id, so the host sees the plugin itself).
func (b *bundle) install(t *testing.T, name string, env map[string]string) {
	t.Helper()
	bin, err := testpluginBinary()
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	sb.WriteString("#!/bin/sh\n")
	fmt.Fprintf(&sb, "export SVC_TESTPLUGIN_NAME='%s'\n", name)
	for k, v := range env {
		fmt.Fprintf(&sb, "export %s='%s'\n", k, v)
	}
	fmt.Fprintf(&sb, "exec '%s' \"$@\"\n", bin)
	writeExecutable(t, filepath.Join(b.dir, name), sb.String())
}

// writeExecutable replaces path atomically, as an operator deploying a new
// binary does (a running binary cannot be written in place).
func writeExecutable(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// echo calls Echo on plugin and decodes the answer.
func (b *bundle) echo(ctx context.Context, plugin, text string) (*testpluginv1.EchoResponse, error) {
	in, _ := proto.Marshal(&testpluginv1.EchoRequest{Id: "1", Text: text})
	resp, err := b.h.Invoke(ctx, plugin, &pluginv1.InvokeRequest{Procedure: testsvc.ProcEcho, Request: in, TraceId: "t-" + text})
	if err != nil {
		return nil, err
	}
	if resp.GetError() != nil {
		return nil, wire.ErrorFromProto(resp.GetError())
	}
	var out testpluginv1.EchoResponse
	if err := proto.Unmarshal(resp.GetResponse(), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (b *bundle) info(t *testing.T, name string) Info {
	t.Helper()
	for _, i := range b.h.Plugins() {
		if i.Name == name {
			return i
		}
	}
	t.Fatalf("no plugin %s", name)
	return Info{}
}

// waitFor polls cond until it holds or the time is up.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processGone tells whether pid has exited (a zombie nobody reaped counts).
func processGone(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

// testWriter sends log lines to the test's log while the test runs.
type testWriter struct {
	t    *testing.T
	done atomic.Bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	if w.done.Load() {
		return len(p), nil
	}
	sc := bufio.NewScanner(strings.NewReader(string(p)))
	for sc.Scan() {
		w.t.Log(sc.Text())
	}
	return len(p), nil
}
