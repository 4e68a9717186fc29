package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/svcplatform/svc/internal/gatewaytest"
)

// The docs search finds how to verify a delivery: the page's sections, by
// the words a developer types and by the header names.
func TestTheDocsSearchFindsHowToVerifyAWebhookDelivery(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{PluginsDir: t.TempDir()})
	for q, want := range map[string]string{
		"verify a delivery":   "docs/WEBHOOKS.md#",
		"X-Svc-Signature-256": "docs/WEBHOOKS.md#x-svc-signature-256",
		"whsec":               "docs/WEBHOOKS.md#",
		"timestamp tolerance": "docs/WEBHOOKS.md#webhook-signature-standard-webhooks",
		"replay duplicate":    "docs/WEBHOOKS.md#replays-and-duplicates-deduplicate-by-id",
	} {
		var hits docsHits
		found := false
		for range 100 {
			res, body := do(t, "GET", g.URL+"/api/developers/docs/search?q="+url.QueryEscape(q), nil, nil)
			if res.StatusCode != 200 {
				t.Fatalf("search %q: %d %s", q, res.StatusCode, body)
			}
			hits = decode[docsHits](t, body)
			for _, h := range hits.Data {
				found = found || strings.HasPrefix(h.Path, want)
			}
			if found {
				break
			}
			time.Sleep(100 * time.Millisecond) // the index is written just after start
		}
		if !found {
			t.Errorf("searching %q finds no %s…: %+v", q, want, hits.Data)
		}
	}
}

// An app is shown its webhook secret as Standard Webhooks libraries take it
// ("whsec_" and the base64 of the client secret) wherever its client
// secret is shown once, and the official library given that key as it is
// (NewWebhook, JavaScript's new Webhook(key)) verifies a real delivery.
func TestAppsAreShownTheWebhookSecretThatStandardWebhooksLibrariesTake(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	whsec := func(secret string) string { return "whsec_" + base64.StdEncoding.EncodeToString([]byte(secret)) }

	// The development credentials file.
	if w.c.App.WebhookSecret != whsec(w.c.App.ClientSecret) {
		t.Fatalf("dev credentials: webhook_secret %q, want whsec_ and the base64 of client_secret", w.c.App.WebhookSecret)
	}
	// A new app.
	session := signIn(t, w, "owner")
	res, body := w.post(t, session, map[string]any{"node": "me/apps", "name": "Hooks", "redirect_uris": []string{"http://127.0.0.1:9/cb"}}, nil)
	created := decode[struct {
		ClientSecret  string `json:"client_secret"`
		WebhookSecret string `json:"webhook_secret"`
	}](t, body)
	if res.StatusCode != 200 || created.ClientSecret == "" || created.WebhookSecret != whsec(created.ClientSecret) {
		t.Fatalf("create app: %d %s", res.StatusCode, body)
	}
	// A rotated client secret, and the app key's rotation shows none.
	rotate := func(kind string) (string, string) {
		res, body := w.post(t, session, map[string]any{"node": "app/" + w.c.App.ID + "/keys", "kind": kind}, nil)
		r := decode[struct {
			Value         string
			WebhookSecret *string `json:"webhook_secret"`
		}](t, body)
		if res.StatusCode != 200 || r.Value == "" {
			t.Fatalf("rotate %s: %d %s", kind, res.StatusCode, body)
		}
		if r.WebhookSecret == nil {
			return r.Value, ""
		}
		return r.Value, *r.WebhookSecret
	}
	if _, key := rotate("api_key"); key != "" {
		t.Fatalf("rotating the app key shows a webhook secret %q", key)
	}
	newSecret, newKey := rotate("client_secret")
	if newKey != whsec(newSecret) {
		t.Fatalf("rotating the client secret shows webhook_secret %q, want whsec_ and the base64 of %q", newKey, newSecret)
	}

	// A real delivery, during the rotation's overlap: the library with
	// either key as shown verifies it.
	rcv := newHookReceiver(t, newSecret)
	grantBook(t, w)
	if res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + w.c.App.ID + "/subscriptions",
		"callback_url": rcv.srv.URL + "/hook", "verify_token": hookVerifyToken, "events": []string{"book.post.created"}}, nil); res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}
	d := rcv.waitForData("book.post.created", "postId", w.publish(t, "verified by the library"))
	for name, key := range map[string]string{"the seeded": w.c.App.WebhookSecret, "the rotated": newKey} {
		wh, err := standardwebhooks.NewWebhook(key)
		if err != nil {
			t.Fatalf("NewWebhook(%s webhook secret): %v", name, err)
		}
		if err := wh.Verify(d.raw, d.header); err != nil {
			t.Errorf("the library with %s webhook secret refuses a real delivery: %v", name, err)
		}
	}
}

