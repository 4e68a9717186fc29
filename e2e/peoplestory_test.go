package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/pgtest"
)

// The "done when" of issue #30, as one story through the public APIs of a
// platform started empty (--no-dev-seed): two people sign up; Ana creates
// and publishes a Page, registers an app and links it to the Page with her
// own OAuth consent; Ben writes to the Page, the app hears it on its
// webhook and answers with the send API; the Page's ownership goes from Ana
// to Ben and back; Ben blocks and unblocks the Page, reports it (staff
// restrict it), authorizes the app and removes it (the app's data deletion
// callback verifies Meta's signed request; Ben sees its confirmation), and
// leaves: nothing of his stays in any plugin's tables, his session and
// tokens are refused, and signing in fails as for nobody. Every refusal of
// CONTRACT §16, and those of §15 a person meets, is provoked on the way.
func TestAPlatformStartedEmptyIsJoinedManagedAndLeftThroughItsAPIs(t *testing.T) {
	t.Parallel()
	t.Run("with sign-up closed nobody joins", func(t *testing.T) {
		t.Parallel()
		closed := gatewaytest.Start(t, gatewaytest.Options{Args: []string{"--no-dev-seed", "--signup", "closed"}})
		res, body := signUp(t, closed, map[string]any{"username": "ana", "password": "a long enough secret", "name": "Ana"})
		wantGraphError(t, res, body, 403, 200, 0)
	})
	t.Run("the story", func(t *testing.T) {
		t.Parallel()
		peopleStory(t)
	})
}

