package e2e

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// CONTRACT §15, going live re-reviews templates: a template an app
// approved itself in development becomes pending_review when the app goes
// live and appears in the staff queue; until staff approve it a live send
// is refused with 2018302.
func TestGoingLiveReReviewsTheTemplatesAnAppApprovedItself(t *testing.T) {
	t.Parallel()
	w := newLifecycleWorld(t)
	templates := w.node("svcchat_templates")
	w.mustPost(t, w.session, map[string]any{"node": templates, "name": "pickup", "body": "Ready, {{name}}!", "params": []string{"name"}})
	w.mustPost(t, w.session, map[string]any{"node": templates + "/pickup/approve"})
	w.mustPost(t, w.session, map[string]any{"node": w.node("page_links"), "page_id": w.c.Page.ID, "products": []string{"svcchat"}})

	// App Review approves svcchat:send; the app goes live.
	w.mustPost(t, w.session, map[string]any{"node": w.node("review"), "scopes": []string{"svcchat:send"},
		"use_case":           "Orders bot tells each customer who wrote to the shop when the order is ready for pickup, and nothing else. Nothing is stored beyond the conversation.",
		"privacy_policy_url": "https://orders.example/privacy"})
	if res, body := w.staffREST(t, w.staff, "POST", `{"appId":"`+w.app.ID+`","scope":"svcchat:send","decision":"approve"}`); res.StatusCode != 200 {
		t.Fatalf("approve svcchat:send: %d %s", res.StatusCode, body)
	}
	w.mustPost(t, w.session, map[string]any{"node": w.node(""), "mode": "live"})

	type queued struct{ ID, AppID, Name, Status string }
	queue := func() []queued {
		res, body := do(t, "GET", w.g.URL+"/api/developers/admin/svcchat/template-queue", nil, map[string]string{"Authorization": "Bearer " + w.staff})
		if res.StatusCode != 200 {
			t.Fatalf("template queue: %d %s", res.StatusCode, body)
		}
		return decode[struct{ Data []queued }](t, body).Data
	}
	i := slices.IndexFunc(queue(), func(q queued) bool { return q.AppID == w.app.ID && q.Name == "pickup" })
	if i < 0 {
		t.Fatalf("the self-approved template is not in the staff queue once the app is live: %+v", queue())
	}
	if q := queue()[i]; q.Status != "pending_review" {
		t.Fatalf("queued %+v", q)
	}

	// A consumer writes to the Page (an opt-in); the live app sends.
	consumer := w.c.Users["consumer"]
	session := signInAt(t, w.g.URL, consumer.Username, consumer.Password)
	if res, body := do(t, "POST", w.g.URL+"/api/mobile/svcchat/page-messaging/messages", strings.NewReader(`{"pageId":"`+w.c.Page.ID+`","text":"Is my order ready?"}`),
		map[string]string{"Authorization": "Bearer " + session, "Content-Type": "application/json"}); res.StatusCode != 200 {
		t.Fatalf("the consumer writes: %d %s", res.StatusCode, body)
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {w.app.ClientID}, "client_secret": {w.app.ClientSecret}, "scope": {"svcchat:send"}}
	res, body := do(t, "POST", w.g.URL+"/api/oauth/token", strings.NewReader(form.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	token := decode[struct {
		AccessToken string `json:"access_token"`
	}](t, body).AccessToken
	if res.StatusCode != 200 || token == "" {
		t.Fatalf("client_credentials: %d %s", res.StatusCode, body)
	}
	send := map[string]any{"node": "page/" + w.c.Page.ID + "/messages", "to": consumer.ID, "type": "template",
		"templateName": "pickup", "templateParams": map[string]any{"name": "Casey"}}
	res, body = w.post(t, token, send, nil)
	wantGraphError(t, res, body, http.StatusForbidden, 10, 2018302)

	// Staff approve it; the send goes.
	if res, body := do(t, "POST", w.g.URL+"/api/developers/admin/svcchat/template-queue", strings.NewReader(`{"id":"`+queue()[i].ID+`","decision":"approve"}`),
		map[string]string{"Authorization": "Bearer " + w.staff, "Content-Type": "application/json"}); res.StatusCode != 200 {
		t.Fatalf("staff approve: %d %s", res.StatusCode, body)
	}
	if res, body := w.post(t, token, send, nil); res.StatusCode != 200 {
		t.Fatalf("the send after staff approval: %d %s", res.StatusCode, body)
	}
}
