package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/pgtest"
)

// Issue 18 (CONTRACT §14) through the public API.

// svcchatEvents are every event type svcchat emits.
var svcchatEvents = []string{"page.message.received", "page.message.sent", "svcchat.message.sent", "svcchat.opt_in",
	"svcchat.opt_out", "svcchat.handover", "svcchat.message.delivered", "svcchat.message.read", "svcchat.message.failed"}

// newMsgplusWorld is a chat world whose handovers may expire after 2 s (the
// test-only floor of expires_in) and whose app subscribes to every svcchat
// event with ordering "conversation".
func newMsgplusWorld(t *testing.T) (*chatWorld, *hookReceiver) {
	t.Helper()
	db := pgtest.NewDatabase(t)
	g := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: db, Env: []string{"SVC_SVCCHAT_TEST_MIN_EXPIRES_IN=2"}})
	w := &chatWorld{graphWorld: &graphWorld{g: g, db: db, c: g.Credentials(t)}}
	w.consumerID = w.c.Users["consumer"].ID
	w.consumer = signIn(t, w.graphWorld, "consumer")
	w.owner = signIn(t, w.graphWorld, "owner")
	w.staff = signIn(t, w.graphWorld, "staff")
	w.app = appToken(t, w.graphWorld, "svcchat:send svcchat:read")
	rcv := newHookReceiver(t, w.c.App.ClientSecret)
	res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + w.c.App.ID + "/subscriptions",
		"callback_url": rcv.srv.URL + "/hook", "events": svcchatEvents, "verify_token": hookVerifyToken,
		"ordering": "conversation"}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}
	return w, rcv
}

// seqOf reads data.sequence.
func seqOf(d hookDelivery) int {
	f, _ := d.body.Data["sequence"].(float64)
	return int(f)
}

// conversationOf reads the conversation id of any svcchat event's data.
func conversationOf(d hookDelivery) string {
	if c, ok := d.body.Data["conversationId"].(string); ok {
		return c
	}
	if c, ok := d.body.Data["conversation"].(map[string]any); ok {
		s, _ := c["id"].(string)
		return s
	}
	return ""
}

// byConversation groups the deliveries received so far by conversation,
// in receipt order.
func (r *hookReceiver) byConversation() map[string][]hookDelivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]hookDelivery{}
	for _, d := range r.got {
		if c := conversationOf(d); c != "" {
			out[c] = append(out[c], d)
		}
	}
	return out
}

func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", timeout, what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

type threadRead struct {
	Typing   bool `json:"typing"`
	Messages []struct {
		ID, Direction, Status string
	} `json:"messages"`
}

func (w *chatWorld) thread(t *testing.T, cid string) threadRead {
	t.Helper()
	res, body := w.mobileGet(t, w.consumer, "threads/"+cid)
	if res.StatusCode != 200 {
		t.Fatalf("thread: %d %s", res.StatusCode, body)
	}
	return decode[threadRead](t, body)
}

func (w *chatWorld) senderAction(t *testing.T, action string) (*http.Response, []byte) {
	t.Helper()
	return w.post(t, w.app, map[string]any{"node": w.messagesNode(), "recipient_user_id": w.consumerID, "sender_action": action}, nil)
}

// graphStatuses are the statuses of a conversation's messages by id, as the
// Graph's messages edge shows them.
func (w *chatWorld) graphStatuses(t *testing.T, cid string) map[string]string {
	t.Helper()
	res, body := w.get(t, w.app, url.Values{"node": {"page/" + w.c.Page.ID + "/conversations/" + cid + "/messages"}})
	if res.StatusCode != 200 {
		t.Fatalf("messages: %d %s", res.StatusCode, body)
	}
	list := decode[struct {
		Data []struct{ ID, Status string } `json:"data"`
	}](t, body)
	out := map[string]string{}
	for _, m := range list.Data {
		out[m.ID] = m.Status
	}
	return out
}

