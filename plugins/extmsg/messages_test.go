package main

import (
	"context"
	"encoding/json"
	"testing"

	extmsgv1 "github.com/svcplatform/svc/gen/svc/extmsg/v1"
	"github.com/svcplatform/svc/plugins/internal/leavetest"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

const (
	procSend       = "/svc.extmsg.v1.ExtmsgService/SendMessage"
	procConvs      = "/svc.extmsg.v1.ExtmsgService/ListConversations"
	procMessages   = "/svc.extmsg.v1.ExtmsgService/ListMessages"
	procUserWrite  = "/svc.extmsg.v1.ExtmsgService/UserWrite"
	procUserThread = "/svc.extmsg.v1.ExtmsgService/UserThread"
	procThreads    = "/svc.extmsg.v1.ExtmsgService/UserThreads"
	procRead       = "/svc.extmsg.v1.ExtmsgService/MarkThreadRead"
)

// channel is a development app's account with its approved template
// "shipping" and its phone number.
func (b *bundle) channel(t *testing.T) (acct, phone string) {
	t.Helper()
	res := must[*extmsgv1.EmbeddedSignupResponse](t, b, procSignup, token(owner, devApp),
		&extmsgv1.EmbeddedSignupRequest{BusinessId: ownerBusiness, AppId: devApp, DisplayName: "Demo Coffee"})
	if len(res.GetPhoneNumber()) != 12 || res.GetPhoneNumber()[:5] != "+1555" {
		t.Fatalf("channel identity %q", res.GetPhoneNumber())
	}
	b.draft(t, res.GetAccountId(), devApp, "shipping")
	must[*extmsgv1.Template](t, b, procApprove, token(owner, devApp), &extmsgv1.TemplateActionRequest{AccountId: res.GetAccountId(), Name: "shipping"})
	return res.GetAccountId(), res.GetPhoneNumber()
}

func text(acct, to, body string) *extmsgv1.SendMessageRequest {
	return &extmsgv1.SendMessageRequest{AccountId: acct, To: to, Type: "text", Text: &extmsgv1.TextBody{Body: body}}
}

func tmpl(acct, to, name string, params map[string]string) *extmsgv1.SendMessageRequest {
	return &extmsgv1.SendMessageRequest{AccountId: acct, To: to, Type: "template", Template: &extmsgv1.TemplateBody{Name: name, Params: params}}
}

func (b *bundle) writes(t *testing.T, phone, text string) *extmsgv1.UserWriteResponse {
	t.Helper()
	return must[*extmsgv1.UserWriteResponse](t, b, procUserWrite, session(person), &extmsgv1.UserWriteRequest{To: phone, Text: text})
}

// events reads the outbox's extmsg events, oldest first, as type and data.
func (b *bundle) events(t *testing.T) []struct {
	typ, app string
	data     map[string]any
} {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), `SELECT type, app_id, data FROM core.outbox WHERE type LIKE 'extmsg.%' ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []struct {
		typ, app string
		data     map[string]any
	}
	for rows.Next() {
		var typ string
		var app *string
		var raw []byte
		if err := rows.Scan(&typ, &app, &raw); err != nil {
			t.Fatal(err)
		}
		var data map[string]any
		if err := json.Unmarshal(raw, &data); err != nil {
			t.Fatal(err)
		}
		out = append(out, struct {
			typ, app string
			data     map[string]any
		}{typ, *app, data})
	}
	return out
}

func TestFreeFormTextIsSentOnlyInsideTheWindowThePersonsMessageOpens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	acct, phone := b.channel(t)
	_, err := call[*extmsgv1.SendMessageResponse](t, b, procSend, token(owner, devApp), text(acct, person, "hello?"))
	plugintest.WantRefusal(t, err, 400, 10, 2018278)

	wrote := b.writes(t, phone, "is my order on its way?")
	sent := must[*extmsgv1.SendMessageResponse](t, b, procSend, token(owner, devApp), text(acct, person, "It left this morning."))
	if sent.GetConversationId() != wrote.GetConversationId() || sent.GetStatus() != "sent" {
		t.Fatalf("send answered %v after the person wrote in %v", sent, wrote)
	}

	if _, err := b.pool.Exec(context.Background(), `UPDATE extmsg.conversations SET window_expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	_, err = call[*extmsgv1.SendMessageResponse](t, b, procSend, token(owner, devApp), text(acct, person, "one more thing"))
	plugintest.WantRefusal(t, err, 400, 10, 2018278)
	if got := must[*extmsgv1.SendMessageResponse](t, b, procSend, token(owner, devApp), tmpl(acct, person, "shipping", map[string]string{"order_id": "A-1"})); got.GetStatus() != "sent" {
		t.Fatalf("a template outside the window answered %v", got)
	}
	t.Run("the person writing again reopens the window", func(t *testing.T) {
		b.writes(t, phone, "thanks")
		must[*extmsgv1.SendMessageResponse](t, b, procSend, token(owner, devApp), text(acct, person, "You're welcome."))
	})
	t.Run("writing to a phone number no business has is not found", func(t *testing.T) {
		_, err := call[*extmsgv1.UserWriteResponse](t, b, procUserWrite, session(person), &extmsgv1.UserWriteRequest{To: "+15559999999", Text: "hi"})
		if e := plugintest.WantRefusal(t, err, 404, 100, 33); e.Field != "to" {
			t.Fatalf("refusal %+v", e)
		}
	})
}

