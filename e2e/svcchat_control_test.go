package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/openaitest"
	"github.com/svcplatform/svc/internal/pgtest"
)

// thread is GET …/threads/<conversationId>.
type thread struct {
	ConversationID string `json:"conversationId"`
	PageID         string `json:"pageId"`
	PageName       string `json:"pageName"`
	ControlHolder  string `json:"controlHolder"`
	Messages       []struct {
		ID, Direction, Text string
		SenderLabel         string `json:"senderLabel"`
		CreatedAt           string `json:"createdAt"`
	} `json:"messages"`
}

func (w *chatWorld) mobileGet(t *testing.T, session, path string) (*http.Response, []byte) {
	t.Helper()
	return do(t, "GET", w.g.URL+"/api/mobile/svcchat/page-messaging/"+path, nil, map[string]string{"Authorization": "Bearer " + session})
}

func (w *chatWorld) handover(t *testing.T, cid string, body map[string]any) (*http.Response, []byte) {
	t.Helper()
	body["node"] = "page/" + w.c.Page.ID + "/conversations/" + cid + "/handover"
	return w.post(t, w.app, body, nil)
}

// setPage changes the seeded Page's settings as its owner.
func (w *chatWorld) setPage(t *testing.T, settings map[string]any) {
	t.Helper()
	settings["node"] = "page/" + w.c.Page.ID
	if res, body := w.post(t, w.owner, settings, nil); res.StatusCode != 200 {
		t.Fatalf("page settings: %d %s", res.StatusCode, body)
	}
}

