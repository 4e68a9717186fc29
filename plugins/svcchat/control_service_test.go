package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	completionsv1 "github.com/svcplatform/svc/gen/svc/completions/v1"
	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

var (
	owner  = sdk.Principal{Kind: sdk.TokenKindSession, UserID: pageOwner}
	admin  = sdk.Principal{Kind: sdk.TokenKindSession, UserID: pageAdmin}
	editor = sdk.Principal{Kind: sdk.TokenKindSession, UserID: pageEditor}
)

func (b *bundle) handover(t *testing.T, app sdk.Principal, cid, action string, returnTo, target *string) (*svcchatv1.HandoverResponse, error) {
	t.Helper()
	return call[*svcchatv1.HandoverResponse](t, b, "Handover", app, &svcchatv1.HandoverRequest{PageId: testPage, ConversationId: cid,
		Action: action, ReturnTo: returnTo, TargetAppId: target})
}

// handoverEvents reads the svcchat.handover events in order.
func (b *bundle) handoverEvents(t *testing.T) []handoverData {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), "SELECT data FROM core.outbox WHERE type = 'svcchat.handover' ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []handoverData
	for rows.Next() {
		var raw []byte
		var d handoverData
		if err := rows.Scan(&raw); err != nil || json.Unmarshal(raw, &d) != nil {
			t.Fatalf("read event: %v", err)
		}
		out = append(out, d)
	}
	return out
}

func TestGraphHandoverActionsFollowTheTableAndEmitEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.facts.mu.Lock()
	b.facts.page.InboxAutomation = true
	b.facts.mu.Unlock()
	cid := b.userWrites(t, "hi").GetConversationId()

	res, err := b.handover(t, devSend, cid, "take_thread_control", nil, nil)
	if err != nil || !res.GetSuccess() || res.GetControl().GetHolder() != "app" || res.GetControl().GetAppId() != devApp {
		t.Fatalf("take = %v, %v", res, err)
	}
	t.Run("another app's pass is refused with 2018300 and changes nothing", func(t *testing.T) {
		_, err := b.handover(t, liveSend, cid, "pass_thread_control", nil, nil)
		plugintest.WantRefusal(t, err, 409, 10, 2018300)
	})
	t.Run("another app's return is refused with 2018300", func(t *testing.T) {
		_, err := b.handover(t, liveSend, cid, "return_thread_control", strp("svc_ai"), nil)
		plugintest.WantRefusal(t, err, 409, 10, 2018300)
	})
	if res, err := b.handover(t, liveSend, cid, "request_thread_control", nil, nil); err != nil || res.GetControl().GetAppId() != devApp {
		t.Fatalf("request = %v, %v", res, err)
	}
	t.Run("a pass to an app that does not exist is not found", func(t *testing.T) {
		_, err := b.handover(t, devSend, cid, "pass_thread_control", nil, strp("424242"))
		plugintest.WantRefusal(t, err, 404, 100, 33)
	})
	if res, err := b.handover(t, devSend, cid, "pass_thread_control", nil, strp(liveApp)); err != nil || res.GetControl().GetAppId() != liveApp {
		t.Fatalf("pass = %v, %v", res, err)
	}
	if res, err := b.handover(t, liveSend, cid, "return_thread_control", nil, nil); err != nil || res.GetControl().GetHolder() != "svc_ai" {
		t.Fatalf("return to the holder before the apps = %v, %v", res, err)
	}
	t.Run("a conversation id that names nothing is not found", func(t *testing.T) {
		for _, id := range []string{"1", "abc", ""} {
			_, err := b.handover(t, devSend, id, "take_thread_control", nil, nil)
			plugintest.WantRefusal(t, err, 404, 100, 33)
		}
	})
	t.Run("bad bodies are refused with 400/100", func(t *testing.T) {
		_, err := b.handover(t, devSend, cid, "take_thread_control", strp("svc_ai"), nil)
		plugintest.WantRefusal(t, err, 400, 100, 0)
		_, err = b.handover(t, devSend, cid, "steal", nil, nil)
		plugintest.WantRefusal(t, err, 400, 100, 0)
	})
	got := b.handoverEvents(t)
	want := []handoverData{
		{Action: "take_thread_control", PreviousHolder: "svc_ai", NewHolder: "app:" + devApp, AppID: devApp},
		{Action: "request_thread_control", PreviousHolder: "app:" + devApp, NewHolder: "app:" + devApp, AppID: liveApp},
		{Action: "pass_thread_control", PreviousHolder: "app:" + devApp, NewHolder: "app:" + liveApp, AppID: devApp},
		{Action: "return_thread_control", PreviousHolder: "app:" + liveApp, NewHolder: "svc_ai", AppID: liveApp},
	}
	if len(got) != len(want) {
		t.Fatalf("events = %+v", got)
	}
	first := got[0].Sequence
	for i := range want {
		want[i].ConversationID, want[i].PageID = cid, testPage
		// Nothing else happens in the conversation meanwhile: the events'
		// data.sequence values follow each other.
		if got[i].Sequence != first+int64(i) || first < 1 {
			t.Fatalf("event %d has sequence %d after %d", i, got[i].Sequence, first)
		}
		got[i].Sequence = 0
		if got[i] != want[i] {
			t.Fatalf("event %d = %+v; want %+v", i, got[i], want[i])
		}
	}
}

