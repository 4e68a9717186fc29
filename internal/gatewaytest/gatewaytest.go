package gatewaytest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/pgtest"
)

// Options configure one gateway process.
type Options struct {
	// DatabaseURL defaults to a fresh pgtest database.
	DatabaseURL string
	// Embedded runs the gateway on its own embedded cluster under DataDir
	// instead of an external database.
	Embedded bool
	// PluginsDir defaults to the built plugins folder.
	PluginsDir string
	// DataDir defaults to a temporary folder.
	DataDir string
	// Args are extra command-line flags.
	Args []string
	// Env are extra environment variables (KEY=value).
	Env []string
	// NoWait skips waiting for /readyz.
	NoWait bool
	// TLSCert and TLSKey (PEM files) serve HTTPS; the certificate must be
	// valid for 127.0.0.1. Gateway.Client then trusts it.
	TLSCert, TLSKey string
}

// Gateway is a running gateway process.
type Gateway struct {
	// URL is the base URL, e.g. http://127.0.0.1:41234.
	URL string
	// Addr is host:port.
	Addr    string
	DataDir string
	// Client talks to this gateway (it trusts the test certificate under TLS).
	Client *http.Client
	cmd    *exec.Cmd
	logs   *syncBuffer
	done   chan struct{}
}

// startTimeout bounds a gateway's start in tests.
const startTimeout = 2 * time.Minute

// Start runs a gateway and waits until /readyz answers 200.
func Start(t testing.TB, opts Options) *Gateway {
	t.Helper()
	bin := BinDir(t)
	if opts.DatabaseURL == "" && !opts.Embedded {
		opts.DatabaseURL = pgtest.NewDatabase(t)
	}
	if opts.PluginsDir == "" {
		opts.PluginsDir = filepath.Join(bin, "plugins")
	}
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	args := append([]string{"--addr", "127.0.0.1:0", "--data-dir", opts.DataDir,
		"--plugins-dir", opts.PluginsDir, "--log-level", "debug"}, opts.Args...)
	if opts.TLSCert != "" {
		args = append(args, "--tls-cert", opts.TLSCert, "--tls-key", opts.TLSKey)
	}
	cmd := exec.Command(filepath.Join(bin, "gateway"), args...)
	cmd.Env = os.Environ()
	if !opts.Embedded {
		cmd.Env = append(cmd.Env, "SVC_DATABASE_URL="+opts.DatabaseURL)
	}
	cmd.Env = append(cmd.Env, opts.Env...)
	g := &Gateway{DataDir: opts.DataDir, cmd: cmd, logs: &syncBuffer{}, done: make(chan struct{})}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatalf("start gateway: %v", err)
	}
	addrc := make(chan string, 1)
	go g.readLogs(stderr, addrc)
	go func() { _ = cmd.Wait(); close(g.done) }()
	t.Cleanup(func() {
		g.Stop(t)
		if t.Failed() {
			t.Logf("gateway logs:\n%s", g.Logs())
		}
	})
	select {
	case g.Addr = <-addrc:
	case <-g.done:
		t.Fatalf("gateway exited before serving:\n%s", g.Logs())
	// A bound, not a speed check: a first start creates the embedded
	// cluster (initdb), which on a machine busy with parallel packages
	// takes far longer than its usual seconds.
	case <-time.After(startTimeout):
		t.Fatalf("gateway did not start within %s:\n%s", startTimeout, g.Logs())
	}
	g.URL = "http://" + g.Addr
	g.Client = http.DefaultClient
	if opts.TLSCert != "" {
		g.URL = "https://" + g.Addr
		g.Client = tlsClient(t, opts.TLSCert)
	}
	if !opts.NoWait {
		g.WaitHealthy(t, startTimeout)
	}
	return g
}

// readLogs copies the JSON log lines and reports the serving address.
func (g *Gateway) readLogs(r io.Reader, addrc chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sent := false
	for sc.Scan() {
		line := sc.Bytes()
		g.logs.Write(append(line, '\n'))
		if sent {
			continue
		}
		var rec struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Msg == "gateway serving" && rec.Addr != "" {
			addrc <- rec.Addr
			sent = true
		}
	}
}

