package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/pgtest"
)

// chatWorld is a running gateway with the seeded world, the consumer's and
// the owner's mobile sessions, and a system user token of the seeded app
// with the svcchat scopes.
type chatWorld struct {
	*graphWorld
	consumerID string
	consumer   string // session of the seeded consumer
	owner      string // session of the Page owner
	staff      string // session of the staff user
	app        string // the app's client_credentials token: svcchat:send, svcchat:read
}

func newChatWorld(t *testing.T) *chatWorld {
	t.Helper()
	db := pgtest.NewDatabase(t)
	g := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: db})
	w := &chatWorld{graphWorld: &graphWorld{g: g, db: db, c: g.Credentials(t)}}
	w.consumerID = w.c.Users["consumer"].ID
	w.consumer = signIn(t, w.graphWorld, "consumer")
	w.owner = signIn(t, w.graphWorld, "owner")
	w.staff = signIn(t, w.graphWorld, "staff")
	w.app = appToken(t, w.graphWorld, "svcchat:send svcchat:read")
	return w
}

// signIn opens a mobile session for a seeded user.
func signIn(t *testing.T, w *graphWorld, user string) string {
	t.Helper()
	u := w.c.Users[user]
	return signInAt(t, w.g.URL, u.Username, u.Password)
}

// appToken is a system user token of the seeded app (client_credentials).
func appToken(t *testing.T, w *graphWorld, scope string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {w.c.App.ClientID},
		"client_secret": {w.c.App.ClientSecret}, "scope": {scope}}
	res, body := do(t, "POST", w.g.URL+"/api/oauth/token", strings.NewReader(form.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	tok := decode[struct {
		AccessToken string `json:"access_token"`
	}](t, body)
	if res.StatusCode != 200 || tok.AccessToken == "" {
		t.Fatalf("client_credentials: %d %s", res.StatusCode, body)
	}
	return tok.AccessToken
}

// mobile posts a JSON body to a mobile endpoint with a session.
func (w *chatWorld) mobile(t *testing.T, session, path string, body any) (*http.Response, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	return do(t, "POST", w.g.URL+"/api/mobile/svcchat/page-messaging/"+path, strings.NewReader(string(b)),
		map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + session})
}

// write is the consumer writing to the seeded Page; it returns the
// conversation and message ids.
func (w *chatWorld) write(t *testing.T, text string) (string, string) {
	t.Helper()
	res, body := w.mobile(t, w.consumer, "messages", map[string]any{"pageId": w.c.Page.ID, "text": text})
	out := decode[struct{ ConversationID, MessageID string }](t, body)
	if res.StatusCode != 200 || out.ConversationID == "" || !strings.HasPrefix(out.MessageID, "m_") {
		t.Fatalf("write to the Page: %d %s", res.StatusCode, body)
	}
	return out.ConversationID, out.MessageID
}

func (w *chatWorld) messagesNode() string { return "page/" + w.c.Page.ID + "/messages" }

// session sends a session message to the consumer as the app.
func (w *chatWorld) session(t *testing.T, text string) (*http.Response, []byte) {
	t.Helper()
	return w.post(t, w.app, map[string]any{"node": w.messagesNode(), "recipient_user_id": w.consumerID, "text": text}, nil)
}

// template sends order_update to the consumer as the app.
func (w *chatWorld) template(t *testing.T, orderID string) (*http.Response, []byte) {
	t.Helper()
	return w.post(t, w.app, map[string]any{"node": w.messagesNode(), "to": w.consumerID, "type": "template",
		"templateName": "order_update", "templateParams": map[string]string{"order_id": orderID, "status": "shipped"}}, nil)
}

type sentMessage struct {
	RecipientID    string `json:"recipient_id"`
	MessageID      string `json:"message_id"`
	ConversationID string `json:"conversation_id"`
}

func wantSent(t *testing.T, r sendResult, recipient string) sentMessage {
	t.Helper()
	res, body := r.res, r.body
	m := decode[sentMessage](t, body)
	if res.StatusCode != 200 || m.RecipientID != recipient || !strings.HasPrefix(m.MessageID, "m_") || m.ConversationID == "" {
		t.Fatalf("send: %d %s", res.StatusCode, body)
	}
	return m
}

