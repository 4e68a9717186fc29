package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// extmsgWorld is a running gateway where the seeded business, Demo Coffee
// Co., whose admin is the owner, has connected the seeded app to a
// messaging account by embedded signup, and the app's webhook endpoint
// subscribed to the extmsg events. The consumer is a person of the
// messaging app (their own session); their user token with the scope is
// of a person with no role on the business.
type extmsgWorld struct {
	*graphWorld
	rcv                     *hookReceiver
	business, otherBusiness string // user tokens with extmsg_business_management
	unscoped                string // the owner's token without it
	person, personID        string // the consumer's session and id
	account, phone          string
}

func newExtmsgWorld(t *testing.T) *extmsgWorld {
	t.Helper()
	gw := newGraphWorld(t)
	w := &extmsgWorld{graphWorld: gw,
		business:      gw.g.UserToken(t, "owner", "extmsg_business_management"),
		otherBusiness: gw.g.UserToken(t, "consumer", "extmsg_business_management"),
		unscoped:      gw.g.UserToken(t, "owner", "public_profile"),
		person:        signIn(t, gw, "consumer"),
		personID:      gw.c.Users["consumer"].ID,
	}
	w.rcv = newHookReceiver(t, w.c.App.ClientSecret)
	res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + w.c.App.ID + "/subscriptions",
		"callback_url": w.rcv.srv.URL + "/hook", "verify_token": hookVerifyToken,
		"events": []string{"extmsg.message.received", "extmsg.message.sent", "extmsg.message.delivered", "extmsg.message.read", "extmsg.message.failed"}}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}
	signup := w.ok(t, "POST", "/api/v1/business/extmsg/embedded-signup", w.business,
		fmt.Sprintf(`{"businessId":"%s","appId":"%s","displayName":"Demo Coffee"}`, w.c.Business.ID, w.c.App.ID))
	w.account, w.phone = signup["accountId"].(string), signup["phoneNumber"].(string)
	if signup["status"] != "connected" || !strings.HasPrefix(w.phone, "+1555") {
		t.Fatalf("embedded signup answered %v", signup)
	}
	return w
}

func (w *extmsgWorld) call(t *testing.T, method, path, token, body string) (*http.Response, []byte) {
	t.Helper()
	h := map[string]string{}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	if body == "" {
		return do(t, method, w.g.URL+path, nil, h)
	}
	h["Content-Type"] = "application/json"
	return do(t, method, w.g.URL+path, strings.NewReader(body), h)
}

func (w *extmsgWorld) ok(t *testing.T, method, path, token, body string) map[string]any {
	t.Helper()
	res, out := w.call(t, method, path, token, body)
	if res.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, out)
	}
	return decode[map[string]any](t, out)
}

func (w *extmsgWorld) messagesPath() string {
	return "/api/v1/business/extmsg/accounts/" + w.account + "/messages"
}

func textTo(to, body string) string {
	b, _ := json.Marshal(map[string]any{"to": to, "type": "text", "text": map[string]any{"body": body}})
	return string(b)
}

func templateTo(to, name string, params map[string]string) string {
	b, _ := json.Marshal(map[string]any{"to": to, "type": "template", "template": map[string]any{"name": name, "params": params}})
	return string(b)
}

