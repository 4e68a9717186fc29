package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	adminv1 "github.com/svcplatform/svc/gen/svc/admin/v1"
	"github.com/svcplatform/svc/gen/svc/admin/v1/adminv1connect"
	"github.com/svcplatform/svc/internal/gatewaytest"
)

type pluginList struct {
	Plugins []pluginEntry `json:"plugins"`
}

type pluginEntry struct {
	Name, Version, Sha256, State, StartedAt string
	Protocol                                int
	PID                                     int `json:"pid"`
	Routes                                  []string
}

func listPlugins(t *testing.T, g *gatewaytest.Gateway, token string) pluginList {
	t.Helper()
	res, body := do(t, "GET", g.URL+"/api/admin/plugins", nil, map[string]string{"Authorization": "Bearer " + token})
	if res.StatusCode != 200 {
		t.Fatalf("list plugins: %d %s", res.StatusCode, body)
	}
	return decode[pluginList](t, body)
}

func bookPID(t *testing.T, g *gatewaytest.Gateway, token string) int {
	t.Helper()
	for _, p := range listPlugins(t, g, token).Plugins {
		if p.Name == "book" {
			return p.PID
		}
	}
	t.Fatal("book plugin not listed")
	return 0
}

// load calls a plugin route from 8 goroutines until stop is closed and
// returns the answers that were not 200, as status → count.
func load(t *testing.T, w *graphWorld, stop <-chan struct{}, check func(status int, body []byte)) (ok int64) {
	t.Helper()
	var wg sync.WaitGroup
	var okCount atomic.Int64
	q := url.Values{"node": {"page/" + w.c.Page.ID + "/posts"}, "limit": {"2"}}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, body := w.get(t, w.reader, q)
				if res.StatusCode == 200 {
					okCount.Add(1)
					continue
				}
				check(res.StatusCode, body)
			}
		}()
	}
	wg.Wait()
	return okCount.Load()
}

