package e2e

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/gatewaytest"
)

// gateway listen (CONTRACT §20, docs/WEBHOOKS.md "Webhooks on a laptop"):
// the built bin/gateway runs as a real process, forwarding the app's
// deliveries from the gateway under test to a local receiver.

// syncBuffer is a process's output, read while it runs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type listenProc struct {
	t              *testing.T
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	// exited is closed once the process ended, err then says how.
	exited chan struct{}
	err    error
}

// startListen runs bin/gateway listen with args after --base-url.
func startListen(t *testing.T, w *graphWorld, args ...string) *listenProc {
	t.Helper()
	p := &listenProc{t: t, stdout: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(filepath.Join(gatewaytest.BinDir(t), "gateway"), append([]string{"listen", "--base-url", w.g.URL}, args...)...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start gateway listen: %v", err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// listenApp runs the listener of the seeded app with its key, forwarding to
// rcv, and waits until it is ready.
func listenApp(t *testing.T, w *graphWorld, rcv *hookReceiver) *listenProc {
	t.Helper()
	p := startListen(t, w, "--app", w.c.App.ID, "--token", w.c.App.APIKey, "--forward-to", rcv.srv.URL+"/hook")
	p.waitStderr("ready:")
	return p
}

func (p *listenProc) waitStderr(want string) {
	p.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(p.stderr.String(), want) {
		select {
		case <-p.exited:
			p.t.Fatalf("gateway listen exited (%v) before printing %q:\n%s", p.err, want, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("gateway listen did not print %q:\n%s", want, p.stderr.String())
		}
	}
}

// waitLine returns the line printed for a delivery once it says status.
func (p *listenProc) waitLine(deliveryID, status string) string {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, line := range strings.Split(p.stdout.String(), "\n") {
			if strings.Contains(line, deliveryID) && strings.HasSuffix(line, "-> "+status) {
				return line
			}
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no line for delivery %s with status %s:\n%s\nstderr:\n%s", deliveryID, status, p.stdout.String(), p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkStandardSignature verifies a delivery's webhook-signature with the
// app's whsec_ key, as the Standard Webhooks libraries do.
func checkStandardSignature(t *testing.T, key string, d hookDelivery) {
	t.Helper()
	ts, err := strconv.ParseInt(d.header.Get("webhook-timestamp"), 10, 64)
	if err != nil || d.header.Get("webhook-id") != d.body.ID {
		t.Fatalf("Standard Webhooks headers %v", d.header)
	}
	want := standardSign(key, d.header.Get("webhook-id"), ts, d.raw)
	for _, sig := range strings.Fields(d.header.Get("webhook-signature")) {
		if sig == want {
			return
		}
	}
	t.Fatalf("webhook-signature %q does not verify with the app's key (want %s)", d.header.Get("webhook-signature"), want)
}

type loggedAttempt struct {
	StatusCode int    `json:"status_code"`
	Error      string `json:"error"`
	Via        string `json:"via"`
}

// deliveryAttempts waits until the delivery log shows the delivery in
// status with n attempts, and returns them.
func deliveryAttempts(t *testing.T, w *graphWorld, deliveryID, status string, n int) []loggedAttempt {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		res, body := w.get(t, w.c.App.APIKey, url.Values{"node": {"app/" + w.c.App.ID + "/deliveries"}})
		if res.StatusCode != 200 {
			t.Fatalf("deliveries: %d %s", res.StatusCode, body)
		}
		log := decode[struct {
			Data []struct {
				ID, Status string
				Attempts   []loggedAttempt
			}
		}](t, body)
		for _, d := range log.Data {
			if d.ID == deliveryID && d.Status == status && len(d.Attempts) == n {
				return d.Attempts
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery %s is not %s with %d attempts: %s", deliveryID, status, n, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// An app without any subscription (no public endpoint: a laptop) receives
// its events through gateway listen, signed with both signatures exactly
// as on the wire; the listener prints one line per delivery, and the
// delivery log records the attempt as the listener's.
func TestListenForwardsSignedDeliveriesAndTheLogRecordsThem(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	app := w.c.App
	grantBook(t, w)
	rcv := newHookReceiver(t, app.ClientSecret) // checks X-Svc-Signature-256
	p := listenApp(t, w, rcv)

	postID := w.publish(t, "hello, laptop")
	got := rcv.waitForData("book.post.created", "postId", postID)
	checkStandardSignature(t, app.WebhookSecret, got)
	if got.body.AppID != app.ID || got.header.Get("X-Svc-Delivery") == "" || got.header.Get("Content-Type") != "application/json" {
		t.Fatalf("forwarded delivery %+v %v", got.body, got.header)
	}
	line := p.waitLine(got.delivery, "204")
	if !strings.Contains(line, "book.post.created") {
		t.Fatalf("listener line %q does not name the event type", line)
	}
	attempts := deliveryAttempts(t, w, got.delivery, "succeeded", 1)
	if attempts[0].StatusCode != 204 || attempts[0].Via != "listener" {
		t.Fatalf("logged attempt %+v", attempts[0])
	}

	// A test event from the console API reaches the listener too.
	res, body := w.post(t, app.APIKey, map[string]any{"node": "app/" + app.ID + "/test_event", "type": "svcchat.opt_in"}, nil)
	test := decode[struct{ ID string }](t, body)
	if res.StatusCode != 200 {
		t.Fatalf("test event while listening: %d %s", res.StatusCode, body)
	}
	d := rcv.waitFor(test.ID, 1)[0]
	checkStandardSignature(t, app.WebhookSecret, d)
	p.waitLine(d.delivery, "204")
}

// A delivery the local receiver refuses (500) is acknowledged with that
// status, logged as a failed attempt, and delivered again, with the same
// delivery id, until it succeeds.
func TestListenDeliversAgainWhatTheLocalReceiverRefused(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	grantBook(t, w)
	rcv := newHookReceiver(t, w.c.App.ClientSecret)
	var refused sync.Once
	refusedOnce := false
	rcv.answer = func([]byte) int {
		status := 0
		refused.Do(func() { status, refusedOnce = http.StatusInternalServerError, true })
		return status
	}
	p := listenApp(t, w, rcv)
	postID := w.publish(t, "refused once")
	got := rcv.waitForData("book.post.created", "postId", postID) // the retry, ~10 s later
	if !refusedOnce {
		t.Fatal("the receiver never refused")
	}
	p.waitLine(got.delivery, "500")
	p.waitLine(got.delivery, "204")
	attempts := deliveryAttempts(t, w, got.delivery, "succeeded", 2)
	if attempts[0].StatusCode != 500 || attempts[1].StatusCode != 204 || attempts[0].Via != "listener" {
		t.Fatalf("logged attempts %+v", attempts)
	}
}

// A listener killed before acknowledging leaves the delivery pending; the
// next listener of the app gets it again, same delivery id.
func TestListenDeliversAgainWhatAKilledListenerLeftUnacknowledged(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	grantBook(t, w)
	rcv := newHookReceiver(t, w.c.App.ClientSecret)
	arrived, release := make(chan string, 1), make(chan struct{})
	var first sync.Once
	rcv.answer = func(raw []byte) int {
		hold := false
		first.Do(func() { hold = true })
		if !hold {
			return 0
		}
		arrived <- string(raw)
		<-release
		return http.StatusServiceUnavailable
	}
	defer close(release)
	p := listenApp(t, w, rcv)
	postID := w.publish(t, "killed before the ack")
	select {
	case raw := <-arrived:
		if !strings.Contains(raw, postID) {
			t.Fatalf("first delivery %s", raw)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the delivery never reached the local receiver")
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited

	again := listenApp(t, w, rcv)
	got := rcv.waitForData("book.post.created", "postId", postID)
	again.waitLine(got.delivery, "204")
	attempts := deliveryAttempts(t, w, got.delivery, "succeeded", 2)
	if attempts[0].StatusCode != 0 || !strings.Contains(attempts[0].Error, "listener") || attempts[1].StatusCode != 204 {
		t.Fatalf("logged attempts %+v", attempts)
	}
}

// Authentication first: a stream or an acknowledgement without a token is
// 401. Then who may manage the app's webhooks may listen: another app's
// key, and the token of a user who is not on the app's team, are refused
// (403, 2069004), and gateway listen exits non-zero saying so.
func TestListenRefusesTheUnauthenticatedAndOutsiders(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	app := w.c.App
	stream := w.g.URL + "/api/webhooks/listen?app_id=" + app.ID
	if res, body := do(t, "GET", stream, nil, nil); res.StatusCode != 401 || !strings.Contains(string(body), `"code":104`) {
		t.Fatalf("stream without a token: %d %s", res.StatusCode, body)
	}
	if res, body := do(t, "GET", w.g.URL+"/api/webhooks/listen", nil, nil); res.StatusCode != 401 {
		t.Fatalf("stream without a token nor an app: %d %s", res.StatusCode, body)
	}
	if res, body := do(t, "POST", w.g.URL+"/api/webhooks/listen/ack?app_id="+app.ID, strings.NewReader(`{`), nil); res.StatusCode != 401 {
		t.Fatalf("acknowledgement without a token: %d %s", res.StatusCode, body)
	}

	res, body := w.post(t, signIn(t, w, "owner"), map[string]any{"node": "me/apps", "name": "Other app",
		"redirect_uris": []string{lifecycleRedirect}}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("register another app: %d %s", res.StatusCode, body)
	}
	other := decode[createdApp](t, body)
	outsiders := map[string]string{
		"another app's key":          other.APIKey,
		"a user not on the app team": w.stranger,
	}
	for name, token := range outsiders {
		res, body := do(t, "GET", stream, nil, map[string]string{"Authorization": "Bearer " + token})
		if res.StatusCode != 403 || !strings.Contains(string(body), "2069004") {
			t.Fatalf("stream with %s: %d %s", name, res.StatusCode, body)
		}
		p := startListen(t, w, "--app", app.ID, "--token", token, "--forward-to", "http://127.0.0.1:9/hook")
		select {
		case <-p.exited:
			if p.err == nil || !strings.Contains(p.stderr.String(), "HTTP 403") {
				t.Fatalf("gateway listen with %s exited with %v:\n%s", name, p.err, p.stderr.String())
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("gateway listen with %s kept running:\n%s", name, p.stderr.String())
		}
	}
	// The app's own key may; so may its team Admin's token issued to it.
	for name, token := range map[string]string{"the app's key": app.APIKey, "the team Admin's token": w.owner} {
		req, _ := http.NewRequest("GET", stream, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var first [64]byte
		n, _ := res.Body.Read(first[:])
		res.Body.Close()
		if res.StatusCode != 200 || !strings.HasPrefix(string(first[:n]), "event: ready") {
			t.Fatalf("stream with %s: %d %q", name, res.StatusCode, first[:n])
		}
	}
}

// While the app listens, its deliveries go to the listener instead of its
// endpoint (docs/design/events.md); a listener started with --events takes
// only those types, the others still reach the endpoint; once the
// listener stops, the endpoint gets the app's deliveries again.
func TestListenTakesTheAppsDeliveriesFromItsEndpointWhileItRuns(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	app := w.c.App
	grantBook(t, w)
	endpoint := newHookReceiver(t, app.ClientSecret)
	res, body := w.post(t, app.APIKey, map[string]any{"node": "app/" + app.ID + "/subscriptions", "callback_url": endpoint.srv.URL + "/hook",
		"events": []string{"book.post.created", "svcchat.opt_in"}, "verify_token": hookVerifyToken}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("save subscription: %d %s", res.StatusCode, body)
	}
	laptop := newHookReceiver(t, app.ClientSecret)
	p := listenApp(t, w, laptop)
	postID := w.publish(t, "to the laptop")
	got := laptop.waitForData("book.post.created", "postId", postID)
	p.waitLine(got.delivery, "204")

	// Only book.post.created: the test event's svcchat.opt_in goes to the
	// endpoint.
	p.cmd.Process.Signal(syscall.SIGINT)
	<-p.exited
	only := startListen(t, w, "--app", app.ID, "--token", app.APIKey, "--forward-to", laptop.srv.URL+"/hook", "--events", "book.post.created")
	only.waitStderr("ready:")
	res, body = w.post(t, app.APIKey, map[string]any{"node": "app/" + app.ID + "/test_event", "type": "svcchat.opt_in"}, nil)
	test := decode[struct{ ID string }](t, body)
	if res.StatusCode != 200 {
		t.Fatalf("test event: %d %s", res.StatusCode, body)
	}
	endpoint.waitFor(test.ID, 1)
	only.cmd.Process.Signal(syscall.SIGINT)
	<-only.exited
	if only.err != nil {
		t.Fatalf("gateway listen stopped by Ctrl-C exited with %v:\n%s", only.err, only.stderr.String())
	}

	after := w.publish(t, "to the endpoint again")
	endpoint.waitForData("book.post.created", "postId", after)
	endpoint.mu.Lock()
	for _, d := range endpoint.got {
		if d.body.Data["postId"] == postID {
			t.Errorf("the endpoint got the event delivered to the listener: %s", d.raw)
		}
	}
	endpoint.mu.Unlock()
	laptop.mu.Lock()
	for _, d := range laptop.got {
		if d.body.ID == test.ID || d.body.Data["postId"] == after {
			t.Errorf("the listener got a delivery meant for the endpoint: %s", d.raw)
		}
	}
	laptop.mu.Unlock()
}

// Bounded: an app has at most 3 listeners connected at once; a fourth is
// refused (429) until one goes.
func TestListenAllowsAFewListenersPerApp(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	stream := w.g.URL + "/api/webhooks/listen?app_id=" + w.c.App.ID
	open := func() *http.Response {
		req, _ := http.NewRequest("GET", stream, nil)
		req.Header.Set("Authorization", "Bearer "+w.c.App.APIKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	var held []*http.Response
	defer func() {
		for _, res := range held {
			res.Body.Close()
		}
	}()
	for range 3 {
		res := open()
		held = append(held, res)
		if res.StatusCode != 200 {
			t.Fatalf("listener %d: %d", len(held), res.StatusCode)
		}
	}
	res := open()
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 429 || !strings.Contains(string(body), "3 listeners") {
		t.Fatalf("a fourth listener: %d %s", res.StatusCode, body)
	}
	// One goes: another may come (a restarted gateway listen is not
	// refused while the one it replaces is in its grace period).
	held[0].Body.Close()
	held = held[1:]
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := open()
		if res.StatusCode == 200 {
			held = append(held, res)
			break
		}
		res.Body.Close()
		if time.Now().After(deadline) {
			t.Fatalf("a listener after one went: %d", res.StatusCode)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
