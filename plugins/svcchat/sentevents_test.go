package main

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/plugins/svcchat/internal/svcchatdb"
)

// An app's send has PostMessageIf build its two events' data in SQL: what
// it writes must be what messageSent marshals for the message (as
// core.outbox's jsonb stores it), on the first send to a user (two round
// trips), on the next ones (one round trip, guarded) and for a template,
// whatever the text holds.
func TestAnAppsSendWritesTheEventsMessageSentMarshals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.userWrites(t, "hi")
	texts := []string{
		`two round trips: <b>&"quoted"</b> \ back/slash ☕ 咖啡 🚀`,
		"one round trip:\u2028line\tseparated\u00a0\x01 é",
		"",
	}
	for _, text := range texts {
		res, err := call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage,
			RecipientUserId: strp(consumer), Text: strp(text)})
		if err != nil {
			t.Fatal(err)
		}
		b.checkSentEvents(t, res.GetMessageId())
	}
	if b.svc.sends.oneTrip.Load() == 0 {
		t.Fatal("no send went in one round trip: the guarded path is not checked")
	}
	res := must[*svcchatv1.SendMessageResponse](t, b, "SendMessage", liveSend, template(liveSend, "hello_world", nil))
	b.checkSentEvents(t, res.GetMessageId())
}

// checkSentEvents checks the outbox rows of message id, the last one sent,
// against messageSent's events for it.
func (b *bundle) checkSentEvents(t *testing.T, id string) {
	t.Helper()
	ctx := context.Background()
	conv, err := svcchatdb.New(b.pool).LockConversationByUser(ctx, svcchatdb.LockConversationByUserParams{PageID: testPage, UserID: consumer})
	if err != nil {
		t.Fatal(err)
	}
	var msg svcchatdb.SvcchatMessage
	if err := b.pool.QueryRow(ctx, `SELECT id, text, kind, template_name, app_id FROM svcchat.messages WHERE id = $1`, id).
		Scan(&msg.ID, &msg.Text, &msg.Kind, &msg.TemplateName, &msg.AppID); err != nil {
		t.Fatal(err)
	}
	want := messageSent(&conv, msg)
	for i, e := range want {
		e.data.setSequence(conv.LastEventSeq - int64(len(want)) + 1 + int64(i))
	}
	rows, err := b.pool.Query(ctx, `SELECT id, type, page_id, ordering_key, user_id, data::text FROM core.outbox
		WHERE data->>'messageId' = $1 OR data->'message'->>'id' = $1 ORDER BY seq`, id)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ id, typ, page, key, user, data string }
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.typ, &r.page, &r.key, &r.user, &r.data); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("message %s has %d events, want %d", id, len(got), len(want))
	}
	evtID := regexp.MustCompile(`^evt_[0-9A-Za-z]{22}$`)
	for i, r := range got {
		js, err := json.Marshal(want[i].data)
		if err != nil {
			t.Fatal(err)
		}
		var data string // as core.outbox's jsonb stores what messageSent marshals
		if err := b.pool.QueryRow(ctx, `SELECT $1::jsonb::text`, string(js)).Scan(&data); err != nil {
			t.Fatal(err)
		}
		if r.typ != want[i].typ || r.data != data {
			t.Errorf("event %d of %s:\n%s %s\nwant\n%s %s", i, id, r.typ, r.data, want[i].typ, data)
		}
		if !evtID.MatchString(r.id) || r.page != conv.PageID || r.key != orderingKey(conv.ID) || r.user != conv.UserID {
			t.Errorf("event %d of %s: id %q, page %q, ordering key %q, user %q", i, id, r.id, r.page, r.key, r.user)
		}
	}
	if got[0].id == got[1].id {
		t.Errorf("both events of %s have id %s", id, got[0].id)
	}
}