// dbCount counts rows of a query on the test's database.
func dbCount(t *testing.T, dbURL, query string, args ...any) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func keys(m map[string]any) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// The "Done when": the consumer writes to the Page, the app answers
// with a session message and a template, every event reaches the app's
// webhook signed and shaped as documented, an opt-out refuses both kinds
// until the consumer writes again.
func TestAConsumerAndAnAppMessageThroughThePage(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t)
	page, app, user := w.c.Page.ID, w.c.App.ID, w.consumerID
	rcv := newHookReceiver(t, w.c.App.ClientSecret)
	res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + app + "/subscriptions",
		"callback_url": rcv.srv.URL + "/hook", "verify_token": hookVerifyToken,
		"events": []string{"page.message.received", "page.message.sent", "svcchat.message.sent", "svcchat.opt_in", "svcchat.opt_out"}}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}

	// 1. The consumer writes: a conversation, an opt-in from the message.
	cid, inbound := w.write(t, "Hi! Where is my order?")
	got := rcv.waitForData("page.message.received", "messageId", inbound)
	if d := got.body.Data; keys(d) != "conversationId,kind,messageId,pageId,sequence,templateName,text,userId" ||
		d["conversationId"] != cid || d["pageId"] != page || d["userId"] != user || d["text"] != "Hi! Where is my order?" ||
		d["kind"] != "session" || d["templateName"] != nil || got.body.AppID != app || *got.body.PageID != page {
		t.Fatalf("page.message.received = %+v", got.body)
	}
	got = rcv.waitForData("svcchat.opt_in", "userId", user)
	if d := got.body.Data; keys(d) != "conversationId,pageId,purposes,sequence,source,userId" || d["source"] != "message" || d["pageId"] != page ||
		fmt.Sprint(d["purposes"]) != "[transactional]" {
		t.Fatalf("svcchat.opt_in = %+v", got.body)
	}

	// 2. The app answers inside the window; it takes control.
	sent := wantSent(t, first(w.session(t, "It ships today.")), user)
	if sent.ConversationID != cid {
		t.Fatalf("the answer opened conversation %s, not %s", sent.ConversationID, cid)
	}
	got = rcv.waitForData("page.message.sent", "messageId", sent.MessageID)
	if d := got.body.Data; keys(d) != "conversationId,kind,messageId,pageId,sequence,templateName,text,userId" ||
		d["text"] != "It ships today." || d["kind"] != "session" || d["userId"] != user || d["conversationId"] != cid {
		t.Fatalf("page.message.sent = %+v", got.body)
	}
	chatSent := rcv.waitForMatch("svcchat.message.sent", func(d map[string]any) bool {
		m, _ := d["message"].(map[string]any)
		return m["id"] == sent.MessageID
	})
	conv, _ := chatSent.body.Data["conversation"].(map[string]any)
	msg, _ := chatSent.body.Data["message"].(map[string]any)
	if keys(chatSent.body.Data) != "conversation,message,sequence" || keys(conv) != "controlHolder,id,pageId,userId" ||
		keys(msg) != "appId,id,kind,templateName,text" || conv["controlHolder"] != "app:"+app || conv["id"] != cid ||
		msg["appId"] != app || msg["text"] != "It ships today." || msg["kind"] != "session" {
		t.Fatalf("svcchat.message.sent = %+v", chatSent.body)
	}

	// 3. A template, rendered.
	tmpl := wantSent(t, first(w.template(t, "A-1001")), user)
	got = rcv.waitForData("page.message.sent", "messageId", tmpl.MessageID)
	if d := got.body.Data; d["kind"] != "template" || d["templateName"] != "order_update" || d["text"] != "Your order A-1001 is now shipped." {
		t.Fatalf("template page.message.sent = %+v", got.body)
	}

	// 4. The consumer opts out; a repeat changes nothing and emits nothing.
	for range 2 {
		res, body = w.mobile(t, w.consumer, "opt-out", map[string]any{"pageId": page, "userId": user})
		out := decode[struct {
			OptIn struct{ PageID, UserID, Source, Status, UpdatedAt string } `json:"optIn"`
		}](t, body)
		if res.StatusCode != 200 || out.OptIn.Status != "opted_out" || out.OptIn.UserID != user || out.OptIn.PageID != page ||
			out.OptIn.Source != "mobile" || out.OptIn.UpdatedAt == "" {
			t.Fatalf("opt-out: %d %s", res.StatusCode, body)
		}
	}
	got = rcv.waitForData("svcchat.opt_out", "userId", user)
	if d := got.body.Data; d["source"] != "mobile" || fmt.Sprint(d["purposes"]) != "[transactional]" {
		t.Fatalf("svcchat.opt_out = %+v", got.body)
	}
	if n := dbCount(t, w.db, "SELECT count(*) FROM core.outbox WHERE type = 'svcchat.opt_out'"); n != 1 {
		t.Fatalf("%d svcchat.opt_out events, want 1 (a repeated opt-out emits nothing)", n)
	}
	res, body = w.session(t, "Still there?")
	wantGraphError(t, res, body, 400, 551, 1545041)
	res, body = w.template(t, "A-1002")
	wantGraphError(t, res, body, 400, 551, 1545041)

	// 5. Writing again opts the consumer back in: both kinds work.
	w.write(t, "Actually, one more question")
	if n := dbCount(t, w.db, "SELECT count(*) FROM core.outbox WHERE type = 'svcchat.opt_in' AND data->>'source' = 'message'"); n != 2 {
		t.Fatalf("%d opt-ins from messages, want 2", n)
	}
	wantSent(t, first(w.session(t, "Sure, ask away.")), user)
	last := wantSent(t, first(w.template(t, "A-1003")), user)
	rcv.waitForData("page.message.sent", "messageId", last.MessageID)

	// 6. The conversation as the Graph reads it, with its messages edge.
	res, body = w.get(t, w.app, url.Values{"node": {"page/" + page + "/conversations"}})
	list := decode[struct {
		Data []struct {
			ID, PageID, UserID string
			Control            struct{ Holder, AppID string } `json:"control"`
			UpdatedTime        string                         `json:"updated_time"`
			WindowExpiresAt    *string                        `json:"window_expires_at"`
			OptIn              string                         `json:"opt_in"`
		} `json:"data"`
		Paging map[string]any `json:"paging"`
	}](t, body)
	if res.StatusCode != 200 || len(list.Data) != 1 || list.Data[0].ID != cid || list.Data[0].Control.Holder != "app" ||
		list.Data[0].OptIn != "active" || list.Data[0].WindowExpiresAt == nil || list.Data[0].UpdatedTime == "" || list.Paging == nil {
		t.Fatalf("conversations: %d %s", res.StatusCode, body)
	}
	if !strings.Contains(string(body), `"app_id":"`+app+`"`) || !strings.Contains(string(body), `"user_id":"`+user+`"`) {
		t.Fatalf("conversation fields: %s", body)
	}
	res, body = w.get(t, w.app, url.Values{"node": {"page/" + page + "/conversations"}, "fields": {"id,control,messages.limit(1){text}"}})
	if res.StatusCode != 200 || !strings.Contains(string(body), `"text":"Your order A-1003 is now shipped."`) {
		t.Fatalf("the messages edge of each listed conversation: %d %s", res.StatusCode, body)
	}
	res, body = w.get(t, w.app, url.Values{"node": {"page/" + page + "/conversations/" + cid}, "fields": {"id,opt_in,messages.limit(3){text,direction}"}})
	one := decode[struct {
		ID       string `json:"id"`
		OptIn    string `json:"opt_in"`
		Messages struct {
			Data []map[string]any `json:"data"`
		} `json:"messages"`
	}](t, body)
	if res.StatusCode != 200 || one.ID != cid || len(one.Messages.Data) != 3 ||
		one.Messages.Data[0]["text"] != "Your order A-1003 is now shipped." || one.Messages.Data[2]["direction"] != "inbound" ||
		keys(one.Messages.Data[0]) != "direction,id,text" {
		t.Fatalf("conversation with messages: %d %s", res.StatusCode, body)
	}
}

