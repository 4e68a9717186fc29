package e2e

import (
	"encoding/json"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/pgtest"
)

// accessLines are the gateway's access log lines (msg "request").
func accessLines(t *testing.T, logs string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(logs, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "request" {
			out = append(out, m)
		}
	}
	return out
}

// One access log line per request, on by default (issue 28): method, path,
// Graph node, status, Graph error code, duration, trace id (the error's
// fbtrace_id) and app; never the token, in the header or the query.
func TestEveryRequestHasOneAccessLogLineAndNoToken(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: pgtest.NewDatabase(t)})
	w := &graphWorld{g: g, c: g.Credentials(t)}
	key := w.c.App.APIKey
	res, body := w.get(t, key, url.Values{"node": {"nowhere/at/all"}})
	var e struct {
		Error struct {
			Code      int    `json:"code"`
			FBTraceID string `json:"fbtrace_id"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.FBTraceID == "" || res.StatusCode < 400 {
		t.Fatalf("unknown node: %d %s", res.StatusCode, body)
	}
	// A token in the query string is not logged either.
	_, _ = do(t, "GET", g.URL+"/api/v1/graph?node=app/"+w.c.App.ID+"&access_token="+url.QueryEscape(key), nil, nil)

	// The access log writes its lines together, a moment after the
	// request: wait for the line, then check that it is the only one.
	var line map[string]any
	for deadline := time.Now().Add(10 * time.Second); line == nil; time.Sleep(20 * time.Millisecond) {
		for _, l := range accessLines(t, g.Logs()) {
			if l["trace_id"] == e.Error.FBTraceID {
				if line != nil {
					t.Fatalf("two access lines for one request: %v %v", line, l)
				}
				line = l
			}
		}
		if line == nil && time.Now().After(deadline) {
			t.Fatalf("no access line with trace_id %s in:\n%s", e.Error.FBTraceID, g.Logs())
		}
	}
	want := map[string]any{"level": "INFO", "method": "GET", "path": "/api/v1/graph", "node": "nowhere/at/all",
		"status": float64(res.StatusCode), "code": float64(e.Error.Code), "app_id": w.c.App.ID}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("access line %s = %v, want %v (line %v)", k, line[k], v, line)
		}
	}
	if d, ok := line["duration_ms"].(float64); !ok || d < 0 {
		t.Errorf("access line duration_ms = %v", line["duration_ms"])
	}
	if strings.Contains(g.Logs(), key) {
		t.Fatal("the gateway logged the app key")
	}
}

// `gateway help` and `gateway --help` list the commands, and --version
// names the commit `make build` built (issue 28).
func TestHelpListsTheCommandsAndVersionNamesTheCommit(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"help", "--help"} {
		out, errOut, ok := gatewayCommand(t, t.TempDir(), nil, arg)
		if !ok {
			t.Fatalf("gateway %s failed: %s", arg, errOut)
		}
		for _, want := range []string{"backup", "database-url", "token", "listen --base-url", "-data-dir", "-access-log"} {
			if !strings.Contains(out, want) {
				t.Errorf("gateway %s does not list %s:\n%s", arg, want, out)
			}
		}
	}
	head, err := exec.Command("git", "-C", gatewaytest.ModuleRoot(), "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not a git checkout: no commit to name")
	}
	out, _, _ := gatewayCommand(t, t.TempDir(), nil, "--version")
	if !strings.Contains(out, "commit "+string(head[:12])) {
		t.Fatalf("--version %q does not name the commit %s (built with make build?)", out, head[:12])
	}
}