func TestConcurrentHandoversOnOneConversationSerialize(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cid := b.userWrites(t, "hi").GetConversationId()
	// Each app takes control then passes it back, many times at once: with
	// the row lock every event's previous holder is the holder the one
	// before it left (no lost update).
	const rounds = 6
	var wg sync.WaitGroup
	for _, app := range []sdk.Principal{devSend, liveSend} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if _, err := b.handover(t, app, cid, "take_thread_control", nil, nil); err != nil {
					t.Error(err)
				}
				_, _ = b.handover(t, app, cid, "return_thread_control", strp("page_human"), nil) // may lose the race: 2018300
			}
		}()
	}
	wg.Wait()
	events := b.handoverEvents(t)
	holder := "page_human"
	for i, e := range events {
		if e.PreviousHolder != holder {
			t.Fatalf("event %d: previous holder %s, but the holder was %s: %+v", i, e.PreviousHolder, holder, events)
		}
		holder = e.NewHolder
	}
	if len(events) < 2*rounds {
		t.Fatalf("%d events", len(events))
	}
}

func TestTheMobileHandoverIsThePageOwnersOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cid := b.userWrites(t, "hi").GetConversationId()
	must[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage, RecipientUserId: strp(consumer), Text: strp("x")})
	for _, who := range []sdk.Principal{admin, editor, user} {
		_, err := call[*svcchatv1.MobileHandoverResponse](t, b, "MobileHandover", who, &svcchatv1.MobileHandoverRequest{ConversationId: cid, Mode: "svc_ai"})
		plugintest.WantRefusal(t, err, 403, 200, 2069003)
	}
	_, err := call[*svcchatv1.MobileHandoverResponse](t, b, "MobileHandover", owner, &svcchatv1.MobileHandoverRequest{ConversationId: "77", Mode: "svc_ai"})
	plugintest.WantRefusal(t, err, 404, 100, 33)
	res := must[*svcchatv1.MobileHandoverResponse](t, b, "MobileHandover", owner, &svcchatv1.MobileHandoverRequest{ConversationId: cid, Mode: "svc_ai"})
	if res.GetConversationId() != cid || res.GetControlHolder() != "svc_ai" {
		t.Fatalf("mobile handover = %v", res)
	}
	ev := b.handoverEvents(t)
	if last := ev[len(ev)-1]; last.Action != "set_thread_control" || last.PreviousHolder != "app:"+devApp || last.NewHolder != "svc_ai" || last.AppID != "" {
		t.Fatalf("events = %+v", ev)
	}
}

