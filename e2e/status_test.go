package e2e

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/pgtest"
)

type statusReport struct {
	Status     string `json:"status"`
	Components []struct {
		Name    string    `json:"name"`
		Status  string    `json:"status"`
		Checked time.Time `json:"checked_time"`
	} `json:"components"`
	Incidents []struct {
		ID, Title, Status string
		Components        []string
		Updates           []struct{ At, Status, Body string }
		Resolved          *time.Time `json:"resolved_time"`
	} `json:"incidents"`
}

func platformStatus(t *testing.T, g *gatewaytest.Gateway) statusReport {
	t.Helper()
	res, body := do(t, "GET", g.URL+"/api/v1/platform/status", nil, nil)
	if res.StatusCode != 200 {
		t.Fatalf("status: %d %s", res.StatusCode, body)
	}
	return decode[statusReport](t, body)
}

func componentStatus(r statusReport, name string) string {
	for _, c := range r.Components {
		if c.Name == name {
			return c.Status
		}
	}
	return ""
}

// waitComponent polls the public status until name shows want, and
// answers how long it took; it fails the test after limit.
func waitComponent(t *testing.T, g *gatewaytest.Gateway, name, want string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		r := platformStatus(t, g)
		if componentStatus(r, name) == want {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("%s still %q after %s, want %s: %+v", name, componentStatus(r, name), limit, want, r)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// pausePlugin stops a plugin's process (SIGSTOP): it no longer answers,
// though the host still holds it. The returned function resumes it.
func pausePlugin(t *testing.T, g *gatewaytest.Gateway, admin, name string) func() {
	t.Helper()
	pid := 0
	for _, p := range listPlugins(t, g, admin).Plugins {
		if p.Name == name {
			pid = p.PID
		}
	}
	if pid == 0 {
		t.Fatalf("plugin %s not listed", name)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)
	return resume
}

// A product plugin that stops answering shows major_outage on the public
// status within 15 s, from a real probe (its process is still there), and
// operational again once it answers; the operator's incidents are written
// with the admin token only and shown in the JSON and on /status.
func TestAPluginDownShowsOnThePublicStatusWithin15sAndIncidentsAreTheOperators(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	r := platformStatus(t, g)
	for _, name := range []string{"graph", "oauth", "webhooks", "database", "book", "svcchat", "completions"} {
		if got := componentStatus(r, name); got != "operational" {
			t.Fatalf("%s is %q on a healthy platform: %+v", name, got, r)
		}
	}
	for _, comp := range r.Components {
		if age := time.Since(comp.Checked); age > 15*time.Second {
			t.Fatalf("%s checked %s ago", comp.Name, age)
		}
	}
	if r.Status != "operational" {
		t.Fatalf("overall %q", r.Status)
	}

	resume := pausePlugin(t, g, c.AdminToken, "book")
	took := waitComponent(t, g, "book", "major_outage", 15*time.Second)
	t.Logf("book seen down after %s", took)
	if r := platformStatus(t, g); r.Status != "partial_outage" || componentStatus(r, "svcchat") != "operational" {
		t.Fatalf("with book down: %+v", r)
	}
	resume()
	waitComponent(t, g, "book", "operational", 15*time.Second)

	// Incidents: the admin token only.
	incident := `{"title":"Posts are slow","components":["book"],"body":"We are looking into it."}`
	for _, token := range []string{"", c.App.APIKey} {
		h := map[string]string{"Content-Type": "application/json"}
		if token != "" {
			h["Authorization"] = "Bearer " + token
		}
		if res, body := do(t, "POST", g.URL+"/api/admin/incidents", strings.NewReader(incident), h); res.StatusCode != 401 ||
			!strings.Contains(string(body), `"error"`) {
			t.Fatalf("an incident without the admin token: %d %s", res.StatusCode, body)
		}
	}
	admin := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + c.AdminToken}
	if res, body := do(t, "POST", g.URL+"/api/admin/incidents", strings.NewReader(`{"title":"x","components":["nope"]}`), admin); res.StatusCode != 400 {
		t.Fatalf("an incident naming an unknown component: %d %s", res.StatusCode, body)
	}
	res, body := do(t, "POST", g.URL+"/api/admin/incidents", strings.NewReader(incident), admin)
	created := decode[struct{ ID, Status string }](t, body)
	if res.StatusCode != 200 || created.ID == "" || created.Status != "investigating" {
		t.Fatalf("create incident: %d %s", res.StatusCode, body)
	}
	updates := g.URL + "/api/admin/incidents/" + created.ID + "/updates"
	for _, u := range []string{`{"status":"identified","body":"A slow query."}`, `{"status":"resolved","body":"Fixed."}`} {
		if res, body := do(t, "POST", updates, strings.NewReader(u), admin); res.StatusCode != 200 {
			t.Fatalf("update %s: %d %s", u, res.StatusCode, body)
		}
	}
	if res, body := do(t, "POST", updates, strings.NewReader(`{"status":"monitoring","body":"again"}`), admin); res.StatusCode != 400 {
		t.Fatalf("an update of a resolved incident: %d %s", res.StatusCode, body)
	}
	r = platformStatus(t, g)
	if len(r.Incidents) != 1 || r.Incidents[0].Status != "resolved" || r.Incidents[0].Resolved == nil ||
		len(r.Incidents[0].Updates) != 3 || r.Incidents[0].Updates[0].Body != "Fixed." || r.Incidents[0].Components[0] != "book" {
		t.Fatalf("incidents %+v", r.Incidents)
	}
	res, body = do(t, "GET", g.URL+"/status", nil, nil)
	if res.StatusCode != 200 || !strings.Contains(string(body), "Posts are slow") || !strings.Contains(string(body), "book") ||
		!strings.Contains(string(body), "major_outage") { // today's bar of book
		t.Fatalf("/status: %d %s", res.StatusCode, body)
	}
}

type slaReport struct {
	Targets []struct {
		Surface            string  `json:"surface"`
		AvailabilityTarget float64 `json:"availability_target"`
		Windows            map[string]struct {
			Requests     int64   `json:"requests"`
			Availability float64 `json:"availability"`
			LatencyP99Ms float64 `json:"latency_p99_ms"`
		} `json:"windows"`
	} `json:"targets"`
}

// The SLA counts every gateway's requests: two gateways on one database,
// each serving some Graph requests, add up in the windows either serves.
func TestSLACountsGrowWithTrafficAcrossTwoGateways(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	opts := gatewaytest.Options{DatabaseURL: db, DataDir: t.TempDir()}
	a := gatewaytest.Start(t, opts)
	b := gatewaytest.Start(t, gatewaytest.AnotherMachine(t, opts))
	key := a.Credentials(t).App.APIKey
	graphCount := func(g *gatewaytest.Gateway) (int64, slaReport) {
		res, body := do(t, "GET", g.URL+"/api/v1/platform/sla", nil, nil)
		if res.StatusCode != 200 {
			t.Fatalf("sla: %d %s", res.StatusCode, body)
		}
		r := decode[slaReport](t, body)
		if len(r.Targets) != 4 || r.Targets[0].Surface != "graph" || r.Targets[3].Surface != "webhooks" {
			t.Fatalf("sla %s", body)
		}
		return r.Targets[0].Windows["1h"].Requests, r
	}
	before, _ := graphCount(a)
	for i, g := range []*gatewaytest.Gateway{a, b} {
		for range 10 * (i + 1) { // 10 through a, 20 through b
			res, body := do(t, "GET", g.URL+"/api/v1/graph?node=app/"+a.Credentials(t).App.ID, nil,
				map[string]string{"Authorization": "Bearer " + key})
			if res.StatusCode != 200 {
				t.Fatalf("graph: %d %s", res.StatusCode, body)
			}
		}
	}
	// Each gateway adds its minute once the minute ends.
	deadline := time.Now().Add(100 * time.Second)
	for {
		n, r := graphCount(b)
		if n >= before+30 {
			w := r.Targets[0].Windows
			if w["1h"].Availability != 1 || w["1h"].LatencyP99Ms <= 0 || w["30d"].Requests < w["1h"].Requests {
				t.Fatalf("windows %+v", w)
			}
			if n != before+30 {
				t.Fatalf("%d graph requests counted, want %d", n, before+30)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("graph requests counted %d, want %d", n, before+30)
		}
		time.Sleep(2 * time.Second)
	}
}

// gateway smoke passes on a healthy platform, as make run starts it (the
// development seed's credentials file), and fails naming the step when a
// plugin is down.
func TestSmokePassesOnAHealthyPlatformAndNamesTheStepWhenAPluginIsDown(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	bin := filepath.Join(gatewaytest.BinDir(t), "gateway")
	creds := filepath.Join(g.DataDir, "dev-credentials.json")
	smoke := func(extra ...string) (string, error) {
		var out bytes.Buffer
		cmd := exec.Command(bin, append([]string{"smoke", "--base-url", g.URL, "--credentials", creds}, extra...)...)
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	out, err := smoke()
	if err != nil || !strings.HasSuffix(out, "6 passed, 0 failed\n") {
		t.Fatalf("smoke on a healthy platform: %v\n%s", err, out)
	}
	for _, step := range []string{"PASS oauth:", "PASS me/pages:", "PASS post:", "PASS webhook:", "PASS session message:", "PASS completion:"} {
		if !strings.Contains(out, step) {
			t.Fatalf("no %q line:\n%s", step, out)
		}
	}
	pausePlugin(t, g, g.Credentials(t).AdminToken, "book")
	out, err = smoke("--step-timeout", "8s")
	if err == nil || !strings.Contains(out, "FAIL post:") || !strings.Contains(out, "5 passed, 1 failed\n") {
		t.Fatalf("smoke with book down: %v\n%s", err, out)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("exit status %v", err)
	}
}