// receiverProcess is one of docs/examples/webhooks running as a process,
// with the lines it printed.
type receiverProcess struct {
	url   string
	mu    sync.Mutex
	lines []string
	more  chan struct{}
}

// startReceiver runs argv with env and waits for its "listening on" line.
func startReceiver(t *testing.T, env []string, argv ...string) *receiverProcess {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", argv, err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	p := &receiverProcess{more: make(chan struct{}, 1)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
			select {
			case p.more <- struct{}{}:
			default:
			}
		}
	}()
	line := p.waitLine(t, "listening on ", time.Minute) // a cold node or python may be slow
	p.url = strings.TrimPrefix(line, "listening on ")
	return p
}

// waitLine returns the first printed line starting with prefix, waiting
// up to wait for it.
func (p *receiverProcess) waitLine(t *testing.T, prefix string, wait time.Duration) string {
	t.Helper()
	deadline := time.After(wait)
	for {
		p.mu.Lock()
		for _, l := range p.lines {
			if strings.HasPrefix(l, prefix) {
				p.mu.Unlock()
				return l
			}
		}
		lines := strings.Join(p.lines, "\n")
		p.mu.Unlock()
		select {
		case <-p.more:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("the receiver printed no line starting %q; it printed:\n%s", prefix, lines)
		}
	}
}

// printed is every line printed so far.
func (p *receiverProcess) printed() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