// first adapts a call answering (response, body) for wantSent.
func first(res *http.Response, body []byte) sendResult { return sendResult{res, body} }

type sendResult struct {
	res  *http.Response
	body []byte
}

// waitForMatch returns the first delivery of an eventType event whose data
// matches.
func (r *hookReceiver) waitForMatch(eventType string, match func(data map[string]any) bool) hookDelivery {
	r.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		for _, d := range r.all(eventType) {
			if match(d.body.Data) {
				return d
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no matching %s event delivered", eventType)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// all returns every delivery of an event type so far.
func (r *hookReceiver) all(eventType string) []hookDelivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []hookDelivery
	for _, d := range r.got {
		if d.body.Type == eventType {
			out = append(out, d)
		}
	}
	return out
}

func TestPageMessageRefusalsFollowTheContract(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t)
	page, user := w.c.Page.ID, w.consumerID
	node := w.messagesNode()
	messages := func() int { return dbCount(t, w.db, "SELECT count(*) FROM svcchat.messages") }

	// Before the consumer ever wrote.
	t.Run("session message to a user who never wrote is refused with 2018278", func(t *testing.T) {
		res, body := w.session(t, "hello?")
		wantGraphError(t, res, body, 400, 10, 2018278)
	})
	t.Run("template message without an opt-in is refused with 2018301", func(t *testing.T) {
		res, body := w.template(t, "X")
		wantGraphError(t, res, body, 400, 10, 2018301)
	})
	w.write(t, "hello")
	before := messages()

	cases := []struct {
		name                  string
		body                  map[string]any
		status, code, subcode int
		field                 string
	}{
		{"an unknown field is refused naming it", map[string]any{"recipient_user_id": user, "text": "x", "colour": "red"}, 400, 100, 0, "colour"},
		{"text of the wrong type is refused naming it", map[string]any{"recipient_user_id": user, "text": 5}, 400, 100, 0, "text"},
		{"text over 2,000 code points is refused", map[string]any{"recipient_user_id": user, "text": strings.Repeat("é", 2001)}, 400, 100, 0, "text"},
		{"empty text is refused", map[string]any{"recipient_user_id": user, "text": ""}, 400, 100, 0, "text"},
		{"a session message without text is refused naming text", map[string]any{"recipient_user_id": user}, 400, 100, 0, "text"},
		{"a session message with to is refused naming to", map[string]any{"to": user, "text": "x"}, 400, 100, 0, "to"},
		{"a template message with text is refused naming text", map[string]any{"to": user, "type": "template", "templateName": "hello_world", "text": "x"}, 400, 100, 0, "text"},
		{"a template message without to is refused naming to", map[string]any{"type": "template", "templateName": "hello_world"}, 400, 100, 0, "to"},
		{"a type other than template is refused naming type", map[string]any{"recipient_user_id": user, "text": "x", "type": "text"}, 400, 100, 0, "type"},
		{"templateParams without type is refused naming it", map[string]any{"recipient_user_id": user, "text": "x", "templateParams": map[string]string{}}, 400, 100, 0, "templateParams"},
		{"an unknown template is refused with 132001", map[string]any{"to": user, "type": "template", "templateName": "no_such"}, 404, 132001, 0, ""},
		{"a missing template parameter is refused with 132000", map[string]any{"to": user, "type": "template", "templateName": "order_update", "templateParams": map[string]string{"order_id": "1"}}, 400, 132000, 0, ""},
		{"an extra template parameter is refused with 132000", map[string]any{"to": user, "type": "template", "templateName": "hello_world", "templateParams": map[string]string{"x": "1"}}, 400, 132000, 0, ""},
		{"a template parameter that is not a string is refused with 132000", map[string]any{"to": user, "type": "template", "templateName": "order_update", "templateParams": map[string]any{"order_id": 1, "status": "x"}}, 400, 132000, 0, ""},
		{"another user who never wrote gets no session message (2018278)", map[string]any{"recipient_user_id": w.c.Users["staff"].ID, "text": "x"}, 400, 10, 2018278, ""},
		{"a recipient id that names nobody gets no template (2018301)", map[string]any{"to": "no-such-user", "type": "template", "templateName": "hello_world"}, 400, 10, 2018301, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.body["node"] = node
			res, body := w.post(t, w.app, c.body, nil)
			e := wantGraphError(t, res, body, c.status, c.code, c.subcode)
			if c.field != "" && !strings.Contains(e.Error.Message, c.field) {
				t.Fatalf("the message does not name %s: %s", c.field, body)
			}
		})
	}
	t.Run("a token without svcchat:send is refused with 2069002", func(t *testing.T) {
		res, body := w.post(t, appToken(t, w.graphWorld, "svcchat:read"), map[string]any{"node": node, "recipient_user_id": user, "text": "x"}, nil)
		wantGraphError(t, res, body, 403, 10, 2069002)
	})
	t.Run("reads need svcchat:read", func(t *testing.T) {
		res, body := w.get(t, appToken(t, w.graphWorld, "svcchat:send"), url.Values{"node": {"page/" + page + "/conversations"}})
		wantGraphError(t, res, body, 403, 10, 2069002)
	})
	t.Run("limit over 100 is refused", func(t *testing.T) {
		res, body := w.get(t, w.app, url.Values{"node": {"page/" + page + "/conversations"}, "limit": {"101"}})
		wantGraphError(t, res, body, 400, 100, 0)
	})
	t.Run("a conversation id that names nothing is not found", func(t *testing.T) {
		for _, id := range []string{"1", "abc", "99999999999999999999999"} {
			res, body := w.get(t, w.app, url.Values{"node": {"page/" + page + "/conversations/" + id}})
			wantGraphError(t, res, body, 404, 100, 33)
		}
	})
	t.Run("opting out another user is refused", func(t *testing.T) {
		res, body := w.mobile(t, w.consumer, "opt-out", map[string]any{"pageId": page, "userId": w.c.Users["owner"].ID})
		wantGraphError(t, res, body, 400, 100, 0)
	})
	t.Run("mobile endpoints need a session", func(t *testing.T) {
		res, body := w.mobile(t, w.app, "messages", map[string]any{"pageId": page, "text": "x"})
		if res.StatusCode != 403 {
			t.Fatalf("an app token wrote as a user: %d %s", res.StatusCode, body)
		}
	})
	t.Run("a mobile body with an unknown field is refused", func(t *testing.T) {
		res, body := w.mobile(t, w.consumer, "messages", map[string]any{"pageId": page, "text": "x", "extra": 1})
		wantGraphError(t, res, body, 400, 100, 0)
	})
	t.Run("writing to a Page that does not exist is not found", func(t *testing.T) {
		res, body := w.mobile(t, w.consumer, "messages", map[string]any{"pageId": "123", "text": "x"})
		wantGraphError(t, res, body, 404, 100, 33)
	})
	if after := messages(); after != before {
		t.Fatalf("refused requests wrote %d messages", after-before)
	}

	t.Run("a Page with chat surfacing off refuses sends with 2018304", func(t *testing.T) {
		res, body := w.post(t, w.owner, map[string]any{"node": "page/" + page, "chat_surfacing": false}, nil)
		if res.StatusCode != 200 {
			t.Fatalf("turn chat surfacing off: %d %s", res.StatusCode, body)
		}
		res, body = w.session(t, "x")
		wantGraphError(t, res, body, 403, 10, 2018304)
		res, body = w.mobile(t, w.consumer, "messages", map[string]any{"pageId": page, "text": "x"})
		wantGraphError(t, res, body, 403, 10, 2018304)
		res, body = w.post(t, w.owner, map[string]any{"node": "page/" + page, "chat_surfacing": true}, nil)
		if res.StatusCode != 200 {
			t.Fatalf("turn chat surfacing on: %d %s", res.StatusCode, body)
		}
	})
	t.Run("an app not linked to the Page is refused with 2018303", func(t *testing.T) {
		res, body := w.post(t, w.owner, map[string]any{"node": "me/apps", "name": "Unlinked bot",
			"redirect_uris": []string{"http://127.0.0.1:9/cb"}, "products": []string{"svcchat"}}, nil)
		other := decode[struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}](t, body)
		if res.StatusCode != 200 {
			t.Fatalf("register app: %d %s", res.StatusCode, body)
		}
		ow := *w.graphWorld
		ow.c.App.ClientID, ow.c.App.ClientSecret = other.ClientID, other.ClientSecret
		token := appToken(t, &ow, "svcchat:send")
		res, body = w.post(t, token, map[string]any{"node": node, "recipient_user_id": user, "text": "x"}, nil)
		wantGraphError(t, res, body, 403, 10, 2018303)
	})
	if after := messages(); after != before {
		t.Fatalf("refused requests wrote %d messages", after-before)
	}
}