// The "Done when", through the public HTTP API: the assistant's
// one attributed reply, the app taking control by sending (the assistant
// silent), the app returning control to page_human, the owner replying
// from the mobile endpoint, the consumer's inbox and thread, and every
// step's event at the app's webhook; the chats list beside a direct
// message from another user.
func TestTheAssistantTheAppAndThePageOwnerTakeTurnsOnAThread(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t)
	page, app, user := w.c.Page.ID, w.c.App.ID, w.consumerID
	rcv := newHookReceiver(t, w.c.App.ClientSecret)
	res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + app + "/subscriptions",
		"callback_url": rcv.srv.URL + "/hook", "verify_token": hookVerifyToken,
		"events": []string{"page.message.received", "page.message.sent", "svcchat.message.sent", "svcchat.handover"}}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}
	w.setPage(t, map[string]any{"inbox_automation": true})

	// 1. The consumer writes; the assistant answers once, as the Page.
	cid, inbound := w.write(t, "Hi! Are you open on Sunday?")
	rcv.waitForData("page.message.received", "messageId", inbound)
	reply := rcv.waitForMatch("svcchat.message.sent", func(d map[string]any) bool {
		c, _ := d["conversation"].(map[string]any)
		return c["id"] == cid && c["controlHolder"] == "svc_ai"
	})
	m, _ := reply.body.Data["message"].(map[string]any)
	if m["text"] == "" || m["appId"] != "" {
		t.Fatalf("assistant's svcchat.message.sent = %+v", reply.body)
	}
	res, body = w.mobileGet(t, w.consumer, "threads/"+cid)
	th := decode[thread](t, body)
	if res.StatusCode != 200 || len(th.Messages) != 2 || th.Messages[1].Direction != "outbound" || th.Messages[1].SenderLabel != w.c.Page.Name+" · Assistant" ||
		th.Messages[0].SenderLabel != "You" || th.ControlHolder != "svc_ai" || th.PageName != w.c.Page.Name {
		t.Fatalf("thread after the assistant: %d %s", res.StatusCode, body)
	}

	// 2. The app takes control by sending; the assistant stays silent.
	sent := wantSent(t, first(w.session(t, "Yes, 9 to 5. Anything else?")), user)
	took := rcv.waitForData("svcchat.handover", "action", "app_message")
	if d := took.body.Data; keys(d) != "action,appId,conversationId,newHolder,pageId,previousHolder,sequence" || d["previousHolder"] != "svc_ai" ||
		d["newHolder"] != "app:"+app || d["appId"] != app || d["conversationId"] != cid || d["pageId"] != page {
		t.Fatalf("svcchat.handover on the app's send = %+v", took.body)
	}
	rcv.waitForData("page.message.sent", "messageId", sent.MessageID)
	_, again := w.write(t, "Can I bring my dog?")
	rcv.waitForData("page.message.received", "messageId", again)

	// 3. The app returns control to page_human.
	res, body = w.handover(t, cid, map[string]any{"action": "return_thread_control", "returnTo": "page_human"})
	ho := decode[struct {
		Success bool
		Control struct {
			Holder string
			AppID  *string `json:"app_id"`
		}
	}](t, body)
	if res.StatusCode != 200 || !ho.Success || ho.Control.Holder != "page_human" || ho.Control.AppID == nil {
		t.Fatalf("return_thread_control: %d %s", res.StatusCode, body)
	}
	ret := rcv.waitForData("svcchat.handover", "action", "return_thread_control")
	if d := ret.body.Data; d["previousHolder"] != "app:"+app || d["newHolder"] != "page_human" {
		t.Fatalf("svcchat.handover on return = %+v", ret.body)
	}

	// 4. The Page owner replies from the mobile endpoint.
	res, body = w.mobile(t, w.owner, "reply", map[string]any{"conversationId": cid, "text": "Dogs are welcome!"})
	out := decode[struct{ ConversationID, MessageID string }](t, body)
	if res.StatusCode != 200 || out.ConversationID != cid || !strings.HasPrefix(out.MessageID, "m_") {
		t.Fatalf("owner's reply: %d %s", res.StatusCode, body)
	}
	human := rcv.waitForData("page.message.sent", "messageId", out.MessageID)
	if human.body.Data["text"] != "Dogs are welcome!" {
		t.Fatalf("page.message.sent of the owner's reply = %+v", human.body)
	}

	// 5. The consumer's inbox shows the thread.
	res, body = w.mobileGet(t, w.consumer, "inbox?userId="+user)
	inbox := decode[struct {
		Threads []struct {
			ConversationID, PageID, PageName, ControlHolder, UpdatedAt, DeepLink string
			LastMessage                                                          struct{ Text, SenderLabel, CreatedAt string } `json:"lastMessage"`
		} `json:"threads"`
	}](t, body)
	if res.StatusCode != 200 || len(inbox.Threads) != 1 {
		t.Fatalf("inbox: %d %s", res.StatusCode, body)
	}
	if it := inbox.Threads[0]; it.ConversationID != cid || it.PageID != page || it.PageName != w.c.Page.Name || it.ControlHolder != "page_human" ||
		it.DeepLink != "svcchat://page-inbox/"+page+"/"+cid || it.LastMessage.Text != "Dogs are welcome!" || it.LastMessage.SenderLabel != w.c.Page.Name ||
		it.LastMessage.CreatedAt == "" || it.UpdatedAt == "" {
		t.Fatalf("inbox thread: %s", body)
	}
	var raw map[string]any
	_ = json.Unmarshal(body, &raw)
	if first := raw["threads"].([]any)[0].(map[string]any); keys(first) != "controlHolder,conversationId,deepLink,lastMessage,pageId,pageName,updatedAt" {
		t.Fatalf("inbox thread fields: %s", body)
	}
	res, body = w.mobileGet(t, w.consumer, "threads/"+cid)
	th = decode[thread](t, body)
	if res.StatusCode != 200 || len(th.Messages) != 5 || th.Messages[4].Text != "Dogs are welcome!" || th.Messages[2].SenderLabel != w.c.Page.Name {
		t.Fatalf("thread: %d %s", res.StatusCode, body)
	}
	// 6. Another user writes to the consumer directly; the chats list shows
	// the direct thread beside the Page thread, newest first, and the
	// sponsored item. The direct message reaches no app.
	res, body = do(t, "POST", w.g.URL+"/api/mobile/chat/messages", strings.NewReader(`{"toUserId":"`+user+`","text":"Lunch?"}`),
		map[string]string{"Authorization": "Bearer " + w.staff, "Content-Type": "application/json"})
	dm := decode[struct{ ThreadID, MessageID string }](t, body)
	if res.StatusCode != 200 || dm.ThreadID == "" || dm.MessageID == "" {
		t.Fatalf("direct message: %d %s", res.StatusCode, body)
	}
	res, body = do(t, "GET", w.g.URL+"/api/mobile/chat?view=list", nil, map[string]string{"Authorization": "Bearer " + w.consumer})
	chats := decode[struct {
		Threads []struct {
			Kind, ConversationID, ThreadID, DeepLink string
			WithUserName                             string `json:"withUserName"`
		} `json:"threads"`
		SponsoredAd *struct{ Title string } `json:"sponsoredAd"`
	}](t, body)
	if res.StatusCode != 200 || len(chats.Threads) != 2 || chats.Threads[0].Kind != "direct" || chats.Threads[0].ThreadID != dm.ThreadID || chats.Threads[0].WithUserName == "" ||
		chats.Threads[1].Kind != "page" || chats.Threads[1].ConversationID != cid || chats.Threads[1].DeepLink != "svcchat://page-inbox/"+page+"/"+cid ||
		chats.SponsoredAd == nil || chats.SponsoredAd.Title == "" {
		t.Fatalf("chats list: %d %s", res.StatusCode, body)
	}
	res, body = do(t, "GET", w.g.URL+"/api/mobile/chat?view=folders", nil, map[string]string{"Authorization": "Bearer " + w.consumer})
	if folders := decode[struct {
		Folders []struct {
			Name    string
			Threads []map[string]any
		} `json:"folders"`
	}](t, body); res.StatusCode != 200 || len(folders.Folders) != 2 || len(folders.Folders[0].Threads)+len(folders.Folders[1].Threads) != 2 {
		t.Fatalf("chats folders: %d %s", res.StatusCode, body)
	}
	if n := dbCount(t, w.db, "SELECT count(*) FROM core.outbox WHERE data::text LIKE '%Lunch?%'"); n != 0 {
		t.Fatalf("the direct message left %d events", n)
	}

	// The assistant answered once; its job is done, so the second message
	// got no reply.
	if n := dbCount(t, w.db, "SELECT count(*) FROM svcchat.messages WHERE sender = 'svc_ai'"); n != 1 {
		t.Fatalf("%d assistant messages, want 1", n)
	}
}