// WaitHealthy polls /readyz until it answers 200: the gateway serves, its
// database is reachable and every plugin serves.
func (g *Gateway) WaitHealthy(t testing.TB, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		res, err := g.Client.Get(g.URL + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-g.done:
			t.Fatalf("gateway exited:\n%s", g.Logs())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("gateway not healthy after %s:\n%s", timeout, g.Logs())
}

// PID is the gateway's process id.
func (g *Gateway) PID() int { return g.cmd.Process.Pid }

// Signal sends sig to the gateway.
func (g *Gateway) Signal(sig os.Signal) error { return g.cmd.Process.Signal(sig) }

// Done is closed when the process has exited.
func (g *Gateway) Done() <-chan struct{} { return g.done }

// Logs returns everything the gateway logged so far.
func (g *Gateway) Logs() string { return g.logs.String() }

// Stop sends SIGTERM and waits, killing the process after 15 s.
func (g *Gateway) Stop(t testing.TB) {
	select {
	case <-g.done:
		return
	default:
	}
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(15 * time.Second):
		t.Errorf("gateway did not stop within 15s of SIGTERM; killing it")
		_ = g.cmd.Process.Kill()
		<-g.done
	}
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// BinDir returns the folder holding gateway, plugins/ and testplugin, building them
// when SVC_BIN_DIR is not set.
func BinDir(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv("SVC_BIN_DIR"); dir != "" {
		return dir
	}
	buildOnce.Do(func() { buildDir, buildErr = build() })
	if buildErr != nil {
		t.Fatalf("build binaries: %v", buildErr)
	}
	return buildDir
}

func build() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "svc-bin-")
	if err != nil {
		return "", err
	}
	run := func(args ...string) error {
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run("build", "-o", filepath.Join(dir, "gateway"), "./gateway/cmd/gateway"); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, "plugins"), 0o755); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(filepath.Join(root, "plugins"))
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || name == "sdk" || name == "examples" {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, "plugins", name, "main.go")); err != nil {
			continue
		}
		if err := run("build", "-o", filepath.Join(dir, "plugins", name), "./plugins/"+name); err != nil {
			return "", err
		}
	}
	// The test plugin (internal/testplugin) is no product: it sits beside
	// the gateway, outside plugins/, as make build puts it.
	if err := run("build", "-o", filepath.Join(dir, "testplugin"), "./internal/testplugin"); err != nil {
		return "", err
	}
	return dir, nil
}

// ModuleRoot is the repository's root folder.
func ModuleRoot() string {
	root, err := moduleRoot()
	if err != nil {
		panic(err)
	}
	return root
}

func moduleRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate source")
	}
	return filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Credentials is the development world the seed wrote to
// <data-dir>/dev-credentials.json (CONTRACT §10).
type Credentials struct {
	BaseURL string `json:"base_url"`
	Users   map[string]struct {
		ID       string `json:"id"`
		Username string `json:"username"`
		Password string `json:"password"`
	} `json:"users"`
	Page struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"page"`
	App struct {
		ID           string `json:"id"`
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		APIKey       string `json:"api_key"`
		RedirectURI  string `json:"redirect_uri"`
	} `json:"app"`
	AdminToken string `json:"admin_token"`
}

// Credentials reads the seeded development world.
func (g *Gateway) Credentials(t testing.TB) Credentials {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(g.DataDir, "dev-credentials.json"))
	if err != nil {
		t.Fatalf("read dev credentials: %v", err)
	}
	var c Credentials
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("dev credentials: %v", err)
	}
	return c
}

// tlsClient trusts the PEM certificate in certFile.
func tlsClient(t testing.TB, certFile string) *http.Client {
	pem, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("no certificate in %s", certFile)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	return &http.Client{Transport: tr}
}