func TestConcurrentSendsToOneConversationAllLandInOrder(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t)
	cid, _ := w.write(t, "go")
	const n = 8
	var wg sync.WaitGroup
	ids := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, body := w.session(t, fmt.Sprintf("part %d", i))
			ids[i] = wantSent(t, first(res, body), w.consumerID).MessageID
		}()
	}
	wg.Wait()
	res, body := w.get(t, w.app, url.Values{"node": {"page/" + w.c.Page.ID + "/conversations/" + cid + "/messages"}, "limit": {"100"}})
	list := decode[struct {
		Data []struct{ ID, Text string } `json:"data"`
	}](t, body)
	if res.StatusCode != 200 || len(list.Data) != n+1 {
		t.Fatalf("messages: %d %s", res.StatusCode, body)
	}
	for _, id := range ids {
		if !slices.ContainsFunc(list.Data, func(m struct{ ID, Text string }) bool { return m.ID == id }) {
			t.Fatalf("message %s is missing: %s", id, body)
		}
	}
	seqs := dbCount(t, w.db, "SELECT count(DISTINCT seq) FROM svcchat.messages WHERE conversation_id = $1 AND seq BETWEEN 1 AND $2", cid, n+1)
	if seqs != n+1 {
		t.Fatalf("%d distinct sequence numbers 1..%d, want %d", seqs, n+1, n+1)
	}
	if c := dbCount(t, w.db, "SELECT count(*) FROM core.outbox WHERE type = 'svcchat.message.sent'"); c != n {
		t.Fatalf("%d svcchat.message.sent events, want %d", c, n)
	}
}