func TestAPageManagerRepliesAsAHuman(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cid := b.userWrites(t, "hi").GetConversationId()
	t.Run("a user who does not manage the Page is refused with 2069003", func(t *testing.T) {
		_, err := call[*svcchatv1.ReplyResponse](t, b, "Reply", user, &svcchatv1.ReplyRequest{ConversationId: cid, Text: "x"})
		plugintest.WantRefusal(t, err, 403, 200, 2069003)
	})
	t.Run("an editor replies", func(t *testing.T) {
		must[*svcchatv1.ReplyResponse](t, b, "Reply", editor, &svcchatv1.ReplyRequest{ConversationId: cid, Text: "Hello from an editor"})
	})
	res := must[*svcchatv1.ReplyResponse](t, b, "Reply", admin, &svcchatv1.ReplyRequest{ConversationId: cid, Text: "Hello from a human"})
	if res.GetConversationId() != cid || !strings.HasPrefix(res.GetMessageId(), "m_") {
		t.Fatalf("reply = %v", res)
	}
	c := must[*svcchatv1.Conversation](t, b, "GetConversation", devSend, &svcchatv1.GetConversationRequest{PageId: testPage, ConversationId: cid})
	if c.GetControl().GetHolder() != "page_human" {
		t.Fatalf("conversation = %v", c)
	}
	t.Run("a reply to a user who opted out is refused with 1545041", func(t *testing.T) {
		must[*svcchatv1.OptInResponse](t, b, "OptOut", user, &svcchatv1.OptOutRequest{PageId: testPage, UserId: consumer})
		_, err := call[*svcchatv1.ReplyResponse](t, b, "Reply", owner, &svcchatv1.ReplyRequest{ConversationId: cid, Text: "x"})
		plugintest.WantRefusal(t, err, 400, 551, 1545041)
	})
	t.Run("a reply outside the window is refused with 2018278", func(t *testing.T) {
		b.userWrites(t, "back")
		if _, err := b.pool.Exec(context.Background(), "UPDATE svcchat.conversations SET window_expires_at = now() - interval '1 second'"); err != nil {
			t.Fatal(err)
		}
		_, err := call[*svcchatv1.ReplyResponse](t, b, "Reply", owner, &svcchatv1.ReplyRequest{ConversationId: cid, Text: "x"})
		plugintest.WantRefusal(t, err, 400, 10, 2018278)
	})
	t.Run("chat surfacing off refuses the reply with 2018304", func(t *testing.T) {
		b.facts.mu.Lock()
		b.facts.page.ChatSurfacing = false
		b.facts.mu.Unlock()
		_, err := call[*svcchatv1.ReplyResponse](t, b, "Reply", owner, &svcchatv1.ReplyRequest{ConversationId: cid, Text: "x"})
		plugintest.WantRefusal(t, err, 403, 10, 2018304)
	})
	var n int
	if err := b.pool.QueryRow(context.Background(), "SELECT count(*) FROM svcchat.messages WHERE sender = 'page_human' AND sender_user_id = $1", pageAdmin).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d human messages, %v", n, err)
	}
}