func TestHandoverAndInboxRefusalsFollowTheContract(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t)
	cid, _ := w.write(t, "hello")
	handovers := func() int {
		return dbCount(t, w.db, "SELECT count(*) FROM core.outbox WHERE type = 'svcchat.handover'")
	}
	before := handovers()
	for _, c := range []struct {
		rule                  string
		body                  map[string]any
		status, code, subcode int
	}{
		{"pass by an app that does not hold control is refused with 2018300", map[string]any{"action": "pass_thread_control"}, 409, 10, 2018300},
		{"return by an app that does not hold control is refused with 2018300", map[string]any{"action": "return_thread_control", "returnTo": "svc_ai"}, 409, 10, 2018300},
		{"returnTo with another action is refused with 100", map[string]any{"action": "take_thread_control", "returnTo": "svc_ai"}, 400, 100, 0},
		{"an unknown returnTo is refused with 100", map[string]any{"action": "return_thread_control", "returnTo": "robot"}, 400, 100, 0},
		{"an unknown action is refused with 100", map[string]any{"action": "grab_thread_control"}, 400, 100, 0},
		{"an unknown field is refused with 100", map[string]any{"action": "take_thread_control", "force": true}, 400, 100, 0},
	} {
		t.Run(c.rule, func(t *testing.T) {
			res, body := w.handover(t, cid, c.body)
			wantGraphError(t, res, body, c.status, c.code, c.subcode)
		})
	}
	t.Run("a conversation that does not exist is not found", func(t *testing.T) {
		res, body := w.handover(t, "123", map[string]any{"action": "take_thread_control"})
		wantGraphError(t, res, body, 404, 100, 33)
	})
	if n := handovers(); n != before {
		t.Fatalf("refused handovers emitted %d events", n-before)
	}
	t.Run("the mobile handover by anyone but the Page owner is refused with 2069003", func(t *testing.T) {
		res, body := w.mobile(t, w.consumer, "handover", map[string]any{"conversationId": cid, "mode": "svc_ai"})
		wantGraphError(t, res, body, 403, 200, 2069003)
	})
	t.Run("the mobile handover with an app's token is refused with 2069001", func(t *testing.T) {
		res, body := w.mobile(t, w.app, "handover", map[string]any{"conversationId": cid, "mode": "svc_ai"})
		wantGraphError(t, res, body, 403, 200, 2069001)
	})
	t.Run("an unknown mode is refused naming it", func(t *testing.T) {
		res, body := w.mobile(t, w.owner, "handover", map[string]any{"conversationId": cid, "mode": "app"})
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "mode") {
			t.Fatalf("%s", body)
		}
	})
	res, body := w.mobile(t, w.owner, "handover", map[string]any{"conversationId": cid, "mode": "svc_ai"})
	if out := decode[struct{ ConversationID, ControlHolder string }](t, body); res.StatusCode != 200 || out.ConversationID != cid || out.ControlHolder != "svc_ai" {
		t.Fatalf("mobile handover: %d %s", res.StatusCode, body)
	}
	t.Run("a reply by a user who does not manage the Page is refused with 2069003", func(t *testing.T) {
		res, body := w.mobile(t, w.consumer, "reply", map[string]any{"conversationId": cid, "text": "x"})
		wantGraphError(t, res, body, 403, 200, 2069003)
	})
	t.Run("the inbox is the signed-in user's only", func(t *testing.T) {
		res, body := w.mobileGet(t, w.consumer, "inbox?userId="+w.c.Users["owner"].ID)
		wantGraphError(t, res, body, 400, 100, 0)
	})
	t.Run("a direct message to a user id that names nobody is refused with 2018309, as to one who blocked the sender", func(t *testing.T) {
		res, body := do(t, "POST", w.g.URL+"/api/mobile/chat/messages", strings.NewReader(`{"toUserId":"123","text":"hi"}`),
			map[string]string{"Authorization": "Bearer " + w.consumer, "Content-Type": "application/json"})
		wantGraphError(t, res, body, 403, 10, 2018309)
	})
	t.Run("direct messages need a session", func(t *testing.T) {
		res, body := do(t, "POST", w.g.URL+"/api/mobile/chat/messages", strings.NewReader(`{"toUserId":"`+w.c.Users["owner"].ID+`","text":"hi"}`),
			map[string]string{"Authorization": "Bearer " + w.app, "Content-Type": "application/json"})
		wantGraphError(t, res, body, 403, 200, 2069001)
	})
	t.Run("another user's thread is not found", func(t *testing.T) {
		res, body := w.mobileGet(t, w.owner, "threads/"+cid)
		wantGraphError(t, res, body, 404, 100, 33)
	})
	t.Run("chat surfacing off hides the thread and refuses sends with 2018304", func(t *testing.T) {
		w.setPage(t, map[string]any{"chat_surfacing": false})
		defer w.setPage(t, map[string]any{"chat_surfacing": true})
		res, body := w.mobileGet(t, w.consumer, "inbox?userId="+w.consumerID)
		if res.StatusCode != 200 || string(body) != `{"threads":[]}` {
			t.Fatalf("inbox with chat surfacing off: %d %s", res.StatusCode, body)
		}
		res, body = w.mobileGet(t, w.consumer, "threads/"+cid)
		wantGraphError(t, res, body, 403, 10, 2018304)
		res, body = w.mobile(t, w.owner, "reply", map[string]any{"conversationId": cid, "text": "x"})
		wantGraphError(t, res, body, 403, 10, 2018304)
	})
}