// The consumer's chat app fetching a thread marks the Page's messages
// delivered, reading it marks them read, each with its event; the app's
// typing shows in the thread until typing_off; mark_seen marks the user's
// own messages read; every event of the conversation carries a gap-free
// data.sequence and, with ordering "conversation", arrives in that order,
// signed as Standard Webhooks says.
func TestMessageStatusTypingAndSequencesThroughThePublicAPI(t *testing.T) {
	t.Parallel()
	w, rcv := newMsgplusWorld(t)
	cid, inbound := w.write(t, "where is my order?")
	m1 := wantSent(t, first(w.session(t, "looking into it")), w.consumerID)
	m2 := wantSent(t, first(w.session(t, "it ships today")), w.consumerID)
	if st := w.graphStatuses(t, cid); st[m1.MessageID] != "sent" || st[m2.MessageID] != "sent" || st[inbound] != "sent" {
		t.Fatalf("statuses before any fetch: %v", st)
	}

	t.Run("typing_on shows in the consumer's thread until typing_off", func(t *testing.T) {
		if res, body := w.senderAction(t, "typing_on"); res.StatusCode != 200 || !strings.Contains(string(body), w.consumerID) {
			t.Fatalf("typing_on: %d %s", res.StatusCode, body)
		}
		if !w.thread(t, cid).Typing {
			t.Fatal("typing_on is not shown")
		}
		if res, body := w.senderAction(t, "typing_off"); res.StatusCode != 200 {
			t.Fatalf("typing_off: %d %s", res.StatusCode, body)
		}
		if w.thread(t, cid).Typing {
			t.Fatal("typing_off still shows typing")
		}
	})
	t.Run("a sender action with a message, or an unknown one, is refused naming the field", func(t *testing.T) {
		res, body := w.post(t, w.app, map[string]any{"node": w.messagesNode(), "recipient_user_id": w.consumerID,
			"sender_action": "typing_on", "text": "hi"}, nil)
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "text") {
			t.Errorf("message %q does not name text", e.Error.Message)
		}
		res, body = w.senderAction(t, "dance")
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "sender_action") {
			t.Errorf("message %q does not name sender_action", e.Error.Message)
		}
	})

	t.Run("a fetch marks the Page's messages delivered, once", func(t *testing.T) {
		th := w.thread(t, cid)
		for _, m := range th.Messages {
			want := "delivered"
			if m.Direction == "inbound" {
				want = "sent"
			}
			if m.Status != want {
				t.Errorf("message %s (%s) is %s after the fetch, want %s", m.ID, m.Direction, m.Status, want)
			}
		}
		w.thread(t, cid) // a second fetch emits nothing more
		for _, id := range []string{m1.MessageID, m2.MessageID} {
			d := rcv.waitForMatch("svcchat.message.delivered", func(data map[string]any) bool { return data["messageId"] == id })
			if d.body.Data["conversationId"] != cid || d.body.Data["userId"] != w.consumerID || d.body.Data["pageId"] != w.c.Page.ID {
				t.Errorf("delivered data %v", d.body.Data)
			}
		}
		if st := w.graphStatuses(t, cid); st[m1.MessageID] != "delivered" || st[m2.MessageID] != "delivered" {
			t.Errorf("the Graph shows %v", st)
		}
	})
	t.Run("reading the thread marks them read", func(t *testing.T) {
		res, body := w.mobile(t, w.consumer, "threads/"+cid+"/read", map[string]any{})
		if res.StatusCode != 200 || !strings.Contains(string(body), `"read":2`) {
			t.Fatalf("read: %d %s", res.StatusCode, body)
		}
		for _, id := range []string{m1.MessageID, m2.MessageID} {
			rcv.waitForMatch("svcchat.message.read", func(data map[string]any) bool { return data["messageId"] == id })
		}
		if st := w.graphStatuses(t, cid); st[m1.MessageID] != "read" || st[m2.MessageID] != "read" {
			t.Errorf("the Graph shows %v", st)
		}
		res, body = w.mobile(t, w.staff, "threads/"+cid+"/read", map[string]any{})
		wantGraphError(t, res, body, 404, 100, 33) // another user's thread does not exist for them
	})
	t.Run("mark_seen marks the consumer's own messages read", func(t *testing.T) {
		if res, body := w.senderAction(t, "mark_seen"); res.StatusCode != 200 {
			t.Fatalf("mark_seen: %d %s", res.StatusCode, body)
		}
		for _, m := range w.thread(t, cid).Messages {
			if m.Status != "read" {
				t.Errorf("message %s (%s) is %s, want read", m.ID, m.Direction, m.Status)
			}
		}
	})

	t.Run("the conversation's events are numbered without gaps and arrive in order, with Standard Webhooks signatures", func(t *testing.T) {
		// opt_in, received, (handover by the first send), 2 × (page sent,
		// svcchat sent), 2 delivered, 2 read.
		const want = 11
		waitUntil(t, 15*time.Second, "every event of the conversation delivered", func() bool { return len(rcv.byConversation()[cid]) >= want })
		got := rcv.byConversation()[cid]
		wh, err := standardwebhooks.NewWebhookRaw([]byte(w.c.App.ClientSecret))
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range got {
			if seqOf(d) != i+1 {
				t.Fatalf("event %d (%s) has sequence %d; the receipt order is %v", i, d.body.Type, seqOf(d), sequences(got))
			}
			if err := wh.Verify(d.raw, d.header); err != nil {
				t.Fatalf("the Standard Webhooks library refuses delivery %s: %v", d.delivery, err)
			}
			if d.header.Get("webhook-id") != d.body.ID {
				t.Errorf("webhook-id %q is not the event id %q", d.header.Get("webhook-id"), d.body.ID)
			}
		}
		if len(got) != want {
			t.Errorf("%d events, want %d: %v", len(got), want, sequences(got))
		}
	})
}

