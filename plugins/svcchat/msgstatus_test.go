package main

import (
	"context"
	"encoding/json"
	"testing"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
)

// Issue 18 at the plugin: the failed status, the typing bound and a pass
// with expires_in.

// outboxData reads the data of every event of type typ, in outbox order.
func outboxData[T any](t *testing.T, b *bundle, typ string) []T {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), "SELECT data FROM core.outbox WHERE type = $1 ORDER BY seq", typ)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var raw []byte
		var d T
		if err := rows.Scan(&raw); err != nil || json.Unmarshal(raw, &d) != nil {
			t.Fatalf("read %s event: %v", typ, err)
		}
		out = append(out, d)
	}
	return out
}

func (b *bundle) send(t *testing.T, text string) string {
	t.Helper()
	return must[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage,
		RecipientUserId: strp(consumer), Text: strp(text)}).GetMessageId()
}

func (b *bundle) messages(t *testing.T, cid string) map[string]*svcchatv1.Message {
	t.Helper()
	list := must[*svcchatv1.ListMessagesResponse](t, b, "ListMessages", devSend, &svcchatv1.ListMessagesRequest{PageId: testPage, ConversationId: cid})
	out := map[string]*svcchatv1.Message{}
	for _, m := range list.GetData() {
		out[m.GetId()] = m
	}
	return out
}

func (b *bundle) optOut(t *testing.T) {
	t.Helper()
	must[*svcchatv1.OptInResponse](t, b, "OptOut", user, &svcchatv1.OptOutRequest{PageId: testPage, UserId: consumer})
}

// The Page's messages the user's chat app has not fetched when the user
// opts out never reach them: each becomes failed with the opt-out's Graph
// error and emits svcchat.message.failed; messages already delivered stay
// delivered; the user's thread no longer shows the failed ones.
func TestAnOptOutFailsThePageMessagesTheChatAppHasNotFetched(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cid := b.userWrites(t, "hi").GetConversationId()
	seen := b.send(t, "seen before the opt-out")
	must[*svcchatv1.Thread](t, b, "GetThread", user, &svcchatv1.GetThreadRequest{ConversationId: cid})
	lost1, lost2 := b.send(t, "never fetched 1"), b.send(t, "never fetched 2")
	b.optOut(t)

	msgs := b.messages(t, cid)
	if m := msgs[seen]; m.GetStatus() != "delivered" || m.Error != nil || m.ErrorCode != nil {
		t.Errorf("the fetched message is %v, want delivered without error", m)
	}
	for _, id := range []string{lost1, lost2} {
		m := msgs[id]
		if m.GetStatus() != "failed" || m.GetErrorCode() != 551 || m.GetErrorSubcode() != 1545041 || m.GetError() != errOptedOut().Message {
			t.Errorf("the unfetched message is %v, want failed with 551/1545041", m)
		}
	}
	failed := outboxData[failedData](t, b, EventFailed)
	if len(failed) != 2 || failed[0].MessageID != lost1 || failed[1].MessageID != lost2 {
		t.Fatalf("failed events %+v, want one per unfetched message in order", failed)
	}
	for _, f := range failed {
		if f.ConversationID != cid || f.UserID != consumer || f.PageID != testPage || f.Error.Code != 551 || f.Error.Subcode != 1545041 ||
			f.Error.Message != errOptedOut().Message {
			t.Errorf("failed event %+v", f)
		}
	}
	optOut := outboxData[optInData](t, b, EventOptOut)
	if len(optOut) != 1 || optOut[0].Sequence == nil || failed[0].Sequence != *optOut[0].Sequence+1 || failed[1].Sequence != failed[0].Sequence+1 {
		t.Errorf("sequences: opt_out %+v, failed %+v; want the failures right after the opt-out", optOut, failed)
	}

	t.Run("the user's thread does not show them, even after writing again", func(t *testing.T) {
		b.userWrites(t, "back again")
		th := must[*svcchatv1.Thread](t, b, "GetThread", user, &svcchatv1.GetThreadRequest{ConversationId: cid})
		for _, m := range th.GetMessages() {
			if m.GetId() == lost1 || m.GetId() == lost2 {
				t.Errorf("the thread shows failed message %v", m)
			}
		}
		if len(th.GetMessages()) != 3 {
			t.Errorf("the thread shows %d messages, want hi, the fetched one and back again: %v", len(th.GetMessages()), th.GetMessages())
		}
		if st := b.messages(t, cid)[lost1].GetStatus(); st != "failed" {
			t.Errorf("a fetch moved a failed message to %s", st)
		}
	})
	t.Run("a repeated opt-out fails nothing more", func(t *testing.T) {
		b.send(t, "sent after the user wrote again")
		b.optOut(t) // the user wrote again, so this one is an opt-out too
		b.optOut(t)
		if n := len(outboxData[failedData](t, b, EventFailed)); n != 3 {
			t.Errorf("%d failed events, want 3", n)
		}
	})
}

