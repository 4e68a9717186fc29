package main

import (
	"errors"
	"slices"
	"testing"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/sdk"
)

// TestMessageStatusTable checks every row of the message status table and
// that the pairs it leaves out change nothing.
func TestMessageStatusTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rule    string
		from    MessageStatus
		trigger StatusTrigger
		to      MessageStatus
		event   string
		changed bool
	}{
		{"a sent message becomes delivered when the chat app fetches its thread", MessageSent, TriggerFetched, MessageDelivered, EventDelivered, true},
		{"a sent message read before any fetch becomes read with one read event", MessageSent, TriggerMarkedRead, MessageRead, EventRead, true},
		{"a delivered message becomes read when the user marks the thread read", MessageDelivered, TriggerMarkedRead, MessageRead, EventRead, true},
		{"a sent message fails with one failed event", MessageSent, TriggerFailed, MessageFailed, EventFailed, true},
		{"a delivered message does not fail: it reached the chat app", MessageDelivered, TriggerFailed, MessageDelivered, "", false},
		{"a second fetch changes nothing", MessageDelivered, TriggerFetched, MessageDelivered, "", false},
		{"a fetch never moves a read message back", MessageRead, TriggerFetched, MessageRead, "", false},
		{"reading twice changes nothing", MessageRead, TriggerMarkedRead, MessageRead, "", false},
		{"a read message does not fail", MessageRead, TriggerFailed, MessageRead, "", false},
		{"a failed message stays failed when fetched", MessageFailed, TriggerFetched, MessageFailed, "", false},
		{"a failed message stays failed when read", MessageFailed, TriggerMarkedRead, MessageFailed, "", false},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			to, ev, changed := NextMessageStatus(c.from, c.trigger)
			if to != c.to || ev != c.event || changed != c.changed {
				t.Fatalf("NextMessageStatus(%s, %s) = %s, %q, %v; want %s, %q, %v", c.from, c.trigger, to, ev, changed, c.to, c.event, c.changed)
			}
		})
	}
	t.Run("every row of the table is tested", func(t *testing.T) {
		for _, r := range statusTable {
			if !slices.ContainsFunc(cases, func(c struct {
				rule    string
				from    MessageStatus
				trigger StatusTrigger
				to      MessageStatus
				event   string
				changed bool
			}) bool {
				return c.from == r.from && c.trigger == r.trigger
			}) {
				t.Errorf("no case for %s on %s", r.from, r.trigger)
			}
		}
	})
	t.Run("the one-statement batch moves exactly the statuses the table moves", func(t *testing.T) {
		for _, trig := range []StatusTrigger{TriggerFetched, TriggerMarkedRead, TriggerFailed} {
			from, to, ev := movedBy(trig)
			for _, st := range []MessageStatus{MessageSent, MessageDelivered, MessageRead, MessageFailed} {
				want, wantEv, changed := NextMessageStatus(st, trig)
				if slices.Contains(from, string(st)) != changed || (changed && (want != to || wantEv != ev)) {
					t.Errorf("%s from %s: batch (%v → %s, %q) disagrees with the table (%s, %q, %v)", trig, st, from, to, ev, want, wantEv, changed)
				}
			}
		}
	})
}

// TestSenderActionBodies: a sender action goes with recipient_user_id and
// nothing of a message; anything else is refused naming the field.
func TestSenderActionBodies(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	cases := []struct {
		rule  string
		req   *svcchatv1.SendMessageRequest
		field string
	}{
		{"typing_on with recipient_user_id is accepted", &svcchatv1.SendMessageRequest{SenderAction: s("typing_on"), RecipientUserId: s("7")}, ""},
		{"typing_off with recipient_user_id is accepted", &svcchatv1.SendMessageRequest{SenderAction: s("typing_off"), RecipientUserId: s("7")}, ""},
		{"mark_seen with recipient_user_id is accepted", &svcchatv1.SendMessageRequest{SenderAction: s("mark_seen"), RecipientUserId: s("7")}, ""},
		{"an unknown sender action is refused naming sender_action", &svcchatv1.SendMessageRequest{SenderAction: s("dance"), RecipientUserId: s("7")}, "sender_action"},
		{"a sender action with text is refused naming text", &svcchatv1.SendMessageRequest{SenderAction: s("typing_on"), RecipientUserId: s("7"), Text: s("hi")}, "text"},
		{"a sender action without recipient is refused naming recipient_user_id", &svcchatv1.SendMessageRequest{SenderAction: s("typing_on")}, "recipient_user_id"},
		{"a sender action with to is refused naming to", &svcchatv1.SendMessageRequest{SenderAction: s("typing_on"), To: s("7")}, "to"},
		{"a sender action with a template type is refused naming type", &svcchatv1.SendMessageRequest{SenderAction: s("typing_on"), RecipientUserId: s("7"), Type: s("template")}, "type"},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			shape, err := parseSend(c.req)
			if c.field == "" {
				if err != nil || shape.action != c.req.GetSenderAction() || shape.recipient != "7" {
					t.Fatalf("parseSend = %+v, %v", shape, err)
				}
				return
			}
			var e *sdk.Error
			if !errors.As(err, &e) || e.HTTPStatus != 400 || e.Code != 100 || e.Field != c.field {
				t.Fatalf("err = %v; want 400/100 naming %s", err, c.field)
			}
		})
	}
}