func sequences(ds []hookDelivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmt.Sprintf("%d:%s", seqOf(d), d.body.Type)
	}
	return out
}

// Ten people write to the Page and the app answers them all at once.
// The receiver answers the earlier events of each conversation more slowly
// than the later ones (a deliverer that sent a conversation's events side
// by side would see them arrive reversed), and it fails every delivery of
// one conversation from its fourth event on until all the others are
// complete: the others all arrive complete and in order while that one is
// held back after its third event, and once the receiver recovers, the
// gateway's retry brings the held conversation's events, still in order.
func TestOrderedConversationsSurviveAFlakyReceiver(t *testing.T) {
	t.Parallel()
	w, rcv := newMsgplusWorld(t)
	people := w.people(t, 10)
	const perUser = 5
	// Per conversation: opt_in, received, handover (first send), then two
	// events per send.
	const want = 3 + 2*perUser

	var (
		mu       sync.Mutex
		held     string // the held-back conversation
		holding  = true
		refusals int
	)
	rcv.mu.Lock()
	rcv.answer = func(raw []byte) int {
		var b struct {
			Data struct {
				Sequence       int    `json:"sequence"`
				ConversationID string `json:"conversationId"`
				Conversation   struct {
					ID string `json:"id"`
				} `json:"conversation"`
			} `json:"data"`
		}
		_ = json.Unmarshal(raw, &b)
		cid := b.Data.ConversationID + b.Data.Conversation.ID
		mu.Lock()
		refuse := holding && cid == held && b.Data.Sequence >= 4
		if refuse {
			refusals++
		}
		mu.Unlock()
		if refuse {
			return http.StatusInternalServerError
		}
		// The earlier the event, the slower the answer.
		if b.Data.Sequence <= 6 {
			time.Sleep(time.Duration(7-b.Data.Sequence) * 25 * time.Millisecond)
		} else if rand.IntN(3) == 0 {
			time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
		}
		return 0
	}
	rcv.mu.Unlock()

	convs := map[string]string{} // user → conversation
	var convMu sync.Mutex
	var wg sync.WaitGroup
	for id, session := range people {
		wg.Go(func() {
			cid := w.writeAs(t, session, "hello")
			convMu.Lock()
			convs[id] = cid
			convMu.Unlock()
		})
	}
	wg.Wait()
	mu.Lock()
	held = convs[w.consumerID]
	mu.Unlock()
	for id := range people {
		for i := range perUser {
			wg.Go(func() {
				res, body := w.post(t, w.app, map[string]any{"node": w.messagesNode(), "recipient_user_id": id, "text": fmt.Sprintf("update %d", i)}, nil)
				if res.StatusCode != 200 {
					t.Errorf("send: %d %s", res.StatusCode, body)
				}
			})
		}
	}
	wg.Wait()

	inOrder := func(cid string, n int) {
		t.Helper()
		got := rcv.byConversation()[cid]
		if len(got) != n {
			t.Fatalf("conversation %s received %d events, want %d: %v", cid, len(got), n, sequences(got))
		}
		for i, d := range got {
			if seqOf(d) != i+1 {
				t.Fatalf("conversation %s received in the order %v", cid, sequences(got))
			}
		}
	}
	for _, cid := range convs {
		if cid != held {
			waitUntil(t, 45*time.Second, "every event of conversation "+cid, func() bool { return len(rcv.byConversation()[cid]) >= want })
		}
	}
	for _, cid := range convs {
		if cid != held {
			inOrder(cid, want)
		}
	}
	// The others are complete; the held one has only what came before the
	// failing event (checked before the receiver recovers).
	inOrder(held, 3)
	mu.Lock()
	holding = false
	n := refusals
	mu.Unlock()
	if n == 0 {
		t.Fatal("the held conversation's fourth event was never attempted")
	}
	// Its retry comes about 10 s after the first refusal (1 min more should
	// that one have been refused too).
	waitUntil(t, 90*time.Second, "the held conversation's events after the receiver recovers",
		func() bool { return len(rcv.byConversation()[held]) >= want })
	inOrder(held, want)
}