// typing_on shows in the user's thread for at most 20 seconds when no
// typing_off or message ends it: the test moves the clock of the
// conversation instead of waiting.
func TestTypingShowsInTheThreadForAtMost20Seconds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cid := b.userWrites(t, "hi").GetConversationId()
	must[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage,
		RecipientUserId: strp(consumer), SenderAction: strp(actionTypingOn)})
	typingNow := func() bool {
		return must[*svcchatv1.Thread](t, b, "GetThread", user, &svcchatv1.GetThreadRequest{ConversationId: cid}).GetTyping()
	}
	older := func(seconds int) {
		t.Helper()
		if _, err := b.pool.Exec(context.Background(),
			"UPDATE svcchat.conversations SET typing_until = typing_until - make_interval(secs => $2) WHERE id = $1::bigint", cid, seconds); err != nil {
			t.Fatal(err)
		}
	}
	if !typingNow() {
		t.Fatal("typing_on is not shown")
	}
	older(15)
	if !typingNow() {
		t.Fatal("typing stopped showing 15 seconds after typing_on")
	}
	older(5)
	if typingNow() {
		t.Fatal("typing still shows 20 seconds after typing_on")
	}
}

// pass_thread_control with expires_in arms the expiry like a take: the
// conversation shows expires_at, the pass is recorded with it, and when it
// lapses control returns to the app that passed.
func TestAPassWithExpiresInReturnsControlToThePasserWhenItLapses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cid := b.userWrites(t, "hi").GetConversationId()
	if _, err := b.handover(t, devSend, cid, string(ActionTake), nil, nil); err != nil {
		t.Fatal(err)
	}
	in := int64(120)
	res := must[*svcchatv1.HandoverResponse](t, b, "Handover", devSend, &svcchatv1.HandoverRequest{PageId: testPage, ConversationId: cid,
		Action: string(ActionPass), TargetAppId: strp(liveApp), ExpiresIn: &in})
	if c := res.GetControl(); c.GetExpiresAt() == "" || c.GetAppId() != liveApp {
		t.Fatalf("pass with expires_in answered control %v", c)
	}
	b.lapse(t, cid)
	if n, err := (&expirer{pool: b.pool, log: b.p.Logger()}).expireBatch(context.Background()); err != nil || n != 1 {
		t.Fatalf("expireBatch = %d, %v", n, err)
	}
	c := must[*svcchatv1.Conversation](t, b, "GetConversation", devSend, &svcchatv1.GetConversationRequest{PageId: testPage, ConversationId: cid}).GetControl()
	if c.GetHolder() != "app" || c.GetAppId() != devApp || c.ExpiresAt != nil {
		t.Fatalf("control after the lapse %v, want back to the passing app without expiry", c)
	}
	evs := b.handoverEvents(t)
	last := evs[len(evs)-1]
	if last.Action != string(ActionExpire) || last.PreviousHolder != "app:"+liveApp || last.NewHolder != "app:"+devApp {
		t.Errorf("expire event %+v", last)
	}
	list := must[*svcchatv1.ListHandoversResponse](t, b, "ListHandovers", devSend, &svcchatv1.ListHandoversRequest{PageId: testPage, ConversationId: cid}).GetData()
	if len(list) != 3 || list[0].GetAction() != "expire" || list[1].GetAction() != "pass_thread_control" || list[1].GetExpiresAt() == "" {
		t.Errorf("history %v", list)
	}
}