// count tells how many printed lines start with prefix.
func (p *receiverProcess) count(prefix string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, l := range p.lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// capturedDelivery is a delivery as the gateway sent it, and the
// receiver's answer.
type capturedDelivery struct {
	header http.Header
	body   []byte
	status int
}

// forwarder passes every request to target unchanged (method, path and
// query, headers, body) and keeps the POSTs with the answers, so the test
// can send a real delivery again, changed.
func forwarder(t *testing.T, target string) (*httptest.Server, chan capturedDelivery) {
	got := make(chan capturedDelivery, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequest(r.Method, target+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		answer, _ := io.ReadAll(res.Body)
		if r.Method == http.MethodPost {
			got <- capturedDelivery{header: r.Header.Clone(), body: body, status: res.StatusCode}
		}
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(answer)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// send POSTs body with header to the receiver and returns the status.
func send(t *testing.T, url string, header http.Header, body []byte) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/hook", bytes.NewReader(body))
	req.Header = header
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("send to the receiver: %v", err)
	}
	res.Body.Close()
	return res.StatusCode
}

// standardSign is webhook-signature by key over id, ts and body.
func standardSign(key, id string, ts int64, body []byte) string {
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(key, "whsec_"))
	mac := hmac.New(sha256.New, raw)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// The receivers of docs/WEBHOOKS.md (docs/examples/webhooks: Go, Node,
// Python), each run as a process, verify a real delivery by either
// signature and refuse it tampered: a changed body, a forged signature, a
// stale webhook-timestamp (even correctly signed), and they take a
// delivery that comes again as a duplicate of its id.
func TestDocumentedReceiversAcceptARealDeliveryAndRefuseATamperedOne(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"go", "node", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to run the documented receivers (make test installs it): %v", tool, err)
		}
	}
	examples, err := filepath.Abs("../docs/examples/webhooks")
	if err != nil {
		t.Fatal(err)
	}
	goReceiver := filepath.Join(t.TempDir(), "receiver")
	build := exec.Command("go", "build", "-o", goReceiver, "./docs/examples/webhooks/go")
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build the Go receiver: %v\n%s", err, out)
	}

	w := newGraphWorld(t)
	app := w.c.App
	grantBook(t, w)
	receivers := []struct {
		name string
		argv []string
	}{
		{"go", []string{goReceiver}},
		{"node", []string{"node", filepath.Join(examples, "node", "receiver.mjs")}},
		{"python", []string{"python3", filepath.Join(examples, "python", "receiver.py")}},
	}
	signatures := []struct {
		name string
		env  string
	}{
		{"X-Svc-Signature-256", "SVC_CLIENT_SECRET=" + app.ClientSecret},
		{"webhook-signature", "SVC_WEBHOOK_SECRET=" + app.WebhookSecret},
	}
	// One app, one subscription at a time: the receivers take turns.
	for _, r := range receivers {
		for _, sig := range signatures {
			t.Run(r.name+"/"+sig.name, func(t *testing.T) {
				p := startReceiver(t, []string{"PORT=0", "SVC_VERIFY_TOKEN=" + hookVerifyToken, sig.env}, r.argv...)
				fwd, got := forwarder(t, p.url)
				if res, body := w.post(t, app.APIKey, map[string]any{"node": "app/" + app.ID + "/subscriptions",
					"callback_url": fwd.URL + "/hook", "verify_token": hookVerifyToken, "events": []string{"book.post.created"}}, nil); res.StatusCode != 200 {
					t.Fatalf("subscribe the app to the %s receiver (it answers the handshake): %d %s", r.name, res.StatusCode, body)
				}
				w.publish(t, "to the "+r.name+" receiver, checked by "+sig.name)
				var d capturedDelivery
				select {
				case d = <-got:
				case <-time.After(20 * time.Second):
					t.Fatal("no delivery reached the receiver")
				}
				id := d.header.Get("webhook-id")
				if d.status != 200 {
					t.Fatalf("the receiver answered the real delivery %d; it printed %v", d.status, p.printed())
				}
				p.waitLine(t, "accepted "+id+" book.post.created", 10*time.Second)

				refused := func(what string, header http.Header, body []byte) {
					t.Helper()
					before := p.count("refused: ")
					if status := send(t, p.url, header, body); status != 401 {
						t.Errorf("%s: the receiver answered %d, want 401", what, status)
					}
					deadline := time.Now().Add(10 * time.Second)
					for p.count("refused: ") == before && time.Now().Before(deadline) {
						time.Sleep(10 * time.Millisecond)
					}
					if p.count("refused: ") == before {
						t.Errorf("%s: the receiver printed no refusal", what)
					}
				}
				changed := bytes.Replace(d.body, []byte("checked by"), []byte("CHECKED BY"), 1)
				if bytes.Equal(changed, d.body) {
					t.Fatalf("the delivery does not hold the post's text: %s", d.body)
				}
				refused("a changed body", d.header.Clone(), changed)
				forged := d.header.Clone()
				switch sig.name {
				case "X-Svc-Signature-256":
					forged.Set("X-Svc-Signature-256", "sha256="+strings.Repeat("ab", 32))
					refused("a forged X-Svc-Signature-256", forged, d.body)
				default:
					forged["Webhook-Signature"] = []string{standardSign("whsec_"+base64.StdEncoding.EncodeToString([]byte("not the secret")), id, time.Now().Unix(), d.body)}
					refused("a forged webhook-signature", forged, d.body)
					// Signed by the right key, but ten minutes old: a
					// replay the timestamp tolerance (5 minutes) refuses.
					stale := d.header.Clone()
					old := time.Now().Add(-10 * time.Minute).Unix()
					stale["Webhook-Timestamp"] = []string{strconv.FormatInt(old, 10)}
					stale["Webhook-Signature"] = []string{standardSign(app.WebhookSecret, id, old, d.body)}
					refused("a stale webhook-timestamp", stale, d.body)
				}
				if t.Failed() {
					return
				}
				// The real delivery again (a retry, or a replay within
				// the tolerance): answered 2xx, handled once.
				if status := send(t, p.url, d.header.Clone(), d.body); status != 200 {
					t.Errorf("the same delivery again: %d, want 200", status)
				}
				p.waitLine(t, "duplicate "+id, 10*time.Second)
				if n := p.count("accepted "); n != 1 {
					t.Errorf("the receiver accepted %d deliveries, want 1", n)
				}
			})
		}
	}
}