// A take with expires_in shows control.expires_at; when it lapses with no
// message from the holder, control returns to the holder before and
// svcchat.handover says "expire"; the handovers node lists both changes.
func TestAHandoverWithExpiresInReturnsControlWhenItLapses(t *testing.T) {
	t.Parallel()
	w, rcv := newMsgplusWorld(t)
	cid, _ := w.write(t, "hi")
	conversation := func() map[string]any {
		res, body := w.get(t, w.app, url.Values{"node": {"page/" + w.c.Page.ID + "/conversations/" + cid}})
		if res.StatusCode != 200 {
			t.Fatalf("conversation: %d %s", res.StatusCode, body)
		}
		return decode[map[string]any](t, body)
	}
	before := conversation()["control"].(map[string]any)["holder"]

	t.Run("expires_in out of range, or on another action, is refused naming it", func(t *testing.T) {
		for _, body := range []map[string]any{
			{"action": "take_thread_control", "expires_in": 1},
			{"action": "take_thread_control", "expires_in": 86401},
			{"action": "request_thread_control", "expires_in": 60},
		} {
			res, b := w.handover(t, cid, body)
			if e := wantGraphError(t, res, b, 400, 100, 0); !strings.Contains(e.Error.Message, "expires_in") {
				t.Errorf("message %q does not name expires_in", e.Error.Message)
			}
		}
	})

	res, body := w.handover(t, cid, map[string]any{"action": "take_thread_control", "expires_in": 2})
	if res.StatusCode != 200 || !strings.Contains(string(body), `"expires_at"`) {
		t.Fatalf("take with expires_in: %d %s", res.StatusCode, body)
	}
	c := conversation()["control"].(map[string]any)
	if c["holder"] != "app" || c["expires_at"] == nil {
		t.Fatalf("control after the take: %v", c)
	}
	waitUntil(t, 10*time.Second, "control returns when the expiry lapses", func() bool {
		c := conversation()["control"].(map[string]any)
		return c["holder"] == before && c["expires_at"] == nil
	})
	d := rcv.waitForMatch("svcchat.handover", func(data map[string]any) bool { return data["action"] == "expire" })
	if d.body.Data["newHolder"] != before || d.body.Data["previousHolder"] != "app:"+w.c.App.ID {
		t.Errorf("expire event %v", d.body.Data)
	}

	res, body = w.get(t, w.app, url.Values{"node": {"page/" + w.c.Page.ID + "/conversations/" + cid + "/handovers"}})
	// The keys CONTRACT §14 names (camelCase, as the event's), sequence a
	// number as in the event.
	list := decode[struct {
		Data []struct {
			Action, At     string
			PreviousHolder string `json:"previousHolder"`
			NewHolder      string `json:"newHolder"`
			AppID          string `json:"appId"`
			Sequence       any    `json:"sequence"`
		} `json:"data"`
	}](t, body)
	if res.StatusCode != 200 || len(list.Data) != 2 || list.Data[0].Action != "expire" || list.Data[1].Action != "take_thread_control" ||
		list.Data[1].AppID != w.c.App.ID || list.Data[0].NewHolder != before || list.Data[0].PreviousHolder != "app:"+w.c.App.ID {
		t.Fatalf("handovers: %d %s", res.StatusCode, body)
	}
	if seq, ok := list.Data[0].Sequence.(float64); !ok || seq != d.body.Data["sequence"] {
		t.Fatalf("handovers: sequence %#v, want the number of the expire event's (%v)", list.Data[0].Sequence, d.body.Data["sequence"])
	}
	res, body = w.get(t, w.app, url.Values{"node": {"page/" + w.c.Page.ID + "/conversations/424242/handovers"}})
	wantGraphError(t, res, body, 404, 100, 33)

	t.Run("the Page's handover_timeout is the default expires_in", func(t *testing.T) {
		res, body := w.post(t, w.owner, map[string]any{"node": "page/" + w.c.Page.ID, "handover_timeout": 30}, nil)
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "handover_timeout") {
			t.Errorf("message %q does not name handover_timeout", e.Error.Message)
		}
		w.setPage(t, map[string]any{"handover_timeout": 600})
		res, body = w.get(t, w.owner, url.Values{"node": {"page/" + w.c.Page.ID}})
		if res.StatusCode != 200 || !strings.Contains(string(body), `"handover_timeout":600`) {
			t.Fatalf("page: %d %s", res.StatusCode, body)
		}
		if res, body := w.handover(t, cid, map[string]any{"action": "take_thread_control"}); res.StatusCode != 200 {
			t.Fatalf("take: %d %s", res.StatusCode, body)
		}
		at, err := time.Parse(time.RFC3339, conversation()["control"].(map[string]any)["expires_at"].(string))
		if err != nil || time.Until(at) < 9*time.Minute || time.Until(at) > 11*time.Minute {
			t.Fatalf("expires_at %v (%v), want about 10 minutes from now", at, err)
		}
	})
}