func TestOperatorReloadsAPluginUnderLoadWithoutAFailedRequest(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	admin := w.c.AdminToken
	list := listPlugins(t, w.g, admin)
	// Every product plugin built into bin/plugins is loaded; this test is about book.
	bi := -1
	for i, p := range list.Plugins {
		if p.Name == "book" {
			bi = i
		}
	}
	if bi < 0 || list.Plugins[bi].State != "serving" ||
		len(list.Plugins[bi].Sha256) != 64 || list.Plugins[bi].PID == 0 || list.Plugins[bi].Protocol != 2 ||
		list.Plugins[bi].Version == "" || list.Plugins[bi].StartedAt == "" {
		t.Fatalf("plugins = %+v", list)
	}
	routes := map[string]bool{}
	for _, r := range list.Plugins[bi].Routes {
		routes[r] = true
	}
	if !routes["GET page/{page_id}/posts"] || !routes["POST page/{page_id}/posts"] || !routes["GET post/{post_id}"] {
		t.Fatalf("routes = %v", list.Plugins[bi].Routes)
	}
	before := list.Plugins[bi].PID

	stop := make(chan struct{})
	var failures sync.Map
	var failed atomic.Int64
	done := make(chan int64)
	go func() {
		done <- load(t, w, stop, func(status int, body []byte) {
			failed.Add(1)
			failures.Store(status, string(body))
		})
	}()
	time.Sleep(500 * time.Millisecond)
	for range 2 {
		res, body := do(t, "POST", w.g.URL+"/api/admin/plugins/book/reload", nil, map[string]string{"Authorization": "Bearer " + admin})
		if res.StatusCode != 200 {
			t.Fatalf("reload: %d %s", res.StatusCode, body)
		}
		time.Sleep(700 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	ok := <-done
	if n := failed.Load(); n != 0 {
		failures.Range(func(k, v any) bool { t.Errorf("status %v: %v", k, v); return true })
		t.Fatalf("%d of %d requests failed during the reloads", n, n+ok)
	}
	if ok < 50 {
		t.Fatalf("only %d requests ran during the reloads", ok)
	}
	if after := bookPID(t, w.g, admin); after == before || after == 0 {
		t.Fatalf("pid after reload = %d (before %d)", after, before)
	}
	if syscall.Kill(before, 0) == nil {
		deadline := time.Now().Add(10 * time.Second)
		for syscall.Kill(before, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if syscall.Kill(before, 0) == nil {
			t.Errorf("the replaced process %d still runs", before)
		}
	}
	t.Logf("%d requests, none failed, across two reloads", ok)
}

func TestAKilledPluginRecoversAndTheGapAnswersOnly503(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	admin := w.c.AdminToken
	pid := bookPID(t, w.g, admin)
	stop := make(chan struct{})
	var bad atomic.Int64
	var unavailable atomic.Int64
	done := make(chan int64)
	go func() {
		done <- load(t, w, stop, func(status int, body []byte) {
			var e graphError
			_ = json.Unmarshal(body, &e)
			if status == 503 && e.Error.Code == 2 && e.Error.IsTransient {
				unavailable.Add(1)
				return
			}
			bad.Add(1)
			t.Errorf("during the gap: %d %s", status, body)
		})
	}()
	time.Sleep(300 * time.Millisecond)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The host restarts it by itself.
	deadline := time.Now().Add(20 * time.Second)
	var newPID int
	for time.Now().Before(deadline) {
		for _, p := range listPlugins(t, w.g, admin).Plugins {
			if p.Name == "book" && p.State == "serving" && p.PID != pid {
				newPID = p.PID
			}
		}
		if newPID != 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	ok := <-done
	if newPID == 0 {
		t.Fatalf("the book plugin did not come back after kill -9 of pid %d", pid)
	}
	if bad.Load() != 0 {
		t.Fatalf("%d answers in the gap were not 503/code 2", bad.Load())
	}
	res, body := w.get(t, w.reader, url.Values{"node": {"page/" + w.c.Page.ID + "/posts"}})
	if res.StatusCode != 200 {
		t.Fatalf("after recovery: %d %s", res.StatusCode, body)
	}
	t.Logf("%d ok, %d answered 503 while the plugin restarted (pid %d → %d)", ok, unavailable.Load(), pid, newPID)
}

func TestAdminServiceTakesTheAdminTokenOnly(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	c := adminv1connect.NewAdminServiceClient(http.DefaultClient, w.g.URL)
	req := connect.NewRequest(&adminv1.ListPluginsRequest{})
	req.Header().Set("Authorization", "Bearer "+w.c.AdminToken)
	res, err := c.ListPlugins(context.Background(), req)
	if err != nil || !slices.ContainsFunc(res.Msg.GetPlugins(), func(p *adminv1.Plugin) bool { return p.GetName() == "book" }) {
		t.Fatalf("ListPlugins over Connect: %v %v", res, err)
	}
	for name, token := range map[string]string{"app key": w.c.App.APIKey, "user token": w.owner} {
		req := connect.NewRequest(&adminv1.ListPluginsRequest{})
		req.Header().Set("Authorization", "Bearer "+token)
		if _, err := c.ListPlugins(context.Background(), req); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Errorf("%s: err = %v, want permission denied", name, err)
		}
		res, body := do(t, "GET", w.g.URL+"/api/admin/plugins", nil, map[string]string{"Authorization": "Bearer " + token})
		wantGraphError(t, res, body, 403, 200, 2069006)
	}
	unknown, body := do(t, "GET", w.g.URL+"/api/admin/plugins", nil, map[string]string{"Authorization": "Bearer svc_admin_not-the-token"})
	wantGraphError(t, unknown, body, 401, 190, 467)
	none, body := do(t, "GET", w.g.URL+"/api/admin/plugins", nil, nil)
	wantGraphError(t, none, body, 401, 104, 0)
	res2, body := do(t, "POST", w.g.URL+"/api/admin/plugins/nosuch/reload", nil, map[string]string{"Authorization": "Bearer " + w.c.AdminToken})
	if res2.StatusCode != 404 {
		t.Fatalf("reload of a missing plugin: %d %s", res2.StatusCode, body)
	}
}

func TestAPartnerPluginIsInstalledWithoutRebuildingTheGateway(t *testing.T) {
	t.Parallel()
	root := gatewaytest.ModuleRoot()
	if _, err := os.Stat(filepath.Join(root, "plugins/examples/hello/main.go")); err != nil {
		t.Skip("the example partner plugin is not in this tree")
	}
	plugins := t.TempDir()
	bin := gatewaytest.BinDir(t)
	book, err := os.ReadFile(filepath.Join(bin, "plugins", "book"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plugins, "book"), book, 0o755); err != nil {
		t.Fatal(err)
	}
	g := gatewaytest.Start(t, gatewaytest.Options{PluginsDir: plugins})
	admin := g.Credentials(t).AdminToken

	res, body := do(t, "GET", g.URL+"/api/v1/graph?node=hello/Ada", nil, nil)
	wantGraphError(t, res, body, 404, 2500, 0)

	// The partner builds the plugin in its own module and drops it in.
	buildPartnerPlugin(t, filepath.Join(plugins, "hello"))
	res, body = do(t, "POST", g.URL+"/api/admin/plugins/hello/reload", nil, map[string]string{"Authorization": "Bearer " + admin})
	if res.StatusCode != 200 {
		t.Fatalf("install: %d %s", res.StatusCode, body)
	}
	res, body = do(t, "GET", g.URL+"/api/v1/graph?node=hello/Ada", nil, nil)
	if res.StatusCode != 200 || decode[struct{ Message string }](t, body).Message != "Hello, Ada!" {
		t.Fatalf("Graph node of the new plugin: %d %s", res.StatusCode, body)
	}
	res, body = do(t, "GET", g.URL+"/api/v1/hello/Ada", nil, nil)
	if res.StatusCode != 200 || decode[struct{ Message string }](t, body).Message != "Hello, Ada!" {
		t.Fatalf("REST path of the new plugin: %d %s", res.StatusCode, body)
	}
	if n := len(listPlugins(t, g, admin).Plugins); n != 2 {
		t.Fatalf("%d plugins listed after the install", n)
	}

	// The partner's own event type, declared in its manifest, can be
	// subscribed to and arrives signed: the gateway learned it on install.
	c := g.Credentials(t)
	w := &graphWorld{g: g, c: c}
	rcv := newHookReceiver(t, c.App.ClientSecret)
	res, body = w.post(t, c.App.APIKey, map[string]any{"node": "app/" + c.App.ID + "/subscriptions", "callback_url": rcv.srv.URL + "/hook",
		"events": []string{"hello.waved"}, "verify_token": hookVerifyToken}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("subscribe to the partner's event: %d %s", res.StatusCode, body)
	}
	res, body = w.post(t, c.App.APIKey, map[string]any{"node": "hello/Ada/waves"}, nil)
	wave := decode[struct{ ID string }](t, body)
	if res.StatusCode != 200 || wave.ID == "" {
		t.Fatalf("wave: %d %s", res.StatusCode, body)
	}
	got := rcv.waitFor(wave.ID, 1)[0]
	if got.body.Type != "hello.waved" || got.body.AppID != c.App.ID || got.body.Data["name"] != "Ada" {
		t.Fatalf("delivered %+v", got.body)
	}
}

// buildPartnerPlugin builds the example partner plugin as a partner does:
// with `go build` in its own folder, which is a module of its own
// (example.com/hello) that uses the platform only through its SDK and
// generated types. It fails the test if the folder is part of this module.
func buildPartnerPlugin(t *testing.T, out string) {
	t.Helper()
	dir := filepath.Join(gatewaytest.ModuleRoot(), "plugins", "examples", "hello")
	mod := exec.Command("go", "list", "-m")
	mod.Dir = dir
	mod.Env = append(os.Environ(), "GOWORK=off")
	name, err := mod.Output()
	if err != nil {
		t.Fatalf("go list -m in %s: %v", dir, err)
	}
	if got := strings.TrimSpace(string(name)); got != "example.com/hello" {
		t.Fatalf("the example plugin is built as part of module %q, not on its own", got)
	}
	build := exec.Command("go", "build", "-o", out, ".")
	build.Dir = dir
	build.Env = mod.Env
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the example plugin: %v\n%s", err, b)
	}
}

// Make-before-break: a reload that would make two plugins claim one Graph
// node is refused when the route table is built, and traffic stays on the
// table in use.
func TestAReloadThatMakesTwoPluginsClaimOneNodeFailsAndKeepsTheOldTable(t *testing.T) {
	t.Parallel()
	plugins := t.TempDir()
	bin := gatewaytest.BinDir(t)
	install := func(from, name string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(bin, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(plugins, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	install("testplugin", "testplugin")
	g := gatewaytest.Start(t, gatewaytest.Options{PluginsDir: plugins})
	admin := g.Credentials(t).AdminToken
	echo := func() {
		t.Helper()
		res, body := do(t, "GET", g.URL+"/api/v1/graph?node=echo/1", nil, nil)
		if res.StatusCode != 200 {
			t.Fatalf("echo/1 = %d %s", res.StatusCode, body)
		}
	}
	echo()

	install("testplugin", "testplugin-alias")
	res, body := do(t, "POST", g.URL+"/api/admin/plugins/testplugin-alias/reload", nil, map[string]string{"Authorization": "Bearer " + admin})
	if res.StatusCode == 200 {
		t.Fatalf("a plugin claiming echo/{id} twice was installed: %s", body)
	}
	if !strings.Contains(string(body), "echo/{id}") {
		t.Errorf("the refusal does not name the node: %s", body)
	}
	echo() // still served by the table in use
	for _, p := range listPlugins(t, g, admin).Plugins {
		if p.Name == "testplugin-alias" && p.State == "serving" {
			t.Fatalf("the refused plugin is serving: %+v", p)
		}
	}
}

// A plugin process connects as a database role of its own, and every
// escape it tries is refused: the core tables, other plugins' schemas,
// reading the outbox, new schemas or roles, and the superuser over the same
// socket (the embedded cluster requires every role's password). It may
// write events and use its own schema.
func TestAPluginThatTriesToEscapeItsDatabaseRoleIsRefusedEachTime(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	// The embedded cluster may run as an unprivileged user: let it into the folder.
	for _, dir := range []string{filepath.Dir(dataDir), dataDir} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	plugins := t.TempDir()
	b, err := os.ReadFile(filepath.Join(gatewaytest.BinDir(t), "testplugin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plugins, "testplugin"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"book", "svcchat"} { // other plugins' schemas exist to be tried
		b, err := os.ReadFile(filepath.Join(gatewaytest.BinDir(t), "plugins", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(plugins, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	g := gatewaytest.Start(t, gatewaytest.Options{Embedded: true, DataDir: dataDir, PluginsDir: plugins})
	res, body := do(t, "GET", g.URL+"/api/v1/testplugin/probe-database", nil, nil)
	if res.StatusCode != 200 {
		t.Fatalf("probe: %d %s", res.StatusCode, body)
	}
	probe := decode[struct {
		Role     string
		Attempts map[string]string
	}](t, body)
	t.Logf("role %s: %v", probe.Role, probe.Attempts)
	if !strings.HasPrefix(probe.Role, "svc_plugin_testplugin_") {
		t.Errorf("the plugin signs in as %q, not a role of its own", probe.Role)
	}
	want := map[string]string{
		"write core.outbox": "allowed", "own schema, a table": "allowed",
		"read core.users": "42501", "read core.outbox": "42501", "read book.posts": "42501", "read svcchat.opt_ins": "42501",
		"read credentials": "42501", "update core.apps": "42501", "create a schema": "42501", "create a role": "42501",
		"become superuser": "42501",
	}
	// The superuser signs in with its password, or (the gateway run as
	// root) only as the gateway's peer: a guess fails either way.
	if got := probe.Attempts["connect as postgres with a guess"]; got != "28P01" && got != "28000" {
		t.Errorf("connect as postgres with a guess: %q, want 28P01 or 28000", got)
	}
	for what, outcome := range want {
		if got := probe.Attempts[what]; got != outcome {
			t.Errorf("%s: %q, want %q", what, got, outcome)
		}
	}
	if got := probe.Attempts["connect as postgres without a password"]; got == "allowed" {
		t.Errorf("the plugin connected as the superuser without a password")
	}
}