func TestTheInboxListsOnlySurfacedOptedInThreads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cid := b.userWrites(t, "hi").GetConversationId()
	must[*svcchatv1.ReplyResponse](t, b, "Reply", owner, &svcchatv1.ReplyRequest{ConversationId: cid, Text: "Hello!"})
	inbox := func() []*svcchatv1.InboxThread {
		t.Helper()
		return must[*svcchatv1.InboxResponse](t, b, "Inbox", user, &svcchatv1.InboxRequest{UserId: consumer}).GetThreads()
	}
	th := inbox()
	if len(th) != 1 || th[0].GetConversationId() != cid || th[0].GetPageName() != "Demo Coffee" || th[0].GetControlHolder() != "page_human" ||
		th[0].GetDeepLink() != "svcchat://page-inbox/"+testPage+"/"+cid || th[0].GetLastMessage().GetText() != "Hello!" ||
		th[0].GetLastMessage().GetSenderLabel() != "Demo Coffee" || th[0].GetUpdatedAt() == "" {
		t.Fatalf("inbox = %v", th)
	}
	t.Run("userId must be the signed-in user", func(t *testing.T) {
		_, err := call[*svcchatv1.InboxResponse](t, b, "Inbox", user, &svcchatv1.InboxRequest{UserId: pageOwner})
		plugintest.WantRefusal(t, err, 400, 100, 0)
	})
	t.Run("another user cannot read the thread", func(t *testing.T) {
		_, err := call[*svcchatv1.Thread](t, b, "GetThread", owner, &svcchatv1.GetThreadRequest{ConversationId: cid})
		plugintest.WantRefusal(t, err, 404, 100, 33)
	})
	for _, c := range []struct {
		rule   string
		change func(p *sdk.PageAccess)
	}{
		{"chat surfacing off hides the thread", func(p *sdk.PageAccess) { p.ChatSurfacing = false }},
		{"an unpublished Page hides the thread", func(p *sdk.PageAccess) { p.Published = false }},
		{"no inbox-merge link hides the thread", func(p *sdk.PageAccess) { p.InboxMergeLinked = false }},
	} {
		t.Run(c.rule, func(t *testing.T) {
			b.facts.mu.Lock()
			saved := b.facts.page
			c.change(&b.facts.page)
			b.facts.mu.Unlock()
			defer func() { b.facts.mu.Lock(); b.facts.page = saved; b.facts.mu.Unlock() }()
			if th := inbox(); len(th) != 0 {
				t.Fatalf("inbox = %v", th)
			}
			_, err := call[*svcchatv1.Thread](t, b, "GetThread", user, &svcchatv1.GetThreadRequest{ConversationId: cid})
			plugintest.WantRefusal(t, err, 403, 10, 2018304)
		})
	}
	t.Run("an opt-out hides the thread", func(t *testing.T) {
		must[*svcchatv1.OptInResponse](t, b, "OptOut", user, &svcchatv1.OptOutRequest{PageId: testPage, UserId: consumer})
		if th := inbox(); len(th) != 0 {
			t.Fatalf("inbox = %v", th)
		}
		b.userWrites(t, "again") // opts back in
		if th := inbox(); len(th) != 1 {
			t.Fatalf("inbox = %v", th)
		}
	})
}

func TestAThreadReadsOldestFirstWithABeforeCursor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cid := b.userWrites(t, "one").GetConversationId()
	must[*svcchatv1.ReplyResponse](t, b, "Reply", owner, &svcchatv1.ReplyRequest{ConversationId: cid, Text: "two"})
	b.userWrites(t, "three")
	th := must[*svcchatv1.Thread](t, b, "GetThread", user, &svcchatv1.GetThreadRequest{ConversationId: cid, Limit: 2})
	if len(th.GetMessages()) != 2 || !th.GetHasOlder() || th.GetMessages()[0].GetText() != "two" || th.GetMessages()[1].GetText() != "three" ||
		th.GetMessages()[0].GetDirection() != "outbound" || th.GetMessages()[0].GetSenderLabel() != "Demo Coffee" ||
		th.GetMessages()[1].GetDirection() != "inbound" || th.GetMessages()[1].GetSenderLabel() != "You" || th.GetPageName() != "Demo Coffee" {
		t.Fatalf("thread = %v", th)
	}
	older := must[*svcchatv1.Thread](t, b, "GetThread", user, &svcchatv1.GetThreadRequest{ConversationId: cid, Limit: 2, Before: th.GetMessages()[0].GetId()})
	if len(older.GetMessages()) != 1 || older.GetHasOlder() || older.GetMessages()[0].GetText() != "one" {
		t.Fatalf("older = %v", older)
	}
	_, err := call[*svcchatv1.Thread](t, b, "GetThread", user, &svcchatv1.GetThreadRequest{ConversationId: cid, Before: "m_nothing"})
	plugintest.WantRefusal(t, err, 400, 100, 0)
}

