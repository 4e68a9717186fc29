package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/gatewayproc"
	"github.com/svcplatform/svc/internal/gatewaytest"
)

// A hostile partner plugin, installed beside our own, tries every way out
// of its containment (CONTRACT §15) and each one fails: the gateway's data
// folder, master key, credentials and database files; the gateway's and a
// sibling plugin's environment and memory (/proc, process_vm_readv,
// ptrace), and signals to them; writing outside its own folder, even to a
// folder anyone may write; the database as the superuser or as another
// plugin's role. It runs on the embedded cluster, whose superuser password
// derives from the master key, so that reading the key would be the whole
// escape. It is tried with the gateway as root (each plugin a user of its own) and as an
// unprivileged user (the Landlock sandbox). Controls that must succeed
// (its own folder, its own /proc entry, its own database role) keep the
// probe honest.
func TestAHostilePluginCannotEscapeItsContainment(t *testing.T) {
	t.Parallel()
	type world struct {
		name      string
		runAs     *syscall.Credential
		isolation string
	}
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}
	worlds := []world{{"an unprivileged gateway", nil, "sandbox"}}
	if os.Geteuid() == 0 {
		worlds = []world{{"a gateway run as root", nil, "uid"}, {"an unprivileged gateway", nobody, "sandbox"}}
	}
	for _, w := range worlds {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			tryEscapes(t, w.runAs, w.isolation)
		})
	}
}

func tryEscapes(t *testing.T, runAs *syscall.Credential, isolation string) {
	// A folder tree every user may pass through, so that an unprivileged
	// gateway can reach its binaries and data folder.
	root, err := os.MkdirTemp("", "svc-escape-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	dataDir, plugins, open := filepath.Join(root, "data"), filepath.Join(root, "plugins"), filepath.Join(root, "open")
	for _, dir := range []string{dataDir, plugins, open} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for dir, mode := range map[string]os.FileMode{root: 0o755, plugins: 0o755, open: 0o777} {
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
	}
	if runAs != nil {
		if err := os.Chown(dataDir, int(runAs.Uid), int(runAs.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	bin := gatewaytest.BinDir(t)
	for name, from := range map[string]string{"testplugin": "testplugin", "book": "plugins/book"} {
		b, err := os.ReadFile(filepath.Join(bin, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(plugins, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := gatewaytest.Options{Embedded: true, DataDir: dataDir, PluginsDir: plugins, RunAs: runAs}
	g := gatewaytest.Start(t, opts)

	// Every plugin is contained as the gateway says.
	res, body := do(t, "GET", g.URL+"/api/admin/plugins", nil, map[string]string{"Authorization": "Bearer " + g.Credentials(t).AdminToken})
	if res.StatusCode != 200 {
		t.Fatalf("plugins: %d %s", res.StatusCode, body)
	}
	listed := decode[struct {
		Plugins []struct {
			Name, State, Isolation string
			Pid                    int
		}
	}](t, body)
	sibling := 0
	for _, p := range listed.Plugins {
		if p.Isolation != isolation {
			t.Errorf("plugin %s runs with isolation %q, want %q", p.Name, p.Isolation, isolation)
		}
		if p.Name == "book" {
			sibling = p.Pid
		}
	}
	if sibling == 0 {
		t.Fatalf("book is not running: %s", body)
	}

	q := url.Values{"data_dir": {dataDir}, "sibling_pid": {strconv.Itoa(sibling)}, "open_dir": {open}}
	res, body = do(t, "GET", g.URL+"/api/v1/testplugin/escape?"+q.Encode(), nil, nil)
	if res.StatusCode != 200 {
		t.Fatalf("escape: %d %s", res.StatusCode, body)
	}
	report := decode[struct {
		UID      int
		FastLane bool
		Attempts map[string]string
	}](t, body)
	if !report.FastLane {
		t.Error("the plugin was called other than over its lane")
	}
	switch {
	case isolation == "uid" && (report.UID == 0 || report.UID < 61184 || report.UID > 65519):
		t.Errorf("the plugin runs as uid %d, not a user of its own", report.UID)
	case runAs != nil && report.UID != int(runAs.Uid):
		t.Errorf("the plugin runs as uid %d, not as its unprivileged gateway's %d", report.UID, runAs.Uid)
	}
	want := []string{
		"read the gateway's command line", "list the data folder", "read the master key",
		"read the development credentials", "read the database's files", "list the database's files",
		"write in an open folder", "write in /tmp", "write in the data folder", "write beside its binary",
		"connect as the superuser without a password", "connect as the superuser with its own password",
		"connect as another plugin's role without a password", "connect as another plugin's role with its own password",
		"share the gateway's session and terminal", "make a user namespace",
	}
	for _, who := range []string{"the gateway", "a sibling plugin"} {
		want = append(want, "read "+who+"'s environment", "read "+who+"'s memory",
			"read "+who+"'s memory with process_vm_readv", "trace "+who, "signal "+who)
	}
	for _, what := range want {
		outcome, ok := report.Attempts[what]
		switch {
		case !ok:
			t.Errorf("%s: not tried", what)
		case !strings.HasPrefix(outcome, "refused: "):
			t.Errorf("%s: %s", what, outcome)
		}
	}
	controls := 0
	for what, outcome := range report.Attempts {
		if strings.HasPrefix(what, "control: ") {
			controls++
			if outcome != "allowed" {
				t.Errorf("%s: %s (a contained plugin must still do this)", what, outcome)
			}
		} else if !slices.Contains(want, what) {
			t.Errorf("%s: tried but not checked by this test (%s)", what, outcome)
		}
	}
	if controls < 5 {
		t.Errorf("%d controls, want 5: %v", controls, report.Attempts)
	}
	if t.Failed() {
		t.Logf("attempts: %v", report.Attempts)
	}
}

// A second gateway started on a data folder in use exits non-zero within
// 5 seconds, naming the folder and the running gateway's pid, before it
// touches the embedded cluster: the first keeps serving reads and writes
// from its database (CONTRACT §15; two gateways used to stop each other's
// PostgreSQL in a loop).
func TestASecondGatewayOnADataFolderInUseExitsAndLeavesTheFirstServing(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	first := gatewaytest.Start(t, gatewaytest.Options{Embedded: true, DataDir: dataDir})
	c := first.Credentials(t)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	bin := gatewaytest.BinDir(t)
	second, err := gatewayproc.Start(ctx, gatewayproc.Options{Bin: filepath.Join(bin, "gateway"),
		PluginsDir: filepath.Join(bin, "plugins"), DataDir: dataDir})
	if err == nil {
		_ = second.Stop()
		t.Fatal("a second gateway started on a data folder in use")
	}
	for _, want := range []string{"data folder " + dataDir + " is in use by another gateway", fmt.Sprintf("(pid %d)", first.PID())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the second gateway's refusal does not say %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "did not log its address") {
		t.Errorf("the second gateway did not exit within 5 seconds: %v", err)
	}

	// The first is untouched: its database answers a write and a read.
	w := &graphWorld{g: first, c: c, owner: first.UserToken(t, "owner", "pages:read", "pages:manage")}
	w.publish(t, "still serving")
	res, body := do(t, "GET", first.URL+"/api/v1/graph?node=page/"+c.Page.ID+"/posts", nil, map[string]string{"Authorization": "Bearer " + w.owner})
	if res.StatusCode != 200 || !strings.Contains(string(body), "still serving") {
		t.Fatalf("read after the second gateway's attempt: %d %s", res.StatusCode, body)
	}
}