// A receiver answering 410 disables its endpoint; events meanwhile are
// held, and after the app saves its subscription again a replay of the
// time range delivers them.
func TestAGoneEndpointHoldsEventsUntilTheAppReplaysThem(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	app := w.c.App
	grantBook(t, w)
	rcv := newHookReceiver(t, app.ClientSecret)
	rcv.answer = func([]byte) int { return http.StatusGone }
	subscribe := func() {
		res, body := w.post(t, app.APIKey, map[string]any{"node": "app/" + app.ID + "/subscriptions", "callback_url": rcv.srv.URL + "/hook",
			"events": []string{"book.post.created"}, "verify_token": hookVerifyToken}, nil)
		if res.StatusCode != 200 {
			t.Fatalf("subscribe: %d %s", res.StatusCode, body)
		}
	}
	subscribe()
	since := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	w.publish(t, "first")
	held := func() int {
		res, body := w.get(t, app.APIKey, url.Values{"node": {"app/" + app.ID + "/deliveries"}, "status": {"held"}})
		if res.StatusCode != 200 {
			t.Fatalf("deliveries: %d %s", res.StatusCode, body)
		}
		return len(decode[struct{ Data []any }](t, body).Data)
	}
	waitUntil(t, 10*time.Second, "the 410 holds the delivery", func() bool { return held() == 1 })
	w.publish(t, "second")
	waitUntil(t, 10*time.Second, "a later event is held", func() bool { return held() == 2 })

	rcv.mu.Lock()
	rcv.answer = nil
	rcv.mu.Unlock()
	subscribe()
	replay := "app/" + app.ID + "/deliveries/replay"
	res, body := w.post(t, app.APIKey, map[string]any{"node": replay, "since": "not a time"}, nil)
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "since") {
		t.Errorf("message %q does not name since", e.Error.Message)
	}
	res, body = w.post(t, app.APIKey, map[string]any{"node": replay, "since": since, "status": "held"}, nil)
	if res.StatusCode != 200 || !strings.Contains(string(body), `"replayed":"2"`) && !strings.Contains(string(body), `"replayed":2`) {
		t.Fatalf("replay: %d %s", res.StatusCode, body)
	}
	waitUntil(t, 10*time.Second, "both held events delivered", func() bool { return len(rcv.all("book.post.created")) == 2 })
}

// During a client-secret rotation's overlap every delivery carries a
// Standard Webhooks signature by each secret, so a receiver still holding
// the old secret and one already holding the new both verify it with the
// reference library; X-Svc-Signature-256 is by the new secret.
func TestDuringASecretRotationDeliveriesAreSignedByBothSecrets(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	w.owner = w.g.UserToken(t, "owner", "pages:read", "pages:manage")
	session := signIn(t, w, "owner")
	res, body := w.post(t, session, map[string]any{"node": "app/" + w.c.App.ID + "/keys", "kind": "client_secret"}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("rotate the client secret: %d %s", res.StatusCode, body)
	}
	newSecret := decode[struct{ Value string }](t, body).Value
	if newSecret == "" || newSecret == w.c.App.ClientSecret {
		t.Fatalf("rotation answered %s", body)
	}
	rcv := newHookReceiver(t, newSecret)
	grantBook(t, w)
	if res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + w.c.App.ID + "/subscriptions",
		"callback_url": rcv.srv.URL + "/hook", "verify_token": hookVerifyToken, "events": []string{"book.post.created"}}, nil); res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}
	post := w.publish(t, "signed twice")
	d := rcv.waitForData("book.post.created", "postId", post)
	if n := len(strings.Fields(d.header.Get("webhook-signature"))); n != 2 {
		t.Fatalf("webhook-signature has %d signatures during the overlap, want 2: %q", n, d.header.Get("webhook-signature"))
	}
	for name, secret := range map[string]string{"old": w.c.App.ClientSecret, "new": newSecret} {
		wh, err := standardwebhooks.NewWebhookRaw([]byte(secret))
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(d.raw, d.header); err != nil {
			t.Errorf("a receiver with the %s secret refuses the delivery: %v", name, err)
		}
	}
}