// modelAnswers makes the fake completions plugin answer text from a
// configured language model.
func modelAnswers(text string) func(plugintest.HostCall) ([]byte, error) {
	return func(plugintest.HostCall) ([]byte, error) {
		return proto.Marshal(&completionsv1.CompleteResponse{Content: text, Model: "llama-3.1-8b", FinishReason: "stop"})
	}
}

// withAssistant turns inbox automation on and returns an assistant whose
// retries fall due at once; tests run its jobs one by one with runOne.
func withAssistant(t *testing.T, b *bundle) *assistant {
	t.Helper()
	b.facts.mu.Lock()
	b.facts.page.InboxAutomation = true
	b.facts.page.AssistantLabel = "Barista bot"
	b.facts.mu.Unlock()
	a := newAssistant(b.pool, b.p.Host, b.p.Logger())
	a.backoff = func(int32) time.Duration { return 0 }
	return a
}

func runJobs(t *testing.T, a *assistant) int {
	t.Helper()
	n := 0
	for {
		worked, err := a.runOne(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !worked {
			return n
		}
		n++
	}
}

func (b *bundle) assistantMessages(t *testing.T) []string {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), "SELECT text FROM svcchat.messages WHERE sender = 'svc_ai' ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		out = append(out, s)
	}
	return out
}

func TestTheAssistantAnswersAConversationOnceAsThePage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := withAssistant(t, b)
	b.facts.mu.Lock()
	b.facts.complete = modelAnswers("Our hours are 8 to 6.")
	b.facts.mu.Unlock()
	cid := b.userWrites(t, "When are you open?").GetConversationId()
	b.userWrites(t, "Hello?")
	runJobs(t, a)
	b.userWrites(t, "Thanks")
	runJobs(t, a)
	if got := b.assistantMessages(t); len(got) != 1 || got[0] != "Our hours are 8 to 6." {
		t.Fatalf("assistant messages = %q", got)
	}
	b.facts.mu.Lock()
	caller, calls := b.facts.lastCall, b.facts.completeCalls
	b.facts.mu.Unlock()
	// No delegation handle: the gateway runs the call as the plugin itself
	// (TOKEN_KIND_PLUGIN), not as the user who wrote.
	if calls != 1 || caller.Caller.Kind != sdk.TokenKindPlugin || caller.Caller.UserID != "" {
		t.Fatalf("%d Complete calls, the last %v; want one, acting as the plugin itself", calls, caller)
	}
	th := must[*svcchatv1.Thread](t, b, "GetThread", user, &svcchatv1.GetThreadRequest{ConversationId: cid})
	if m := th.GetMessages()[2]; m.GetSenderLabel() != "Demo Coffee · Barista bot" || m.GetDirection() != "outbound" {
		t.Fatalf("thread = %v", th)
	}
	var sent int
	if err := b.pool.QueryRow(context.Background(), "SELECT count(*) FROM core.outbox WHERE type = 'svcchat.message.sent' AND data->'conversation'->>'controlHolder' = 'svc_ai'").Scan(&sent); err != nil || sent != 1 {
		t.Fatalf("%d svcchat.message.sent of the assistant, %v", sent, err)
	}
}

