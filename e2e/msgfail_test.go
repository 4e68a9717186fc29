package e2e

import (
	"net/url"
	"testing"
)

// A Page message the consumer's chat app has not fetched when the consumer
// opts out never reaches them: the Graph shows it failed with the
// opt-out's error, svcchat.message.failed says so (numbered right after
// the opt-out), and the consumer's thread leaves it out, even after they
// write again. A message already delivered stays delivered.
func TestAMessageFailsWhenTheConsumerOptsOutBeforeFetchingIt(t *testing.T) {
	t.Parallel()
	w, rcv := newMsgplusWorld(t)
	cid, _ := w.write(t, "is my order on its way?")
	seen := wantSent(t, first(w.session(t, "checking")), w.consumerID)
	w.thread(t, cid)
	lost := wantSent(t, first(w.session(t, "it left the warehouse")), w.consumerID)
	if res, body := w.mobile(t, w.consumer, "opt-out", map[string]any{"pageId": w.c.Page.ID, "userId": w.consumerID}); res.StatusCode != 200 {
		t.Fatalf("opt-out: %d %s", res.StatusCode, body)
	}

	res, body := w.get(t, w.app, url.Values{"node": {"page/" + w.c.Page.ID + "/conversations/" + cid + "/messages"}})
	type message struct {
		ID, Status   string
		Error        *string `json:"error"`
		ErrorCode    *int    `json:"error_code"`
		ErrorSubcode *int    `json:"error_subcode"`
	}
	list := decode[struct{ Data []message }](t, body)
	byID := map[string]message{}
	for _, m := range list.Data {
		byID[m.ID] = m
	}
	if res.StatusCode != 200 {
		t.Fatalf("messages: %d %s", res.StatusCode, body)
	}
	if m := byID[lost.MessageID]; m.Status != "failed" || m.Error == nil || *m.Error != "This person has opted out of messages from this Page." ||
		m.ErrorCode == nil || *m.ErrorCode != 551 || m.ErrorSubcode == nil || *m.ErrorSubcode != 1545041 {
		t.Errorf("the unfetched message reads %+v in %s", m, body)
	}
	if m := byID[seen.MessageID]; m.Status != "delivered" || m.Error != nil || m.ErrorCode != nil {
		t.Errorf("the fetched message reads %+v, want delivered without error", m)
	}

	d := rcv.waitForMatch("svcchat.message.failed", func(data map[string]any) bool { return data["messageId"] == lost.MessageID })
	e, _ := d.body.Data["error"].(map[string]any)
	if d.body.Data["conversationId"] != cid || d.body.Data["userId"] != w.consumerID || d.body.Data["pageId"] != w.c.Page.ID ||
		e["code"] != float64(551) || e["error_subcode"] != float64(1545041) || e["message"] != *byID[lost.MessageID].Error {
		t.Errorf("svcchat.message.failed data %v", d.body.Data)
	}
	optOut := rcv.waitForMatch("svcchat.opt_out", func(data map[string]any) bool { return data["conversationId"] == cid })
	if seqOf(d) != seqOf(optOut)+1 {
		t.Errorf("failed has sequence %d, opt_out %d; want it right after", seqOf(d), seqOf(optOut))
	}
	if n := len(rcv.all("svcchat.message.failed")); n != 1 {
		t.Errorf("%d svcchat.message.failed deliveries, want 1 (the delivered message does not fail)", n)
	}

	w.write(t, "I'm back")
	for _, m := range w.thread(t, cid).Messages {
		if m.ID == lost.MessageID {
			t.Fatalf("the consumer's thread shows the failed message: %+v", m)
		}
	}
	if st := w.graphStatuses(t, cid)[lost.MessageID]; st != "failed" {
		t.Errorf("after a fetch the failed message is %s", st)
	}
}
