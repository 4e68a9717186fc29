package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// hookReceiver is an app's webhook endpoint on loopback: it answers the
// verification handshake and checks every delivery's signature with the
// app's client secret.
type hookReceiver struct {
	t      *testing.T
	secret string
	srv    *httptest.Server
	mu     sync.Mutex
	got    []hookDelivery
	// answer, when set, may refuse a signed delivery with a status (0:
	// accept it), after a delay of its choice.
	answer func(raw []byte) int
}

type hookDelivery struct {
	delivery, event string
	raw             []byte
	header          http.Header
	body            struct {
		ID         string         `json:"id"`
		Type       string         `json:"type"`
		Created    int64          `json:"created"`
		APIVersion string         `json:"api_version"`
		AppID      string         `json:"app_id"`
		PageID     *string        `json:"page_id"`
		Data       map[string]any `json:"data"`
	}
}

const hookVerifyToken = "e2e-verify"

func newHookReceiver(t *testing.T, secret string) *hookReceiver {
	r := &hookReceiver{t: t, secret: secret}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet {
			q := req.URL.Query()
			if q.Get("hub.mode") != "subscribe" || q.Get("hub.verify_token") != hookVerifyToken {
				http.Error(w, "wrong verify token", http.StatusForbidden)
				return
			}
			_, _ = io.WriteString(w, q.Get("hub.challenge"))
			return
		}
		raw, _ := io.ReadAll(req.Body)
		mac := hmac.New(sha256.New, []byte(r.secret))
		mac.Write(raw)
		if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); req.Header.Get("X-Svc-Signature-256") != want {
			t.Errorf("delivery %s has signature %q, want %q", req.Header.Get("X-Svc-Delivery"), req.Header.Get("X-Svc-Signature-256"), want)
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		r.mu.Lock()
		answer := r.answer
		r.mu.Unlock()
		if answer != nil {
			if status := answer(raw); status != 0 {
				http.Error(w, "not now", status)
				return
			}
		}
		d := hookDelivery{delivery: req.Header.Get("X-Svc-Delivery"), event: req.Header.Get("X-Svc-Event"), raw: raw, header: req.Header.Clone()}
		if err := json.Unmarshal(raw, &d.body); err != nil {
			t.Errorf("delivery body %s: %v", raw, err)
		}
		if req.Header.Get("X-Svc-Timestamp") == "" || d.delivery == "" || d.event != d.body.Type {
			t.Errorf("delivery headers %v", req.Header)
		}
		r.mu.Lock()
		r.got = append(r.got, d)
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// waitFor returns the deliveries of event id once n have arrived.
func (r *hookReceiver) waitFor(eventID string, n int) []hookDelivery {
	r.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var out []hookDelivery
		r.mu.Lock()
		for _, d := range r.got {
			if d.body.ID == eventID {
				out = append(out, d)
			}
		}
		r.mu.Unlock()
		if len(out) >= n {
			return out
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("event %s arrived %d times, want %d", eventID, len(out), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitForData returns the first delivery of an eventType event whose data
// holds key: value.
func (r *hookReceiver) waitForData(eventType, key, value string) hookDelivery {
	r.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r.mu.Lock()
		for _, d := range r.got {
			if d.body.Type == eventType && d.body.Data[key] == value {
				r.mu.Unlock()
				return d
			}
		}
		r.mu.Unlock()
		if time.Now().After(deadline) {
			r.t.Fatalf("no %s event with %s=%s delivered", eventType, key, value)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// grantBook has the owner link the seeded Page to the seeded app with book
// as well as svcchat: the seed links it for svcchat only, and an app gets
// (and may subscribe to) only the events of products it has (CONTRACT §15).
func grantBook(t *testing.T, w *graphWorld) {
	t.Helper()
	res, body := w.post(t, signIn(t, w, "owner"), map[string]any{"node": "app/" + w.c.App.ID + "/page_links",
		"page_id": w.c.Page.ID, "products": []string{"svcchat", "book"}}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("link the Page with book: %d %s", res.StatusCode, body)
	}
}

func TestWebhooksDeliverSignedEventsEndToEnd(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	app := w.c.App
	grantBook(t, w)
	rcv := newHookReceiver(t, app.ClientSecret)
	subscriptions := "app/" + app.ID + "/subscriptions"

	res, body := w.post(t, app.APIKey, map[string]any{"node": subscriptions, "callback_url": rcv.srv.URL + "/hook",
		"events": []string{"book.post.created"}, "verify_token": hookVerifyToken}, nil)
	if res.StatusCode != 200 || !strings.Contains(string(body), `"success":true`) {
		t.Fatalf("save subscription: %d %s", res.StatusCode, body)
	}
	res, body = w.get(t, app.APIKey, url.Values{"node": {subscriptions}})
	subs := decode[struct {
		Data []struct {
			CallbackURL string   `json:"callback_url"`
			Events      []string `json:"events"`
			Active      bool     `json:"active"`
		} `json:"data"`
	}](t, body)
	if res.StatusCode != 200 || len(subs.Data) != 1 || subs.Data[0].CallbackURL != rcv.srv.URL+"/hook" || !subs.Data[0].Active ||
		strings.Join(subs.Data[0].Events, ",") != "book.post.created" {
		t.Fatalf("subscriptions: %d %s", res.StatusCode, body)
	}

	// A post published through the book plugin reaches the app, signed.
	postID := w.publish(t, "hello, webhooks")
	got := rcv.waitForData("book.post.created", "postId", postID)
	if !strings.HasPrefix(got.body.ID, "evt_") || got.body.APIVersion != "v1" || got.body.AppID != app.ID ||
		got.body.PageID == nil || *got.body.PageID != w.c.Page.ID || got.body.Data["content"] != "hello, webhooks" {
		t.Fatalf("delivered body %+v", got.body)
	}

	// The delivery log shows it, to the app and to its team's Admin.
	deliveries := "app/" + app.ID + "/deliveries"
	type deliveryList struct {
		Data []struct {
			ID, EventID, EventType, Status string
			Attempts                       []struct {
				At              string `json:"at"`
				StatusCode      int    `json:"status_code"`
				LatencyMs       int    `json:"latency_ms"`
				Error           string `json:"error"`
				ResponseExcerpt string `json:"response_excerpt"`
			} `json:"attempts"`
		} `json:"data"`
		Paging map[string]any `json:"paging"`
	}
	var log deliveryList
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, body = w.get(t, app.APIKey, url.Values{"node": {deliveries}, "status": {"succeeded"}})
		if res.StatusCode != 200 {
			t.Fatalf("deliveries: %d %s", res.StatusCode, body)
		}
		if err := json.Unmarshal(body, &log); err != nil {
			t.Fatal(err)
		}
		if len(log.Data) == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(log.Data) != 1 || log.Data[0].ID != got.delivery || log.Data[0].Status != "succeeded" ||
		len(log.Data[0].Attempts) != 1 || log.Data[0].Attempts[0].StatusCode != 204 || log.Data[0].Attempts[0].At == "" {
		t.Fatalf("delivery log %s", body)
	}
	if !strings.Contains(string(body), `"event_id"`) || !strings.Contains(string(body), `"response_excerpt"`) || log.Paging == nil {
		t.Fatalf("delivery log fields %s", body)
	}
	session := signIn(t, w, "owner")
	if res, body := w.get(t, session, url.Values{"node": {deliveries}}); res.StatusCode != 200 {
		t.Fatalf("the team Admin's session reads deliveries: %d %s", res.StatusCode, body)
	}

	// Replay: the same event again, as a new delivery.
	res, body = w.post(t, app.APIKey, map[string]any{"node": "delivery/" + got.delivery + "/replay"}, nil)
	replay := decode[struct{ ID string }](t, body)
	if res.StatusCode != 200 || replay.ID == "" || replay.ID == got.delivery {
		t.Fatalf("replay: %d %s", res.StatusCode, body)
	}
	both := rcv.waitFor(got.body.ID, 2)
	if both[1].delivery != replay.ID {
		t.Fatalf("the replay arrived as delivery %s, want %s", both[1].delivery, replay.ID)
	}

	// A test event reaches the callback whatever the filter.
	res, body = w.post(t, app.APIKey, map[string]any{"node": "app/" + app.ID + "/test_event", "type": "svcchat.opt_in"}, nil)
	test := decode[struct{ ID string }](t, body)
	if res.StatusCode != 200 || !strings.HasPrefix(test.ID, "evt_") {
		t.Fatalf("test event: %d %s", res.StatusCode, body)
	}
	if d := rcv.waitFor(test.ID, 1)[0]; d.body.Type != "svcchat.opt_in" || d.body.Data["test"] != true {
		t.Fatalf("test event body %+v", d.body)
	}
}

func TestWebhookRefusalsFollowTheContract(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	app := w.c.App
	grantBook(t, w)
	subscriptions := "app/" + app.ID + "/subscriptions"
	save := func(token, callback string) (*http.Response, []byte) {
		return w.post(t, token, map[string]any{"node": subscriptions, "callback_url": callback,
			"events": []string{"book.post.created"}, "verify_token": hookVerifyToken}, nil)
	}
	wrongEcho := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "something else")
	}))
	defer wrongEcho.Close()

	res, body := save(app.APIKey, wrongEcho.URL)
	t.Run("a failed handshake is refused naming callback_url", func(t *testing.T) {
		e := wantGraphError(t, res, body, 400, 100, 0)
		if !strings.Contains(e.Error.Message, "callback_url") {
			t.Errorf("message %q does not name callback_url", e.Error.Message)
		}
	})
	t.Run("a private callback address is refused", func(t *testing.T) {
		res, body := save(app.APIKey, "https://10.0.0.1/hook")
		wantGraphError(t, res, body, 400, 100, 0)
	})
	t.Run("the cloud metadata address is refused", func(t *testing.T) {
		res, body := save(app.APIKey, "https://169.254.169.254/latest/meta-data/")
		wantGraphError(t, res, body, 400, 100, 0)
	})
	t.Run("an unknown event type is refused", func(t *testing.T) {
		res, body := w.post(t, app.APIKey, map[string]any{"node": subscriptions, "callback_url": "https://example.com/",
			"events": []string{"book.post.deleted"}, "verify_token": "x"}, nil)
		wantGraphError(t, res, body, 400, 100, 0)
	})
	t.Run("no token", func(t *testing.T) {
		res, body := w.get(t, "", url.Values{"node": {subscriptions}})
		wantGraphError(t, res, body, 401, 104, 0)
	})
	t.Run("a user off the app's team is refused with 2069004", func(t *testing.T) {
		res, body := w.get(t, w.stranger, url.Values{"node": {subscriptions}})
		wantGraphError(t, res, body, 403, 200, 2069004)
		res, body = w.get(t, w.stranger, url.Values{"node": {"app/" + app.ID + "/deliveries"}})
		wantGraphError(t, res, body, 403, 200, 2069004)
	})
	t.Run("an unknown app is not found", func(t *testing.T) {
		res, body := w.get(t, w.owner, url.Values{"node": {"app/999999999/deliveries"}})
		wantGraphError(t, res, body, 404, 100, 33)
	})
	t.Run("an unknown delivery is not found", func(t *testing.T) {
		res, body := w.post(t, app.APIKey, map[string]any{"node": "delivery/whd_0123456789abcdef0123456789abcdef/replay"}, nil)
		wantGraphError(t, res, body, 404, 100, 33)
	})
	t.Run("an invalid status filter is refused", func(t *testing.T) {
		res, body := w.get(t, app.APIKey, url.Values{"node": {"app/" + app.ID + "/deliveries"}, "status": {"lost"}})
		wantGraphError(t, res, body, 400, 100, 0)
	})
}