func TestAFailingModelIsRetriedThenTheBuiltInReplyIsSent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := withAssistant(t, b) // no completions plugin: every call fails
	b.userWrites(t, "hi")
	if n := runJobs(t, a); n != a.attempts {
		t.Fatalf("%d runs, want %d (retries, then the built-in reply)", n, a.attempts)
	}
	got := b.assistantMessages(t)
	if len(got) != 1 || got[0] != "Thanks for your message! Someone from Demo Coffee will get back to you soon." {
		t.Fatalf("assistant messages = %q", got)
	}
	var source string
	var attempts int
	if err := b.pool.QueryRow(context.Background(), "SELECT source, attempts FROM svcchat.assistant_jobs").Scan(&source, &attempts); err != nil || source != "builtin" || attempts != a.attempts {
		t.Fatalf("job: %s %d %v", source, attempts, err)
	}
}

func TestWithoutAConfiguredModelTheAssistantsFirstReplyIsThePagesOwnFallback(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := withAssistant(t, b)
	b.facts.mu.Lock()
	// What the completions plugin answers when the server has no model:
	// svc-builtin, speaking of the platform.
	b.facts.complete = func(plugintest.HostCall) ([]byte, error) {
		return proto.Marshal(&completionsv1.CompleteResponse{Model: "svc-builtin", FinishReason: "stop",
			Content: "Thanks for your message! This is an automatic reply from svc-builtin, the platform's built-in model, which is not a language model."})
	}
	b.facts.mu.Unlock()
	cid := b.userWrites(t, "hi").GetConversationId()
	if n := runJobs(t, a); n != 1 {
		t.Fatalf("%d runs, want 1: nothing to retry", n)
	}
	got := b.assistantMessages(t)
	if len(got) != 1 || got[0] != "Thanks for your message! Someone from Demo Coffee will get back to you soon." {
		t.Fatalf("assistant messages = %q", got)
	}
	th := must[*svcchatv1.Thread](t, b, "GetThread", user, &svcchatv1.GetThreadRequest{ConversationId: cid})
	if m := th.GetMessages()[1]; m.GetSenderLabel() != "Demo Coffee · Barista bot" {
		t.Fatalf("thread = %v", th)
	}
	var source string
	if err := b.pool.QueryRow(context.Background(), "SELECT source FROM svcchat.assistant_jobs").Scan(&source); err != nil || source != "builtin" {
		t.Fatalf("job source %q %v", source, err)
	}
}

func TestTheAssistantIsSilentWhileAnAppOrAHumanHoldsControl(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rule string
		take func(b *bundle, cid string)
	}{
		{"an app that sends takes control", func(b *bundle, _ string) {
			must[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage, RecipientUserId: strp(consumer), Text: strp("Hi, a person here")})
		}},
		{"a Page manager's reply takes control", func(b *bundle, cid string) {
			must[*svcchatv1.ReplyResponse](t, b, "Reply", owner, &svcchatv1.ReplyRequest{ConversationId: cid, Text: "Hi"})
		}},
	} {
		t.Run(c.rule, func(t *testing.T) {
			b := setup(t)
			a := withAssistant(t, b)
			b.facts.mu.Lock()
			b.facts.complete = modelAnswers("should not be sent")
			b.facts.mu.Unlock()
			cid := b.userWrites(t, "hi").GetConversationId()
			c.take(b, cid)
			runJobs(t, a)
			if got := b.assistantMessages(t); len(got) != 0 {
				t.Fatalf("the assistant spoke: %q", got)
			}
		})
	}
}

func TestTwoAssistantsSendOneReply(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a1, a2 := withAssistant(t, b), withAssistant(t, b)
	b.facts.mu.Lock()
	b.facts.complete = modelAnswers("Hello!")
	b.facts.mu.Unlock()
	for range 5 {
		b.userWrites(t, "hi")
	}
	var wg sync.WaitGroup
	for _, a := range []*assistant{a1, a2} {
		wg.Add(1)
		go func() { defer wg.Done(); runJobs(t, a) }()
	}
	wg.Wait()
	if got := b.assistantMessages(t); len(got) != 1 {
		t.Fatalf("assistant messages = %q", got)
	}
}