func TestOnlyTheAccountsApprovedTemplatesAreSentWithExactlyTheirParams(t *testing.T) {
	t.Parallel()
	b := setup(t)
	acct, _ := b.channel(t)
	b.draft(t, acct, devApp, "receipt")
	cases := []struct {
		rule                  string
		req                   *extmsgv1.SendMessageRequest
		status, code, subcode int
		field                 string
	}{
		{"a draft template is refused", tmpl(acct, person, "receipt", map[string]string{"order_id": "A-1"}), 403, 10, 2018302, "template.name"},
		{"a template the account does not have is not found", tmpl(acct, person, "nothing", nil), 404, 132001, 0, "template.name"},
		{"a missing parameter is refused", tmpl(acct, person, "shipping", nil), 400, 132000, 0, "template.params"},
		{"an extra parameter is refused", tmpl(acct, person, "shipping", map[string]string{"order_id": "A-1", "x": "y"}), 400, 132000, 0, "template.params"},
		{"type text with a template is refused naming template", &extmsgv1.SendMessageRequest{AccountId: acct, To: person, Type: "text",
			Text: &extmsgv1.TextBody{Body: "hi"}, Template: &extmsgv1.TemplateBody{Name: "shipping"}}, 400, 100, 0, "template"},
		{"type template without a template is refused naming template", &extmsgv1.SendMessageRequest{AccountId: acct, To: person, Type: "template"}, 400, 100, 0, "template"},
		{"a recipient that is not a user id is refused naming to", tmpl(acct, "+15550000001", "shipping", map[string]string{"order_id": "A-1"}), 400, 100, 0, "to"},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			_, err := call[*extmsgv1.SendMessageResponse](t, b, procSend, token(owner, devApp), c.req)
			if e := plugintest.WantRefusal(t, err, c.status, c.code, c.subcode); e.Field != c.field {
				t.Fatalf("refusal names %q, want %q", e.Field, c.field)
			}
		})
	}
	var n int
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM extmsg.messages`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d messages stored by refused sends (%v)", n, err)
	}
	sent := must[*extmsgv1.SendMessageResponse](t, b, procSend, token(owner, devApp), tmpl(acct, person, "shipping", map[string]string{"order_id": "A-1"}))
	list := must[*extmsgv1.ListMessagesResponse](t, b, procMessages, token(owner, devApp), &extmsgv1.ListMessagesRequest{AccountId: acct, ConversationId: sent.GetConversationId()})
	if len(list.GetData()) != 1 || list.GetData()[0].GetText() != "Order A-1 shipped." || list.GetData()[0].GetKind() != "template" ||
		list.GetData()[0].GetTemplateName() != "shipping" || list.GetData()[0].GetStatus() != "sent" {
		t.Fatalf("messages %v", list)
	}
}

func TestStatusesMoveByThePersonsAppAndEachIsAnEventOfTheAccountsApp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	acct, phone := b.channel(t)
	conv := b.writes(t, phone, "hi").GetConversationId()
	first := must[*extmsgv1.SendMessageResponse](t, b, procSend, token(owner, devApp), text(acct, person, "Hello!"))

	thread := must[*extmsgv1.UserThreadResponse](t, b, procUserThread, session(person), &extmsgv1.UserThreadRequest{ConversationId: conv})
	if len(thread.GetMessages()) != 2 || thread.GetMessages()[0].GetDirection() != "inbound" || thread.GetMessages()[1].GetStatus() != "delivered" ||
		thread.GetBusinessName() != "Demo Coffee" || thread.GetPhoneNumber() != phone {
		t.Fatalf("thread %v", thread)
	}
	second := must[*extmsgv1.SendMessageResponse](t, b, procSend, token(owner, devApp), text(acct, person, "Anything else?"))
	read := must[*extmsgv1.MarkThreadReadResponse](t, b, procRead, session(person), &extmsgv1.MarkThreadReadRequest{ConversationId: conv})
	if read.GetRead() != 2 {
		t.Fatalf("read %v, want both messages read", read)
	}
	if again := must[*extmsgv1.MarkThreadReadResponse](t, b, procRead, session(person), &extmsgv1.MarkThreadReadRequest{ConversationId: conv}); again.GetRead() != 0 {
		t.Fatalf("reading again moved %d", again.GetRead())
	}

	want := []struct{ typ, message string }{
		{EventReceived, ""},
		{EventSent, first.GetMessageId()},
		{EventDelivered, first.GetMessageId()},
		{EventSent, second.GetMessageId()},
		{EventRead, first.GetMessageId()},
		{EventRead, second.GetMessageId()},
	}
	got := b.events(t)
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		e := got[i]
		if e.typ != w.typ || e.app != devApp || e.data["conversationId"] != conv || e.data["userId"] != person || e.data["accountId"] != acct {
			t.Errorf("event %d is %s for app %s with %v; want %s for %s", i, e.typ, e.app, e.data, w.typ, devApp)
		}
		if w.message != "" && (e.data["messageId"] != w.message || e.data["status"] != e.typ[len("extmsg.message."):]) {
			t.Errorf("event %d data %v, want message %s", i, e.data, w.message)
		}
	}
	if got[0].data["text"] != "hi" || got[0].data["phoneNumber"] != phone {
		t.Errorf("received data %v", got[0].data)
	}
}

func TestAMessageToSomeoneWhoIsNotAUserOfTheMessagingAppFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	acct, _ := b.channel(t)
	sent := must[*extmsgv1.SendMessageResponse](t, b, procSend, token(owner, devApp), tmpl(acct, nobody, "shipping", map[string]string{"order_id": "A-1"}))
	list := must[*extmsgv1.ListMessagesResponse](t, b, procMessages, session(owner), &extmsgv1.ListMessagesRequest{AccountId: acct, ConversationId: sent.GetConversationId()})
	if len(list.GetData()) != 1 || list.GetData()[0].GetStatus() != "failed" || list.GetData()[0].GetError().GetCode() != 131026 {
		t.Fatalf("messages %v", list)
	}
	got := b.events(t)
	if len(got) != 2 || got[0].typ != EventSent || got[1].typ != EventFailed || got[1].data["messageId"] != sent.GetMessageId() {
		t.Fatalf("events %v", got)
	}
	if e, _ := got[1].data["error"].(map[string]any); e["code"] != float64(131026) || e["message"] == "" {
		t.Fatalf("failed data %v", got[1].data)
	}
}

func TestConversationsAreTheBusinesssAndItsAppsAndThePersonsOwnOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	acct, phone := b.channel(t)
	conv := b.writes(t, phone, "hi").GetConversationId()
	list := must[*extmsgv1.ListConversationsResponse](t, b, procConvs, token(owner, devApp), &extmsgv1.ListConversationsRequest{AccountId: acct})
	if len(list.GetData()) != 1 || list.GetData()[0].GetId() != conv || list.GetData()[0].GetUserId() != person || list.GetData()[0].GetWindowExpiresAt() == "" {
		t.Fatalf("conversations %v", list)
	}
	refusals := []struct {
		rule                  string
		proc                  string
		who                   sdk.Principal
		req                   any
		status, code, subcode int
	}{
		{"another business's user does not see the account's conversations", procConvs, token(stranger, devApp), &extmsgv1.ListConversationsRequest{AccountId: acct}, 404, 100, 33},
		{"another app of the business is refused the account's conversations", procConvs, token(owner, liveApp), &extmsgv1.ListConversationsRequest{AccountId: acct}, 403, 10, 0},
		{"another business's user does not see the messages", procMessages, token(stranger, devApp), &extmsgv1.ListMessagesRequest{AccountId: acct, ConversationId: conv}, 404, 100, 33},
		{"another business's user cannot send", procSend, token(stranger, devApp), text(acct, person, "hi"), 404, 100, 33},
		{"another app of the business cannot send", procSend, token(owner, liveApp), text(acct, person, "hi"), 403, 10, 0},
		{"another person does not see the person's thread", procUserThread, session(stranger), &extmsgv1.UserThreadRequest{ConversationId: conv}, 404, 100, 33},
		{"another person cannot mark the person's thread read", procRead, session(stranger), &extmsgv1.MarkThreadReadRequest{ConversationId: conv}, 404, 100, 33},
	}
	for _, c := range refusals {
		t.Run(c.rule, func(t *testing.T) {
			var err error
			switch req := c.req.(type) {
			case *extmsgv1.ListConversationsRequest:
				_, err = call[*extmsgv1.ListConversationsResponse](t, b, c.proc, c.who, req)
			case *extmsgv1.ListMessagesRequest:
				_, err = call[*extmsgv1.ListMessagesResponse](t, b, c.proc, c.who, req)
			case *extmsgv1.SendMessageRequest:
				_, err = call[*extmsgv1.SendMessageResponse](t, b, c.proc, c.who, req)
			case *extmsgv1.UserThreadRequest:
				_, err = call[*extmsgv1.UserThreadResponse](t, b, c.proc, c.who, req)
			case *extmsgv1.MarkThreadReadRequest:
				_, err = call[*extmsgv1.MarkThreadReadResponse](t, b, c.proc, c.who, req)
			}
			plugintest.WantRefusal(t, err, c.status, c.code, c.subcode)
		})
	}
	t.Run("a conversation of another account is not found through this one", func(t *testing.T) {
		other := b.signup(t, liveApp)
		_, err := call[*extmsgv1.ListMessagesResponse](t, b, procMessages, token(owner, liveApp), &extmsgv1.ListMessagesRequest{AccountId: other, ConversationId: conv})
		plugintest.WantRefusal(t, err, 404, 100, 33)
	})
	threads := must[*extmsgv1.UserThreadsResponse](t, b, procThreads, session(person), &extmsgv1.UserThreadsRequest{})
	if len(threads.GetThreads()) != 1 || threads.GetThreads()[0].GetPhoneNumber() != phone {
		t.Fatalf("threads %v", threads)
	}
	if other := must[*extmsgv1.UserThreadsResponse](t, b, procThreads, session(stranger), &extmsgv1.UserThreadsRequest{}); len(other.GetThreads()) != 0 {
		t.Fatalf("another person's threads %v", other)
	}
}

// A person who leaves takes their conversations with businesses and every
// message in them; the businesses' accounts and templates stay.
func TestAPersonWhoLeftHasNoConversationsWithBusinessesLeft(t *testing.T) {
	t.Parallel()
	b := setup(t)
	acct, phone := b.channel(t)
	b.writes(t, phone, "hi")
	must[*extmsgv1.SendMessageResponse](t, b, procSend, token(owner, devApp), text(acct, person, "Hello!"))
	leavetest.Leave(t, b.tp, person)
	leavetest.Leave(t, b.tp, person) // idempotent
	for query, want := range map[string]int{
		`SELECT count(*) FROM extmsg.conversations`: 0,
		`SELECT count(*) FROM extmsg.messages`:      0,
		`SELECT count(*) FROM extmsg.accounts`:      1,
		`SELECT count(*) FROM extmsg.templates`:     1,
	} {
		var n int
		if err := b.pool.QueryRow(context.Background(), query).Scan(&n); err != nil || n != want {
			t.Errorf("%s = %d (%v), want %d", query, n, err, want)
		}
	}
	t.Run("only the gateway may tell the plugin someone left", func(t *testing.T) {
		err := leavetest.Call(t.Context(), b.tp, session(owner), person)
		plugintest.WantRefusal(t, err, 403, 200, 0)
	})
}