// The messaging-app channel played through the public API: embedded
// signup gives a channel identity; an approved template is sent and a
// draft refused; free-form text is refused until the person writes (their
// message reaching the app's webhook), then sent; the person's app
// delivers and reads it, each status reaching the app's webhook, signed;
// the app reads the conversation and its messages, which another
// business's token, a token without the scope and no token cannot.
func TestTheMessagingAppChannelSendsTemplatesAndTextInsideTheWindowAndReportsStatuses(t *testing.T) {
	t.Parallel()
	w := newExtmsgWorld(t)
	templates := "/api/v1/business/extmsg/templates"
	w.ok(t, "POST", templates, w.business, `{"accountId":"`+w.account+`","name":"shipping","body":"Order {{order_id}} shipped.","params":["order_id"]}`)
	w.ok(t, "POST", templates+"/shipping/approve", w.business, `{"accountId":"`+w.account+`"}`)
	w.ok(t, "POST", templates, w.business, `{"accountId":"`+w.account+`","name":"receipt","body":"Thanks!"}`)

	res, body := w.call(t, "POST", w.messagesPath(), w.business, templateTo(w.personID, "receipt", nil))
	wantGraphError(t, res, body, 403, 10, 2018302)
	res, body = w.call(t, "POST", w.messagesPath(), w.business, templateTo(w.personID, "nothing", nil))
	wantGraphError(t, res, body, 404, 132001, 0)
	res, body = w.call(t, "POST", w.messagesPath(), w.business, templateTo(w.personID, "shipping", nil))
	wantGraphError(t, res, body, 400, 132000, 0)
	tmpl := w.ok(t, "POST", w.messagesPath(), w.business, templateTo(w.personID, "shipping", map[string]string{"order_id": "A-1"}))
	if tmpl["status"] != "sent" || tmpl["messageId"] == nil {
		t.Fatalf("template send answered %v", tmpl)
	}

	res, body = w.call(t, "POST", w.messagesPath(), w.business, textTo(w.personID, "Anything else?"))
	if e := wantGraphError(t, res, body, 400, 10, 2018278); !strings.Contains(e.Error.Message, "24 hours") {
		t.Fatalf("the window refusal does not say why: %s", body)
	}

	wrote := w.ok(t, "POST", "/api/mobile/extmsg/messages", w.person, `{"to":"`+w.phone+`","text":"Where is my order?"}`)
	conv := wrote["conversationId"].(string)
	if conv != tmpl["conversationId"] {
		t.Fatalf("the person's message opened conversation %s, the template went to %v", conv, tmpl["conversationId"])
	}
	got := w.rcv.waitForData("extmsg.message.received", "messageId", wrote["messageId"].(string))
	if got.body.AppID != w.c.App.ID || got.body.Data["text"] != "Where is my order?" || got.body.Data["userId"] != w.personID ||
		got.body.Data["phoneNumber"] != w.phone || got.body.Data["conversationId"] != conv {
		t.Fatalf("extmsg.message.received %+v", got.body)
	}

	text := w.ok(t, "POST", w.messagesPath(), w.business, textTo(w.personID, "It left this morning."))
	id := text["messageId"].(string)
	w.rcv.waitForData("extmsg.message.sent", "messageId", id)

	thread := w.ok(t, "GET", "/api/mobile/extmsg/threads/"+conv, w.person, "")
	if msgs := thread["messages"].([]any); len(msgs) != 3 || thread["phoneNumber"] != w.phone || thread["businessName"] != "Demo Coffee" {
		t.Fatalf("the person's thread %v", thread)
	}
	if d := w.rcv.waitForData("extmsg.message.delivered", "messageId", id); d.body.Data["status"] != "delivered" || d.body.Data["conversationId"] != conv {
		t.Fatalf("extmsg.message.delivered %+v", d.body)
	}
	if read := w.ok(t, "POST", "/api/mobile/extmsg/threads/"+conv+"/read", w.person, "{}"); read["read"] != float64(2) {
		t.Fatalf("read answered %v, want the template and the text read", read)
	}
	if r := w.rcv.waitForData("extmsg.message.read", "messageId", id); r.body.Data["status"] != "read" || r.body.AppID != w.c.App.ID {
		t.Fatalf("extmsg.message.read %+v", r.body)
	}

	t.Run("the account's app reads the conversation and its messages", func(t *testing.T) {
		convs := w.ok(t, "GET", "/api/v1/business/extmsg/accounts/"+w.account+"/conversations", w.business, "")["data"].([]any)
		if len(convs) != 1 || convs[0].(map[string]any)["id"] != conv || convs[0].(map[string]any)["userId"] != w.personID ||
			convs[0].(map[string]any)["windowExpiresAt"] == nil {
			t.Fatalf("conversations %v", convs)
		}
		msgs := w.ok(t, "GET", "/api/v1/business/extmsg/accounts/"+w.account+"/conversations/"+conv+"/messages", w.business, "")["data"].([]any)
		if len(msgs) != 3 {
			t.Fatalf("messages %v", msgs)
		}
		newest := msgs[0].(map[string]any)
		if newest["id"] != id || newest["status"] != "read" || newest["direction"] != "outbound" || newest["text"] != "It left this morning." {
			t.Fatalf("newest message %v", newest)
		}
	})

	t.Run("no one else reads or sends as the account", func(t *testing.T) {
		for _, path := range []string{"/api/v1/business/extmsg/accounts/" + w.account + "/conversations",
			"/api/v1/business/extmsg/accounts/" + w.account + "/conversations/" + conv + "/messages"} {
			res, body := w.call(t, "GET", path, w.otherBusiness, "")
			wantGraphError(t, res, body, 404, 100, 33)
			res, body = w.call(t, "GET", path, w.unscoped, "")
			wantGraphError(t, res, body, 403, 10, 2069002)
			res, body = w.call(t, "GET", path, "", "")
			wantGraphError(t, res, body, 401, 104, 0)
		}
		res, body := w.call(t, "POST", w.messagesPath(), w.otherBusiness, textTo(w.personID, "hi"))
		wantGraphError(t, res, body, 404, 100, 33)
		res, body = w.call(t, "POST", w.messagesPath(), w.unscoped, textTo(w.personID, "hi"))
		wantGraphError(t, res, body, 403, 10, 2069002)
		res, body = w.call(t, "POST", w.messagesPath(), w.c.App.APIKey, textTo(w.personID, "hi"))
		wantGraphError(t, res, body, 403, 200, 2069001)
	})

	t.Run("the person's side is their own session's only", func(t *testing.T) {
		res, body := w.call(t, "GET", "/api/mobile/extmsg/threads/"+conv, signIn(t, w.graphWorld, "owner"), "")
		wantGraphError(t, res, body, 404, 100, 33)
		res, body = w.call(t, "POST", "/api/mobile/extmsg/messages", w.otherBusiness, `{"to":"`+w.phone+`","text":"hi"}`)
		wantGraphError(t, res, body, 403, 200, 2069001)
		res, body = w.call(t, "POST", "/api/mobile/extmsg/messages", w.person, `{"to":"+15559999999","text":"hi"}`)
		wantGraphError(t, res, body, 404, 100, 33)
	})

	if n := dbCount(t, w.db, `SELECT count(*) FROM extmsg.messages`); n != 3 {
		t.Errorf("%d messages stored, want 3: nothing refused was stored", n)
	}
}