func TestConcurrentGraphHandoversSerialize(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t)
	cid, _ := w.write(t, "hello")
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			action := map[bool]string{true: "take_thread_control", false: "request_thread_control"}[i%2 == 0]
			if res, body := w.handover(t, cid, map[string]any{"action": action}); res.StatusCode != 200 {
				t.Errorf("%s: %d %s", action, res.StatusCode, body)
			}
		}()
	}
	wg.Wait()
	// Every event starts from the holder the one before it left.
	if broken := dbCount(t, w.db, `SELECT count(*) FROM (
		SELECT data->>'previousHolder' AS prev, lag(data->>'newHolder') OVER (ORDER BY seq) AS before
		FROM core.outbox WHERE type = 'svcchat.handover') e WHERE before IS NOT NULL AND prev <> before`); broken != 0 {
		t.Fatalf("%d handover events do not follow the one before", broken)
	}
	if c := dbCount(t, w.db, "SELECT count(*) FROM core.outbox WHERE type = 'svcchat.handover'"); c != n {
		t.Fatalf("%d handover events, want %d", c, n)
	}
}

// The assistant's job survives a kill -9 of the gateway while the model is
// answering: another gateway on the same database sends the reply, once.
func TestTheAssistantsReplySurvivesAGatewayKilledMidReply(t *testing.T) {
	t.Parallel()
	hang := openaitest.New(t, "never delivered")
	hang.Always(openaitest.Hang)
	cfg, _ := json.Marshal(map[string]any{"completions": map[string]any{"upstreams": []any{
		map[string]any{"name": "slow", "base_url": hang.BaseURL, "models": []string{"slow"}, "timeout": "10m"},
	}}})
	path := filepath.Join(t.TempDir(), "gateway.json")
	if err := os.WriteFile(path, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	db := pgtest.NewDatabase(t)
	dataDir := t.TempDir()
	a := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: db, DataDir: dataDir, Args: []string{"--config", path}})
	w := &chatWorld{graphWorld: &graphWorld{g: a, db: db, c: a.Credentials(t)}}
	w.consumerID = w.c.Users["consumer"].ID
	w.consumer = signIn(t, w.graphWorld, "consumer")
	w.owner = signIn(t, w.graphWorld, "owner")
	w.setPage(t, map[string]any{"inbox_automation": true})
	cid, _ := w.write(t, "Hello?")

	// The model has the question: the job is in flight. Kill the gateway.
	deadline := time.Now().Add(30 * time.Second)
	for len(hang.Requests()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the assistant never asked the model:\n%s", a.Logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := a.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.Done()
	if n := dbCount(t, db, "SELECT count(*) FROM svcchat.messages WHERE sender = 'svc_ai'"); n != 0 {
		t.Fatalf("%d assistant messages before the reply", n)
	}

	// A second gateway without a model sends the built-in reply, once.
	// The same data folder: the gateways of one installation share its master key.
	b := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: db, DataDir: dataDir})
	deadline = time.Now().Add(60 * time.Second)
	for dbCount(t, db, "SELECT count(*) FROM svcchat.assistant_jobs WHERE status = 'done'") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the second gateway never sent the reply:\n%s", b.Logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := dbCount(t, db, "SELECT count(*) FROM svcchat.messages WHERE sender = 'svc_ai' AND conversation_id = $1", cid); n != 1 {
		t.Fatalf("%d assistant messages, want exactly 1", n)
	}
	w.g = b
	res, body := w.mobileGet(t, w.consumer, "threads/"+cid)
	if th := decode[thread](t, body); res.StatusCode != 200 || len(th.Messages) != 2 || th.Messages[1].SenderLabel != w.c.Page.Name+" · Assistant" {
		t.Fatalf("thread on the second gateway: %d %s", res.StatusCode, body)
	}
}