func peopleStory(t *testing.T) {
	db := pgtest.NewDatabase(t)
	// The app's receivers are on loopback: the operator allows it.
	g := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: db, Args: []string{"--no-dev-seed", "--webhook-allow-loopback"}})
	// Without a seed, the operator finds the generated admin token in the
	// data folder.
	raw, err := os.ReadFile(filepath.Join(g.DataDir, "admin-token"))
	if err != nil {
		t.Fatal(err)
	}
	admin := strings.TrimSpace(string(raw))
	// The story's world is filled in as the people make it: the Page and
	// the app are Ana's, not a seed's.
	gw := &graphWorld{g: g, db: db, c: gatewaytest.Credentials{AdminToken: admin}}
	w := &pagesWorld{graphWorld: gw}
	if n := dbCount(t, db, `SELECT (SELECT count(*) FROM core.users) + (SELECT count(*) FROM core.pages) + (SELECT count(*) FROM core.apps)`); n != 0 {
		t.Fatalf("the platform did not start empty: %d users, Pages and apps", n)
	}

	// 1. Joining. Every refusal names its field and makes no account.
	for _, tc := range []struct{ rule, username, password, field string }{
		{"a username of 2 characters", "ab", "a long enough secret", "username"},
		{"a username of 65 characters", strings.Repeat("b", 65), "a long enough secret", "username"},
		{"a username with an upper-case letter", "Ana", "a long enough secret", "username"},
		{"a password of 9 code points", "ana", "ñññññññññ", "password"},
		{"a common password", "ana", "password123", "password"},
	} {
		res, body := signUp(t, g, map[string]any{"username": tc.username, "password": tc.password, "name": "Ana"})
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, tc.field) {
			t.Fatalf("%s: the refusal does not name %s: %s", tc.rule, tc.field, body)
		}
	}
	ana := mustSignUp(t, g, "ana", "Ana Owner")
	res, body := signUp(t, g, map[string]any{"username": "ana", "password": "another long secret", "name": "Impostor"})
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "username") {
		t.Fatalf("a taken username: %s", body)
	}
	ben := mustSignUp(t, g, "ben", "Ben Customer")
	cleo := mustSignUp(t, g, "cleo", "Cleo Editor")
	sam := mustSignUp(t, g, "sam", "Sam Staff")
	if n := dbCount(t, db, `SELECT count(*) FROM core.users`); n != 4 {
		t.Fatalf("%d accounts after four sign-ups and six refusals", n)
	}

	// Staff: only the operator's admin token makes Sam staff.
	res, body = setStaff(t, g, sam.SessionToken, sam.UserID, `{"staff":true}`)
	wantGraphError(t, res, body, 403, 200, 2069006)
	res, body = setStaff(t, g, "", sam.UserID, `{"staff":true}`)
	wantGraphError(t, res, body, 401, 104, 0)
	if res, body := setStaff(t, g, admin, sam.UserID, `{"staff":true}`); res.StatusCode != 200 {
		t.Fatalf("the operator makes Sam staff: %d %s", res.StatusCode, body)
	}

	// 2. Ana's Page: new, it is unpublished and nobody can write to it.
	page := decode[struct{ ID string }](t, w.mustPost(t, ana.SessionToken,
		map[string]any{"node": "me/pages", "name": "Ana's Bakery", "category": "Bakery"})).ID
	gw.c.Page.ID, gw.c.Page.Name = page, "Ana's Bakery"
	res, body = w.post(t, ana.SessionToken, map[string]any{"node": "me/pages", "name": "Ana's Second"}, nil)
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "category") {
		t.Fatalf("a Page without a category: %s", body)
	}
	pageNode, roles := "page/"+page, "page/"+page+"/roles"
	res, body = w.mobile(t, ben.SessionToken, "/api/mobile/svcchat/page-messaging/messages", `{"pageId":"`+page+`","text":"Open?"}`)
	wantGraphError(t, res, body, 403, 10, 2018304)
	// Ben manages nothing of it.
	res, body = w.post(t, ben.SessionToken, map[string]any{"node": pageNode, "published": true}, nil)
	wantGraphError(t, res, body, 403, 200, 2069003)
	res, body = w.get(t, ben.SessionToken, url.Values{"node": {roles}})
	wantGraphError(t, res, body, 403, 200, 2069003)
	res, body = w.post(t, ana.SessionToken, map[string]any{"node": pageNode, "inbox_merge_linked": "on"}, nil)
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "inbox_merge_linked") {
		t.Fatalf("a setting of the wrong type: %s", body)
	}
	w.mustPost(t, ana.SessionToken, map[string]any{"node": pageNode, "published": true, "chat_surfacing": true, "inbox_merge_linked": true})

	// Ana's app, linked to the Page with her consent (a Page admin's user
	// token of the app links the app).
	app := decode[createdApp](t, w.mustPost(t, ana.SessionToken, map[string]any{"node": "me/apps", "name": "Bakery bot",
		"redirect_uris": []string{lifecycleRedirect}, "products": []string{"svcchat"}}))
	gw.c.App.ID, gw.c.App.ClientID, gw.c.App.ClientSecret, gw.c.App.APIKey = app.ID, app.ClientID, app.ClientSecret, app.APIKey
	bot := appToken(t, gw, "svcchat:send svcchat:read")
	cw := &chatWorld{graphWorld: gw, consumerID: ben.UserID, consumer: ben.SessionToken, owner: ana.SessionToken, app: bot}
	res, body = cw.session(t, "Welcome!")
	wantGraphError(t, res, body, 403, 10, 2018303) // not linked yet

	anaToken := w.userToken(t, app, "ana", "pages:read", "pages:manage")
	res, body = w.post(t, anaToken, map[string]any{"node": "me/pages", "name": "Ana's Other", "category": "Bakery"}, nil)
	wantGraphError(t, res, body, 403, 200, 2069001) // creating a Page is first-party
	links := "app/" + app.ID + "/page_links"
	w.mustPost(t, anaToken, map[string]any{"node": links, "page_id": page, "products": []string{"svcchat"}})

	// The app's webhook and its data deletion callback, both on loopback.
	hooks := newHookReceiver(t, app.ClientSecret)
	res, body = w.post(t, app.APIKey, map[string]any{"node": "app/" + app.ID + "/subscriptions", "callback_url": hooks.srv.URL + "/hook",
		"events": []string{"book.post.created"}, "verify_token": hookVerifyToken}, nil)
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "events") {
		t.Fatalf("a subscription to a product the app lacks: %s", body)
	}
	w.mustPost(t, app.APIKey, map[string]any{"node": "app/" + app.ID + "/subscriptions", "callback_url": hooks.srv.URL + "/hook",
		"events": []string{"page.message.received"}, "verify_token": hookVerifyToken})
	deletions := newDeletionReceiver(t, app.ClientSecret)
	res, body = w.post(t, app.APIKey, map[string]any{"node": "app/" + app.ID, "data_deletion_callback_url": deletions.URL + "/deletion"}, nil)
	wantGraphError(t, res, body, 403, 200, 2069001) // a team Admin's session sets it, not the app
	res, body = w.post(t, ana.SessionToken, map[string]any{"node": "app/" + app.ID, "data_deletion_callback_url": "http://bakery.example/deletion"}, nil)
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "data_deletion_callback_url") {
		t.Fatalf("a plain-http callback off loopback: %s", body)
	}
	w.mustPost(t, ana.SessionToken, map[string]any{"node": "app/" + app.ID, "data_deletion_callback_url": deletions.URL + "/deletion"})

	// 3. Ben writes to the Page; the app hears it and answers.
	conv, _ := cw.write(t, "Do you have rye bread today?")
	heard := hooks.waitForData("page.message.received", "conversationId", conv)
	if heard.body.Data["userId"] != ben.UserID || heard.body.Data["text"] != "Do you have rye bread today?" || heard.body.AppID != app.ID {
		t.Fatalf("the app heard %s", heard.raw)
	}
	res, body = w.post(t, bot, map[string]any{"node": cw.messagesNode(), "recipient_user_id": heard.body.Data["userId"], "text": "Yes, until noon."}, nil)
	wantSent(t, first(res, body), ben.UserID)
	if inbox, chats := cw.pageThreads(t); inbox != 1 || chats != 1 {
		t.Fatalf("Ben's inbox has %d Page threads, his chats list %d", inbox, chats)
	}

	// 4. Roles change hands. An editor may reply but not manage.
	w.mustPost(t, ana.SessionToken, map[string]any{"node": roles, "user_id": cleo.UserID, "role": "editor"})
	res, body = w.mobile(t, cleo.SessionToken, "/api/mobile/svcchat/page-messaging/reply", `{"conversationId":"`+conv+`","text":"Rye is fresh."}`)
	if res.StatusCode != 200 {
		t.Fatalf("the editor's reply: %d %s", res.StatusCode, body)
	}
	for _, tc := range []struct {
		rule string
		call func() (*http.Response, []byte)
	}{
		{"an editor does not change the Page's settings", func() (*http.Response, []byte) {
			return w.post(t, cleo.SessionToken, map[string]any{"node": pageNode, "chat_surfacing": false}, nil)
		}},
		{"an editor does not grant roles", func() (*http.Response, []byte) {
			return w.post(t, cleo.SessionToken, map[string]any{"node": roles, "user_id": ben.UserID, "role": "editor"}, nil)
		}},
		{"an editor does not remove roles", func() (*http.Response, []byte) { return w.del(t, cleo.SessionToken, roles+"/"+ana.UserID, nil) }},
		{"an editor does not link apps", func() (*http.Response, []byte) {
			return w.post(t, cleo.SessionToken, map[string]any{"node": links, "page_id": page, "products": []string{"svcchat"}}, nil)
		}},
		{"a customer does not reply as the Page", func() (*http.Response, []byte) {
			return w.mobile(t, ben.SessionToken, "/api/mobile/svcchat/page-messaging/reply", `{"conversationId":"`+conv+`","text":"me"}`)
		}},
	} {
		res, body := tc.call()
		if res.StatusCode != 403 || decode[graphError](t, body).Error.Subcode != 2069003 {
			t.Fatalf("%s: %d %s", tc.rule, res.StatusCode, body)
		}
	}
	w.mustPost(t, ana.SessionToken, map[string]any{"node": roles, "user_id": ben.UserID, "role": "admin"})
	res, body = w.post(t, ben.SessionToken, map[string]any{"node": roles, "user_id": ben.UserID, "role": "owner"}, nil)
	wantGraphError(t, res, body, 403, 200, 2069003) // only an owner grants owner
	res, body = w.del(t, ben.SessionToken, roles+"/"+ana.UserID, nil)
	wantGraphError(t, res, body, 403, 200, 2069003) // an admin does not remove an owner
	res, body = w.post(t, ben.SessionToken, map[string]any{"node": roles, "user_id": cleo.UserID, "role": "reviewer"}, nil)
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "role") {
		t.Fatalf("an unknown role: %s", body)
	}
	lastOwner := func(session, userID string) {
		t.Helper()
		res, body := w.del(t, session, roles+"/"+userID, nil)
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "last owner") {
			t.Fatalf("the last owner leaving the Page: %s", body)
		}
	}
	lastOwner(ana.SessionToken, ana.UserID)
	res, body = w.post(t, ana.SessionToken, map[string]any{"node": roles, "user_id": ana.UserID, "role": "admin"}, nil)
	wantGraphError(t, res, body, 400, 100, 0) // nor step down to admin
	res, body = w.post(t, ana.SessionToken, map[string]any{"node": roles, "user_id": "424242424242", "role": "editor"}, nil)
	wantGraphError(t, res, body, 404, 100, 33)
	w.mustPost(t, ana.SessionToken, map[string]any{"node": roles, "user_id": ben.UserID, "role": "owner"})
	w.mustDel(t, ana.SessionToken, roles+"/"+ana.UserID) // Ana steps down
	res, body = w.post(t, ana.SessionToken, map[string]any{"node": pageNode, "chat_surfacing": true}, nil)
	wantGraphError(t, res, body, 403, 200, 2069003)
	lastOwner(ben.SessionToken, ben.UserID)
	w.mustPost(t, ben.SessionToken, map[string]any{"node": roles, "user_id": ana.UserID, "role": "owner"})
	w.mustDel(t, ana.SessionToken, roles+"/"+ben.UserID) // and has Ben removed
	list := decode[struct {
		Data []struct {
			UserID string `json:"user_id"`
			Role   string `json:"role"`
		} `json:"data"`
	}](t, w.mustGet(t, ana.SessionToken, roles))
	if got := fmt.Sprint(list.Data); got != fmt.Sprintf("[{%s owner} {%s editor}]", ana.UserID, cleo.UserID) {
		t.Fatalf("roles after the hand-over and back: %s", got)
	}
	res, body = w.get(t, ben.SessionToken, url.Values{"node": {roles}})
	wantGraphError(t, res, body, 403, 200, 2069003)

	// 5. Ben blocks the Page: the app's sends are refused and the thread
	// leaves his inbox and chats list; unblocked, both come back.
	blockPage := map[string]string{"pageId": page}
	if res, body := cw.rest(t, "POST", ben.SessionToken, "/api/mobile/blocks", blockPage); res.StatusCode != 200 {
		t.Fatalf("block the Page: %d %s", res.StatusCode, body)
	}
	res, body = cw.session(t, "Still there?")
	wantGraphError(t, res, body, 403, 10, 2018309)
	res, body = cw.template(t, "B-1")
	wantGraphError(t, res, body, 403, 10, 2018309)
	if inbox, chats := cw.pageThreads(t); inbox != 0 || chats != 0 {
		t.Fatalf("with the Page blocked: %d inbox threads, %d in the chats list", inbox, chats)
	}
	if res, body := cw.rest(t, "DELETE", ben.SessionToken, "/api/mobile/blocks?pageId="+page, nil); res.StatusCode != 200 {
		t.Fatalf("unblock the Page: %d %s", res.StatusCode, body)
	}
	wantSent(t, first(cw.session(t, "Still there?")), ben.UserID)
	if inbox, chats := cw.pageThreads(t); inbox != 1 || chats != 1 {
		t.Fatalf("after the unblock: %d inbox threads, %d in the chats list", inbox, chats)
	}

	// Ben blocks Ana: her direct message is answered as one to nobody.
	dm := func(to string) (*http.Response, []byte) {
		return cw.rest(t, "POST", ana.SessionToken, "/api/mobile/chat/messages", map[string]string{"toUserId": to, "text": "Thanks for coming!"})
	}
	if res, body := cw.rest(t, "POST", ben.SessionToken, "/api/mobile/chat/messages", map[string]string{"toUserId": ana.UserID, "text": "Great bread"}); res.StatusCode != 200 {
		t.Fatalf("Ben's direct message: %d %s", res.StatusCode, body)
	}
	if res, body := cw.rest(t, "POST", ben.SessionToken, "/api/mobile/blocks", map[string]string{"userId": ana.UserID}); res.StatusCode != 200 {
		t.Fatalf("block Ana: %d %s", res.StatusCode, body)
	}
	res, body = cw.rest(t, "POST", ben.SessionToken, "/api/mobile/blocks", map[string]string{"userId": ben.UserID})
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "userId") {
		t.Fatalf("Ben blocks himself: %s", body)
	}
	resBlocked, blocked := dm(ben.UserID)
	wantGraphError(t, resBlocked, blocked, 403, 10, 2018309)
	resNobody, nobody := dm("424242424242")
	wantGraphError(t, resNobody, nobody, 403, 10, 2018309)
	if a, b := traceID.ReplaceAll(blocked, nil), traceID.ReplaceAll(nobody, nil); string(a) != string(b) {
		t.Fatalf("a blocked sender learns it: %s, to nobody: %s", a, b)
	}

	// 6. Ben reports the Page; only staff decide; restricted, the Page
	// cannot send.
	res, body = cw.rest(t, "POST", ben.SessionToken, "/api/mobile/reports", map[string]string{"pageId": page, "reason": "Spam offers"})
	report := decode[struct{ ID string }](t, body).ID
	if res.StatusCode != 200 || report == "" {
		t.Fatalf("report: %d %s", res.StatusCode, body)
	}
	const reports = "/api/developers/admin/trust-safety/reports"
	for _, who := range []string{ben.SessionToken, ana.SessionToken} {
		res, body = cw.rest(t, "GET", who, reports, nil)
		wantGraphError(t, res, body, 403, 200, 2069005)
		res, body = cw.rest(t, "POST", who, reports, map[string]string{"id": report, "decision": "dismiss"})
		wantGraphError(t, res, body, 403, 200, 2069005)
	}
	if got := staffQueue(t, g, ben.SessionToken); got != 403 {
		t.Fatalf("the App Review queue answers Ben: %d", got)
	}
	if res, body := cw.rest(t, "POST", sam.SessionToken, reports, map[string]string{"id": report, "decision": "restrict"}); res.StatusCode != 200 {
		t.Fatalf("staff restrict the Page: %d %s", res.StatusCode, body)
	}
	res, body = cw.session(t, "Buy three, get one")
	wantGraphError(t, res, body, 403, 10, 2018310)
	res, body = w.mobile(t, ana.SessionToken, "/api/mobile/svcchat/page-messaging/reply", `{"conversationId":"`+conv+`","text":"Hello?"}`)
	wantGraphError(t, res, body, 403, 10, 2018310)
	res, body = cw.rest(t, "POST", sam.SessionToken, reports, map[string]string{"id": report, "decision": "dismiss"})
	wantGraphError(t, res, body, 409, 10, 2018305)
	if res, body := cw.rest(t, "DELETE", sam.SessionToken, "/api/developers/admin/trust-safety/restrictions?pageId="+page, nil); res.StatusCode != 200 {
		t.Fatalf("staff lift the restriction: %d %s", res.StatusCode, body)
	}
	wantSent(t, first(cw.session(t, "Sorry about that.")), ben.UserID)

	// 7. Ben authorizes Ana's app (he tests it: it is in development) and
	// removes it; the app's callback verifies the signed request and Ben
	// sees its confirmation.
	w.mustPost(t, ana.SessionToken, map[string]any{"node": "app/" + app.ID + "/roles", "user_id": ben.UserID, "role": "tester"})
	res, body = w.post(t, ben.SessionToken, map[string]any{"node": "app/" + app.ID, "data_deletion_callback_url": deletions.URL + "/elsewhere"}, nil)
	wantGraphError(t, res, body, 403, 200, 2069004) // a tester is not the team's Admin
	benToken := w.userToken(t, app, "ben", "public_profile")
	got := decode[authorizedApps](t, w.mustGet(t, benToken, "me/authorized_apps"))
	if len(got.Data) != 1 || got.Data[0].AppID != app.ID || got.Data[0].Name != "Bakery bot" || fmt.Sprint(got.Data[0].Scopes) != "[public_profile]" {
		t.Fatalf("Ben's authorized apps: %+v", got)
	}
	if got := decode[authorizedApps](t, w.mustGet(t, cleo.SessionToken, "me/authorized_apps")); len(got.Data) != 0 {
		t.Fatalf("Cleo sees authorized apps: %+v", got)
	}
	res, body = w.del(t, benToken, "me/authorized_apps/"+app.ID, nil)
	wantGraphError(t, res, body, 403, 200, 2069001) // his session removes, not the app's token
	res, body = w.del(t, cleo.SessionToken, "me/authorized_apps/"+app.ID, nil)
	wantGraphError(t, res, body, 404, 100, 33)
	for _, node := range []string{"me/authorized_apps", "me/data_deletion_requests"} {
		res, body = w.get(t, app.APIKey, url.Values{"node": {node}})
		wantGraphError(t, res, body, 403, 200, 2069001) // a person's, not an app's
	}
	w.mustDel(t, ben.SessionToken, "me/authorized_apps/"+app.ID)
	res, body = w.get(t, benToken, url.Values{"node": {"me"}})
	wantGraphError(t, res, body, 401, 190, 467)
	wantDeletionCallback(t, deletions, ben.UserID)
	var requests deletionRequests
	waitUntil(t, 10*time.Second, "Ben to see the app's confirmation", func() bool {
		requests = decode[deletionRequests](t, w.mustGet(t, ben.SessionToken, "me/data_deletion_requests"))
		return len(requests.Data) == 1 && requests.Data[0].Status == "confirmed"
	})
	if d := requests.Data[0]; d.AppID != app.ID || d.ConfirmationCode != "del-"+ben.UserID {
		t.Fatalf("Ben's deletion request: %+v", d)
	}

	// 8. Ben leaves. Before, he authorizes the app again and leaves traces
	// in the plugins through it (a thread, a card pushed to his glasses);
	// the scan below must see them. He also has a Page of his own, alone.
	benToken = w.userToken(t, app, "ben", "public_profile", "threads_content_publish", "wearables:push")
	w.mustPost(t, benToken, map[string]any{"node": "me/threads", "text": "Best rye in town"})
	if res, body := cw.rest(t, "POST", benToken, pushPath, map[string]any{"userId": ben.UserID, "card": testCard("Rye is ready", "ok")}); res.StatusCode != http.StatusAccepted {
		t.Fatalf("push a card to Ben: %d %s", res.StatusCode, body)
	}
	bikes := decode[struct{ ID string }](t, w.mustPost(t, ben.SessionToken,
		map[string]any{"node": "me/pages", "name": "Ben's Bikes", "category": "Bicycle shop"})).ID
	w.mustPost(t, ben.SessionToken, map[string]any{"node": "page/" + bikes, "published": true, "chat_surfacing": true})
	writeToBikes := func() (*http.Response, []byte) {
		return cw.rest(t, "POST", cleo.SessionToken, "/api/mobile/svcchat/page-messaging/messages", map[string]string{"pageId": bikes, "text": "Open on Sunday?"})
	}
	if res, body := writeToBikes(); res.StatusCode != 200 {
		t.Fatalf("Cleo writes to Ben's Page: %d %s", res.StatusCode, body)
	}
	// Cleo writes to the Page too: her events must outlive Ben's leaving.
	if res, body := cw.rest(t, "POST", cleo.SessionToken, "/api/mobile/svcchat/page-messaging/messages", map[string]string{"pageId": page, "text": "Do you deliver?"}); res.StatusCode != 200 {
		t.Fatalf("Cleo writes to the Page: %d %s", res.StatusCode, body)
	}
	waitUntil(t, 10*time.Second, "the core to hold Ben's and Cleo's events and their deliveries", func() bool {
		b, c := coreRowsNaming(t, db, ben.UserID), coreRowsNaming(t, db, cleo.UserID)
		return b["core.outbox"] > 0 && b["core.webhook_deliveries"] > 0 && b["core.data_deletion_requests"] > 0 &&
			c["core.outbox"] > 0 && c["core.webhook_deliveries"] > 0
	})
	theirs := rowsNaming(t, db, ben.UserID)
	for _, table := range []string{"svcchat.conversations", "svcchat.opt_ins", "svcchat.reports", "chat.direct_threads", "chat.direct_messages",
		"chat.user_blocks", "social.threads", "wearables.cards"} {
		if theirs[table] == 0 {
			t.Fatalf("the scan finds nothing of Ben's in %s: %v", table, theirs)
		}
	}
	res, body = w.del(t, "", "me", nil)
	wantGraphError(t, res, body, 401, 104, 0)
	res, body = w.del(t, benToken, "me", nil)
	wantGraphError(t, res, body, 403, 200, 2069001) // only his own session
	second := signInAt(t, g.URL, "ben", "a long enough secret")
	if body := w.mustDel(t, ben.SessionToken, "me"); string(body) != `{"success":true}` {
		t.Fatalf("leave: %s", body)
	}
	for _, token := range []string{ben.SessionToken, second, benToken} { // his sessions and his token
		res, body := w.get(t, token, url.Values{"node": {"me"}})
		wantGraphError(t, res, body, 401, 190, 467)
	}
	signIn := func(username string) (int, string) {
		b, _ := json.Marshal(map[string]string{"username": username, "password": "a long enough secret"})
		res, body := do(t, "POST", g.URL+"/api/mobile/auth/session", strings.NewReader(string(b)), map[string]string{"Content-Type": "application/json"})
		return res.StatusCode, traceID.ReplaceAllString(string(body), "")
	}
	if gotStatus, gotBody := signIn("ben"); gotStatus == 200 {
		t.Fatal("Ben signs in after leaving")
	} else if wantStatus, wantBody := signIn("nobody.here"); gotStatus != wantStatus || gotBody != wantBody {
		t.Fatalf("signing in as Ben: %d %s; as nobody: %d %s", gotStatus, gotBody, wantStatus, wantBody)
	}
	wantDeletionCallback(t, deletions, ben.UserID)
	waitUntil(t, 20*time.Second, "every plugin to erase Ben", func() bool { return len(rowsNaming(t, db, ben.UserID)) == 0 })
	// The core erases him too: his events, their deliveries and his
	// finished data deletion callbacks; Cleo's events stay.
	waitUntil(t, 20*time.Second, "the core to erase Ben", func() bool { return len(coreRowsNaming(t, db, ben.UserID)) == 0 })
	if c := coreRowsNaming(t, db, cleo.UserID); c["core.outbox"] == 0 || c["core.webhook_deliveries"] == 0 {
		t.Fatalf("Cleo's events went with Ben: %v", c)
	}
	if n := dbCount(t, db, `SELECT count(*) FROM core.users WHERE id = $1`, mustParseInt(t, ben.UserID)); n != 0 {
		t.Fatal("Ben's users row is still there")
	}
	// The Page he alone owned is unpublished; Ana's and the others go on.
	res, body = writeToBikes()
	wantGraphError(t, res, body, 403, 10, 2018304)
	if res, body := cw.rest(t, "POST", cleo.SessionToken, "/api/mobile/svcchat/page-messaging/messages", map[string]string{"pageId": page, "text": "Still open?"}); res.StatusCode != 200 {
		t.Fatalf("Cleo writes to the Page after Ben left: %d %s", res.StatusCode, body)
	}
}