// A message to someone who is not a user of the messaging app is accepted
// as sent and then fails: extmsg.message.failed reaches the app's webhook
// with WhatsApp's 131026, and the app reads the message as failed.
func TestAMessageToAnUndeliverableRecipientFailsAndTheAppsWebhookSaysWhy(t *testing.T) {
	t.Parallel()
	w := newExtmsgWorld(t)
	w.ok(t, "POST", "/api/v1/business/extmsg/templates", w.business, `{"accountId":"`+w.account+`","name":"hello","body":"Hello!"}`)
	w.ok(t, "POST", "/api/v1/business/extmsg/templates/hello/approve", w.business, `{"accountId":"`+w.account+`"}`)
	const nobody = "1999999999"
	sent := w.ok(t, "POST", w.messagesPath(), w.business, templateTo(nobody, "hello", nil))
	id := sent["messageId"].(string)
	w.rcv.waitForData("extmsg.message.sent", "messageId", id)
	failed := w.rcv.waitForData("extmsg.message.failed", "messageId", id)
	if e, _ := failed.body.Data["error"].(map[string]any); failed.body.Data["status"] != "failed" || failed.body.Data["userId"] != nobody ||
		e["code"] != float64(131026) || e["message"] == "" {
		t.Fatalf("extmsg.message.failed %+v", failed.body)
	}
	msgs := w.ok(t, "GET", "/api/v1/business/extmsg/accounts/"+w.account+"/conversations/"+sent["conversationId"].(string)+"/messages",
		w.business, "")["data"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["status"] != "failed" {
		t.Fatalf("messages %v", msgs)
	}
	if n := len(w.rcv.all("extmsg.message.delivered")); n != 0 {
		t.Fatalf("%d delivered events for an undeliverable message", n)
	}
}

// Embedded signup is an act of a business's admin (CONTRACT §17), and the
// account it makes is the business's: a person with no role on the
// business and its employee are refused signing up, and once employee the
// person reads the account's conversations with a token of its app.
func TestEmbeddedSignupIsForABusinessesAdminsAndItsAccountForItsPeople(t *testing.T) {
	t.Parallel()
	w := newExtmsgWorld(t)
	signup := "/api/v1/business/extmsg/embedded-signup"
	body := fmt.Sprintf(`{"businessId":"%s","appId":"%s","displayName":"Mine"}`, w.c.Business.ID, w.c.App.ID)
	convs := "/api/v1/business/extmsg/accounts/" + w.account + "/conversations"
	res, out := w.call(t, "POST", signup, w.otherBusiness, body)
	wantGraphError(t, res, out, 403, 200, 2069003)
	res, out = w.call(t, "POST", signup, w.business, fmt.Sprintf(`{"businessId":"9999999999","appId":"%s","displayName":"Mine"}`, w.c.App.ID))
	wantGraphError(t, res, out, 404, 100, 33)

	w.mustPost(t, signIn(t, w.graphWorld, "owner"), map[string]any{"node": "business/" + w.c.Business.ID + "/roles",
		"user_id": w.personID, "role": "employee"})
	res, out = w.call(t, "POST", signup, w.otherBusiness, body)
	wantGraphError(t, res, out, 403, 200, 2069003)
	if data, ok := w.ok(t, "GET", convs, w.otherBusiness, "")["data"].([]any); !ok || len(data) != 0 {
		t.Fatalf("the employee reads %v", data)
	}
}
