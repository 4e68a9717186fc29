package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/svcplatform/svc/internal/pgtest"
)

// A person who signed up, authorized an app and used the platform leaves
// (CONTRACT §16): only their own session may ask it; afterwards every
// session and token of theirs is refused at once, signing in fails
// exactly as for an unknown user, and the app they authorized receives its
// data deletion callback.
func TestAPersonLeaves(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	w := newLifecycleWorldOn(t, db)
	recv := newDeletionReceiver(t, w.app.ClientSecret)
	w.mustPost(t, w.session, map[string]any{"node": w.node(""), "data_deletion_callback_url": recv.URL + "/deletion"})

	const password = "a long enough secret"
	me := mustSignUp(t, w.g, "lena.leaver", "Lena Leaver")
	// The app is in development: the person tests it.
	w.mustPost(t, w.session, map[string]any{"node": w.node("roles"), "user_id": me.UserID, "role": "tester"})
	cfg := w.oauthConfig(w.app.ClientSecret, lifecycleRedirect, "public_profile")
	cb, verifier := w.authorize(t, cfg, "lena.leaver", password)
	tok, err := w.exchange(t, cfg, cb, verifier)
	if err != nil {
		t.Fatal(err)
	}
	second := signInAt(t, w.g.URL, "lena.leaver", password)

	// The owner's business has a messaging-app channel the person writes to.
	owner := w.c.Users["owner"]
	res, body := do(t, "POST", w.g.URL+"/api/v1/business/extmsg/embedded-signup",
		strings.NewReader(`{"businessId":"`+w.c.Business.ID+`","appId":"`+w.c.App.ID+`","displayName":"Demo Coffee"}`),
		map[string]string{"Authorization": "Bearer " + signInAt(t, w.g.URL, owner.Username, owner.Password), "Content-Type": "application/json"})
	if res.StatusCode != 200 {
		t.Fatalf("embedded signup: %d %s", res.StatusCode, body)
	}
	phone := decode[map[string]any](t, body)["phoneNumber"].(string)

	// The person uses the products: writes to the seeded Page and opts in
	// to its messages, blocks someone, reports the Page, and writes to a
	// business on the messaging app.
	for _, r := range []struct{ path, body string }{
		{"/api/mobile/svcchat/page-messaging/messages", `{"pageId":"` + w.c.Page.ID + `","text":"hello"}`},
		{"/api/mobile/svcchat/page-messaging/opt-in", `{"pageId":"` + w.c.Page.ID + `","purposes":["transactional"]}`},
		{"/api/mobile/blocks", `{"userId":"` + w.c.Users["consumer"].ID + `"}`},
		{"/api/mobile/reports", `{"pageId":"` + w.c.Page.ID + `","reason":"spam"}`},
		{"/api/mobile/extmsg/messages", `{"to":"` + phone + `","text":"hello"}`},
	} {
		res, body := do(t, "POST", w.g.URL+r.path, strings.NewReader(r.body),
			map[string]string{"Authorization": "Bearer " + me.SessionToken, "Content-Type": "application/json"})
		if res.StatusCode/100 != 2 {
			t.Fatalf("POST %s: %d %s", r.path, res.StatusCode, body)
		}
	}
	theirs := map[string]string{
		"Page conversations":     `SELECT count(*) FROM svcchat.conversations WHERE user_id = $1`,
		"opt-ins":                `SELECT count(*) FROM svcchat.opt_ins WHERE user_id = $1`,
		"reports":                `SELECT count(*) FROM svcchat.reports WHERE reporter_user_id = $1`,
		"business conversations": `SELECT count(*) FROM extmsg.conversations WHERE user_id = $1`,
		"blocks": `SELECT (SELECT count(*) FROM chat.user_blocks WHERE user_id = $1)
		                + (SELECT count(*) FROM svcchat.page_blocks WHERE user_id = $1)`,
	}
	for what, q := range theirs {
		if dbCount(t, db, q, me.UserID) == 0 {
			t.Fatalf("no %s of the person before leaving", what)
		}
	}
	if c := coreRowsNaming(t, db, me.UserID); c["core.outbox"] == 0 {
		t.Fatalf("no event about the person before leaving: %v", c)
	}

	t.Run("only the person's own session leaves", func(t *testing.T) {
		res, body := w.del(t, tok.AccessToken, "me", nil)
		wantGraphError(t, res, body, 403, 200, 2069001)
		res, body = w.del(t, w.app.APIKey, "me", nil)
		wantGraphError(t, res, body, 403, 200, 2069001)
		w.mustGet(t, tok.AccessToken, "me")
	})

	res, body = w.del(t, me.SessionToken, "me", nil)
	if res.StatusCode != 200 || string(body) != `{"success":true}` {
		t.Fatalf("leave: %d %s", res.StatusCode, body)
	}
	for name, token := range map[string]string{"the session": me.SessionToken, "another session": second, "the app's token": tok.AccessToken} {
		res, body := w.get(t, token, map[string][]string{"node": {"me"}})
		if res.StatusCode != 401 {
			t.Fatalf("%s after leaving: %d %s", name, res.StatusCode, body)
		}
	}
	if _, err := cfg.TokenSource(context.Background(), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err == nil {
		t.Fatal("the refresh token of a person who left still works")
	}

	signIn := func(username string) (int, string) {
		b, _ := json.Marshal(map[string]string{"username": username, "password": password})
		res, body := do(t, "POST", w.g.URL+"/api/mobile/auth/session", strings.NewReader(string(b)),
			map[string]string{"Content-Type": "application/json"})
		// The trace id differs from call to call; all else is the same.
		return res.StatusCode, traceID.ReplaceAllString(string(body), "")
	}
	gotStatus, gotBody := signIn("lena.leaver")
	wantStatus, wantBody := signIn("nobody.ever")
	if gotStatus != wantStatus || gotBody != wantBody || gotStatus == http.StatusOK {
		t.Fatalf("signing in after leaving: %d %s; an unknown user: %d %s", gotStatus, gotBody, wantStatus, wantBody)
	}

	// Every plugin erases the person's data: the jobs run at once.
	for what, q := range theirs {
		for deadline := time.Now().Add(20 * time.Second); dbCount(t, db, q, me.UserID) != 0; time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the person's %s are still stored", what)
			}
		}
	}
	// The core's own job erases her events once the plugins' jobs and the
	// app's callback are done.
	waitUntil(t, 20*time.Second, "the user-left jobs to be done", func() bool {
		return dbCount(t, db, `SELECT count(*) FROM core.user_left_jobs`) == 0
	})
	if c := coreRowsNaming(t, db, me.UserID); len(c) != 0 {
		t.Fatalf("the core still holds rows naming the person: %v", c)
	}
	if n := dbCount(t, db, `SELECT count(*) FROM core.users WHERE id = $1`, mustParseInt(t, me.UserID)); n != 0 {
		t.Fatal("the users row is still there")
	}

	select {
	case got := <-recv.users:
		if got != me.UserID {
			t.Fatalf("the callback names user %q, want %q", got, me.UserID)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the app's data deletion callback was not called")
	}
}

var traceID = regexp.MustCompile(`"fbtrace_id":"[^"]*"`)

func mustParseInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// coreRowsNaming counts, per core table holding events or callbacks about
// people, the rows naming userID: by the event's subject (user_id) or by
// the event's data containing the id as a JSON string, so that an event
// whose producer did not name its subject is found too.
func coreRowsNaming(t *testing.T, dbURL, userID string) map[string]int {
	t.Helper()
	found := map[string]int{}
	for table, q := range map[string]string{
		"core.outbox":                 `SELECT count(*) FROM core.outbox WHERE user_id = $1 OR position('"' || $1 || '"' in data::text) > 0`,
		"core.webhook_deliveries":     `SELECT count(*) FROM core.webhook_deliveries WHERE user_id = $1 OR position('"' || $1 || '"' in data::text) > 0`,
		"core.data_deletion_requests": `SELECT count(*) FROM core.data_deletion_requests WHERE user_id::text = $1`,
	} {
		if n := dbCount(t, dbURL, q, userID); n > 0 {
			found[table] = n
		}
	}
	return found
}
