package gatewaytest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/gatewayproc"
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
	// RunAs runs the gateway as another user (the tests must run as root).
	RunAs *syscall.Credential
	// NoWait skips waiting for /readyz.
	NoWait bool
	// TLSCert and TLSKey (PEM files) serve HTTPS; the certificate must be
	// valid for 127.0.0.1. Gateway.Client then trusts it.
	TLSCert, TLSKey string
}

// Gateway is a running gateway process (internal/gatewayproc).
type Gateway struct {
	// URL is the base URL, e.g. http://127.0.0.1:41234.
	URL string
	// Addr is host:port.
	Addr    string
	DataDir string
	// Client talks to this gateway (it trusts the test certificate under TLS).
	Client *http.Client
	proc   *gatewayproc.Process
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
	if opts.Embedded {
		opts.DatabaseURL = ""
	}
	if opts.PluginsDir == "" {
		opts.PluginsDir = filepath.Join(bin, "plugins")
	}
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	args := opts.Args
	if opts.TLSCert != "" {
		args = append(slices.Clone(args), "--tls-cert", opts.TLSCert, "--tls-key", opts.TLSKey)
	}
	// A bound, not a speed check: a first start creates the embedded
	// cluster (initdb), which on a machine busy with parallel packages
	// takes far longer than its usual seconds.
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	proc, err := gatewayproc.Start(ctx, gatewayproc.Options{Bin: filepath.Join(bin, "gateway"), PluginsDir: opts.PluginsDir,
		DataDir: opts.DataDir, DatabaseURL: opts.DatabaseURL, LogLevel: "debug", Args: args, Env: opts.Env, RunAs: opts.RunAs})
	if err != nil {
		t.Fatal(err)
	}
	g := &Gateway{URL: proc.URL, Addr: proc.Addr, DataDir: opts.DataDir, Client: http.DefaultClient, proc: proc}
	t.Cleanup(func() {
		g.Stop(t)
		if t.Failed() {
			t.Logf("gateway logs:\n%s", g.Logs())
		}
	})
	if opts.TLSCert != "" {
		g.URL = "https://" + g.Addr
		g.Client = tlsClient(t, opts.TLSCert)
	}
	if !opts.NoWait {
		g.WaitHealthy(t, startTimeout)
	}
	return g
}

// WaitHealthy polls /readyz until it answers 200: the gateway serves, its
// database is reachable and every plugin serves.
func (g *Gateway) WaitHealthy(t testing.TB, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if _, err := g.proc.WaitReady(ctx, g.Client, g.URL+"/readyz"); err != nil {
		t.Fatal(err) // the cleanup prints every log line
	}
}

// PID is the gateway's process id.
func (g *Gateway) PID() int { return g.proc.PID() }

// Signal sends sig to the gateway.
func (g *Gateway) Signal(sig os.Signal) error { return g.proc.Signal(sig) }

// Done is closed when the process has exited.
func (g *Gateway) Done() <-chan struct{} { return g.proc.Done() }

// Logs returns everything the gateway logged so far.
func (g *Gateway) Logs() string { return g.proc.Logs() }

// Stop sends SIGTERM and waits, killing the process after
// gatewayproc.StopGrace.
func (g *Gateway) Stop(t testing.TB) {
	if err := g.proc.Stop(); err != nil {
		t.Error(err)
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
		// WebhookSecret is ClientSecret as Standard Webhooks libraries
		// take it (whsec_…).
		WebhookSecret string `json:"webhook_secret"`
		APIKey        string `json:"api_key"`
		RedirectURI   string `json:"redirect_uri"`
	} `json:"app"`
	// Business is the owner's business portfolio, holding the Page and
	// the app.
	Business struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"business"`
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

// AnotherMachine returns opts for one more gateway of the same installation
// on another machine: its own data folder (one gateway per data folder,
// CONTRACT §15), holding a copy of the installation's master key, admin
// token and development credentials, as an operator copies them to each
// machine. The database is the same.
func AnotherMachine(t testing.TB, opts Options) Options {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"master.key", "admin-token", "dev-credentials.json"} {
		b, err := os.ReadFile(filepath.Join(opts.DataDir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	opts.DataDir = dir
	return opts
}