// mustDel deletes node and answers the body of its 200.
func (w *graphWorld) mustDel(t *testing.T, token, node string) []byte {
	t.Helper()
	res, b := w.del(t, token, node, nil)
	if res.StatusCode != 200 {
		t.Fatalf("DELETE %s: %d %s", node, res.StatusCode, b)
	}
	return b
}

// wantDeletionCallback waits for the data deletion callback to verify a
// signed request naming userID.
func wantDeletionCallback(t *testing.T, r *deletionReceiver, userID string) {
	t.Helper()
	select {
	case got := <-r.users:
		if got != userID {
			t.Fatalf("the callback names user %q, want %q", got, userID)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the app's data deletion callback was not called")
	}
}

// rowsNaming counts, per table of every plugin's schema (all but core's),
// the rows with a column holding userID: a number column equal to it, a
// text or JSON column containing it.
func rowsNaming(t *testing.T, dbURL, userID string) map[string]int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `
		SELECT c.table_schema, c.table_name, c.column_name, c.data_type
		FROM information_schema.columns c
		JOIN information_schema.tables tb USING (table_schema, table_name)
		WHERE tb.table_type = 'BASE TABLE' AND c.table_schema NOT IN ('core', 'public', 'information_schema')
		  AND c.table_schema NOT LIKE 'pg\_%'
		  AND c.data_type IN ('bigint', 'text', 'character varying', 'jsonb', 'json')
		ORDER BY 1, 2, 3`)
	if err != nil {
		t.Fatal(err)
	}
	type column struct{ schema, table, name, kind string }
	cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (column, error) {
		var c column
		return c, r.Scan(&c.schema, &c.table, &c.name, &c.kind)
	})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]int{}
	for _, c := range cols {
		cond := fmt.Sprintf("position($1 in %s::text) > 0", pgx.Identifier{c.name}.Sanitize())
		if c.kind == "bigint" {
			cond = fmt.Sprintf("%s::text = $1", pgx.Identifier{c.name}.Sanitize())
		}
		var n int
		q := fmt.Sprintf("SELECT count(*) FROM %s WHERE %s", pgx.Identifier{c.schema, c.table}.Sanitize(), cond)
		if err := conn.QueryRow(ctx, q, userID).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if n > 0 {
			found[c.schema+"."+c.table] += n
		}
	}
	return found
}