func TestARetriedSendWithTheSameIdempotencyKeySendsOnce(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t)
	w.write(t, "hi")
	body := map[string]any{"node": w.messagesNode(), "recipient_user_id": w.consumerID, "text": "only once"}
	key := map[string]string{"Idempotency-Key": "send-1"}
	res1, b1 := w.post(t, w.app, body, key)
	res2, b2 := w.post(t, w.app, body, key)
	if res1.StatusCode != 200 || res2.StatusCode != 200 || string(b1) != string(b2) {
		t.Fatalf("retry answered %d %s then %d %s", res1.StatusCode, b1, res2.StatusCode, b2)
	}
	if n := dbCount(t, w.db, "SELECT count(*) FROM svcchat.messages WHERE text = 'only once'"); n != 1 {
		t.Fatalf("%d messages sent, want 1", n)
	}
}

func TestTemplatesFollowTheirLifecycleThroughTheGraph(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t)
	app := w.c.App.ID
	node := "app/" + app + "/svcchat_templates"
	type templateList struct {
		Data []struct {
			Name, Body, Status string
			Params             []string
			RejectionReason    *string `json:"rejection_reason"`
		} `json:"data"`
	}
	res, body := w.get(t, w.c.App.APIKey, url.Values{"node": {node}})
	list := decode[templateList](t, body)
	if res.StatusCode != 200 || len(list.Data) != 2 || list.Data[0].Name != "hello_world" || list.Data[1].Name != "order_update" ||
		strings.Join(list.Data[1].Params, ",") != "order_id,status" || list.Data[1].Status != "approved" || list.Data[0].RejectionReason == nil {
		t.Fatalf("default templates: %d %s", res.StatusCode, body)
	}

	res, body = w.post(t, w.c.App.APIKey, map[string]any{"node": node, "name": "pickup_ready", "body": "Hi {{name}}, your order is ready.", "params": []string{"name"}}, nil)
	if created := decode[struct{ Status string }](t, body); res.StatusCode != 200 || created.Status != "draft" {
		t.Fatalf("create: %d %s", res.StatusCode, body)
	}
	t.Run("a placeholder that params does not list is refused naming params", func(t *testing.T) {
		res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": node, "name": "bad", "body": "Hi {{who}}", "params": []string{}}, nil)
		e := wantGraphError(t, res, body, 400, 100, 0)
		if !strings.Contains(e.Error.Message, "params") {
			t.Fatalf("%s", body)
		}
	})
	t.Run("a development-mode app cannot submit (2018305)", func(t *testing.T) {
		res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": node + "/pickup_ready/submit"}, nil)
		wantGraphError(t, res, body, 409, 10, 2018305)
	})
	t.Run("approving an unknown template is 132001", func(t *testing.T) {
		res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": node + "/nope/approve"}, nil)
		wantGraphError(t, res, body, 404, 132001, 0)
	})

	// A development-mode app may send its draft, and approves it itself.
	w.write(t, "hi")
	res, body = w.post(t, w.app, map[string]any{"node": w.messagesNode(), "to": w.consumerID, "type": "template",
		"templateName": "pickup_ready", "templateParams": map[string]string{"name": "Casey"}}, nil)
	wantSent(t, first(res, body), w.consumerID)
	res, body = w.post(t, w.c.App.APIKey, map[string]any{"node": node + "/pickup_ready/approve"}, nil)
	if approved := decode[struct{ Status string }](t, body); res.StatusCode != 200 || approved.Status != "approved" {
		t.Fatalf("approve: %d %s", res.StatusCode, body)
	}
	res, body = w.post(t, w.c.App.APIKey, map[string]any{"node": node + "/pickup_ready/approve"}, nil)
	wantGraphError(t, res, body, 409, 10, 2018305)

	// platformConfig.svcchat.templates overrides a default for this app.
	res, body = w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + app + "/config", "platformConfig": map[string]any{
		"svcchat": map[string]any{"templates": map[string]any{"hello_world": map[string]any{"body": "Welcome to {{shop}}!", "params": []string{"shop"}}}}}}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("config: %d %s", res.StatusCode, body)
	}
	res, body = w.post(t, w.app, map[string]any{"node": w.messagesNode(), "to": w.consumerID, "type": "template",
		"templateName": "hello_world", "templateParams": map[string]string{"shop": "Demo Coffee"}}, nil)
	sent := wantSent(t, first(res, body), w.consumerID)
	if n := dbCount(t, w.db, "SELECT count(*) FROM svcchat.messages WHERE id = $1 AND text = 'Welcome to Demo Coffee!'", sent.MessageID); n != 1 {
		t.Fatalf("the override was not rendered")
	}
	// The defaults first, then the app's templates as created: the
	// override is the app's newest.
	res, body = w.get(t, w.c.App.APIKey, url.Values{"node": {node}})
	list = decode[templateList](t, body)
	if res.StatusCode != 200 || len(list.Data) != 3 || list.Data[2].Name != "hello_world" || list.Data[2].Body != "Welcome to {{shop}}!" ||
		list.Data[2].Status != "draft" || list.Data[0].Name != "order_update" || list.Data[1].Name != "pickup_ready" || list.Data[1].Status != "approved" {
		t.Fatalf("templates after config: %s", body)
	}

	t.Run("only the app's team and the app itself manage its templates", func(t *testing.T) {
		res, body := w.get(t, w.consumer, url.Values{"node": {node}})
		wantGraphError(t, res, body, 403, 200, 2069004)
		if res, body := w.get(t, w.owner, url.Values{"node": {node}}); res.StatusCode != 200 {
			t.Fatalf("the team Admin's session: %d %s", res.StatusCode, body)
		}
	})
	t.Run("the staff queue is for staff only", func(t *testing.T) {
		res, body := do(t, "GET", w.g.URL+"/api/developers/admin/svcchat/template-queue", nil, map[string]string{"Authorization": "Bearer " + w.consumer})
		if e := decode[graphError](t, body); res.StatusCode != 403 || e.Error.Code != 200 {
			t.Fatalf("a consumer read the staff queue: %d %s", res.StatusCode, body)
		}
		res, body = do(t, "GET", w.g.URL+"/api/developers/admin/svcchat/template-queue", nil, map[string]string{"Authorization": "Bearer " + w.staff})
		if q := decode[struct{ Data []any }](t, body); res.StatusCode != 200 || q.Data == nil || len(q.Data) != 0 {
			t.Fatalf("queue: %d %s", res.StatusCode, body)
		}
		res, body = do(t, "POST", w.g.URL+"/api/developers/admin/svcchat/template-queue", strings.NewReader(`{"id":"1","decision":"approve"}`),
			map[string]string{"Authorization": "Bearer " + w.staff, "Content-Type": "application/json"})
		wantGraphError(t, res, body, 404, 100, 33)
	})
}
