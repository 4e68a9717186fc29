package e2e

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/pgtest"
)

// checkupView is GET app/<id>/data_use_checkup's answer.
type checkupView struct {
	Status        string   `json:"status"`
	DueTime       string   `json:"due_time"`
	Scopes        []string `json:"scopes"`
	CertifiedTime string   `json:"certified_time"`
}

// setCheckupDue is the operator's POST /api/admin/apps/<id>/data_use_checkup.
func setCheckupDue(t *testing.T, base, token, appID, body string) (*http.Response, []byte) {
	t.Helper()
	h := map[string]string{"Content-Type": "application/json"}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return do(t, "POST", base+"/api/admin/apps/"+appID+"/data_use_checkup", strings.NewReader(body), h)
}

// checkupUseCase passes the automated App Review of public_profile and
// pages:read.
const checkupUseCase = "Orders bot greets each customer by name from the public profile and lists the Pages the merchant manages, so she can pick which shop answers order questions in chat. Nothing is stored beyond the session."

// goLiveForCheckup submits public_profile and pages:read to App Review and
// takes w's app live, answering its svc_live_ key.
func goLiveForCheckup(t *testing.T, w *lifecycleWorld) string {
	t.Helper()
	w.mustPost(t, w.session, map[string]any{"node": w.node("review"), "scopes": []string{"public_profile", "pages:read"},
		"use_case": checkupUseCase, "privacy_policy_url": "https://orders.example/privacy"})
	return decode[struct {
		APIKey string `json:"api_key"`
	}](t, w.mustPost(t, w.session, map[string]any{"node": w.node(""), "mode": "live"})).APIKey
}

// consolePage is the console's app page as the team member of session
// sees it.
func consolePage(t *testing.T, base, appID, session string) string {
	t.Helper()
	req, err := http.NewRequest("GET", base+"/developers/console/apps/"+appID, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: "svc_session", Value: session})
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("console app page: %d %s", res.StatusCode, b)
	}
	return string(b)
}

// issue #31 item 4 through the public API: a live app's data use checkup,
// its reminder (a webhook to the app, a notice in the console), the
// operator's due time, the suspension while overdue (CONTRACT §17) and
// every refusal on the way.
func TestTheDataUseCheckupRemindsSuspendsAndIsLiftedByAnAdminsCertification(t *testing.T) {
	t.Parallel()
	w := newLifecycleWorld(t)
	owner, consumer := w.c.Users["owner"], w.c.Users["consumer"]
	node := w.node("data_use_checkup")

	// The app goes live with public_profile and pages:read approved.
	wentLive := time.Now()
	liveKey := goLiveForCheckup(t, w)
	cfg := w.oauthConfig(w.app.ClientSecret, lifecycleRedirect, "public_profile", "pages:read")
	cb, verifier := w.authorize(t, cfg, owner.Username, owner.Password)
	tok, err := w.exchange(t, cfg, cb, verifier)
	if err != nil {
		t.Fatal(err)
	}
	userToken := tok.AccessToken
	w.mustPost(t, w.session, map[string]any{"node": w.node("roles"), "user_id": consumer.ID, "role": "developer"})
	developer := signInAt(t, w.g.URL, consumer.Username, consumer.Password)

	t.Run("going live schedules the checkup a year later, readable by the team and the app", func(t *testing.T) {
		for _, who := range []string{w.session, developer, liveKey} {
			c := decode[checkupView](t, w.mustGet(t, who, node))
			due, err := time.Parse(time.RFC3339, c.DueTime)
			if err != nil || c.Status != "not_due" || due.Sub(wentLive.AddDate(1, 0, 0)).Abs() > time.Minute {
				t.Fatalf("checkup after going live = %+v", c)
			}
			if !slices.Equal(slices.Sorted(slices.Values(c.Scopes)), []string{"pages:read", "public_profile"}) {
				t.Fatalf("scopes = %v", c.Scopes)
			}
		}
	})

	t.Run("the operator's endpoint takes the admin token only", func(t *testing.T) {
		body := `{"due_time":"2030-01-01T00:00:00Z"}`
		res, b := setCheckupDue(t, w.g.URL, "", w.app.ID, body)
		wantGraphError(t, res, b, 401, 104, 0)
		for _, token := range []string{w.session, w.staff, liveKey, userToken} {
			res, b := setCheckupDue(t, w.g.URL, token, w.app.ID, body)
			wantGraphError(t, res, b, 403, 200, 2069006)
		}
		res, b = setCheckupDue(t, w.g.URL, w.c.AdminToken, w.app.ID, `{"due_time":"next week"}`)
		if e := wantGraphError(t, res, b, 400, 100, 0); !strings.Contains(e.Error.Message, "due_time") {
			t.Fatalf("refusal does not name due_time: %s", b)
		}
		res, b = setCheckupDue(t, w.g.URL, w.c.AdminToken, "424242", body)
		wantGraphError(t, res, b, 404, 100, 33)
		if c := decode[checkupView](t, w.mustGet(t, w.session, node)); c.Status != "not_due" {
			t.Fatalf("a refused call changed the checkup: %+v", c)
		}
	})

	t.Run("within the due window the app gets app.data_use_checkup.due and the console shows the notice", func(t *testing.T) {
		if strings.Contains(consolePage(t, w.g.URL, w.app.ID, w.session), `id="checkup-notice"`) {
			t.Fatal("the console shows the notice before the checkup is due")
		}
		rcv := newHookReceiver(t, w.app.ClientSecret)
		p := startListen(t, w.graphWorld, "--app", w.app.ID, "--token", liveKey, "--forward-to", rcv.srv.URL+"/hook")
		p.waitStderr("ready:")
		due := time.Now().Add(10 * 24 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
		res, b := setCheckupDue(t, w.g.URL, w.c.AdminToken, w.app.ID, `{"due_time":"`+due+`"}`)
		if res.StatusCode != 200 || !strings.Contains(string(b), `"status":"due"`) {
			t.Fatalf("set due: %d %s", res.StatusCode, b)
		}
		got := rcv.waitForData("app.data_use_checkup.due", "due_time", due)
		if got.body.AppID != w.app.ID || got.body.Data["status"] != "due" || got.body.PageID != nil {
			t.Fatalf("reminder = %+v", got.body)
		}
		c := decode[checkupView](t, w.mustGet(t, w.session, node))
		if c.Status != "due" || c.DueTime != due {
			t.Fatalf("checkup in its window = %+v", c)
		}
		for _, session := range []string{w.session, developer} {
			page := consolePage(t, w.g.URL, w.app.ID, session)
			if !strings.Contains(page, `id="checkup-notice"`) || !strings.Contains(page, "Data use checkup due") || !strings.Contains(page, due) {
				t.Fatalf("the console does not show the team the notice:\n%s", page)
			}
		}
		// Not overdue yet: the app works.
		w.mustGet(t, userToken, "me/pages")
		w.mustGet(t, liveKey, w.node(""))
	})

	t.Run("overdue: the app's token and key keep only public_profile", func(t *testing.T) {
		past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
		if res, b := setCheckupDue(t, w.g.URL, w.c.AdminToken, w.app.ID, `{"due_time":"`+past+`"}`); res.StatusCode != 200 ||
			!strings.Contains(string(b), `"status":"overdue"`) {
			t.Fatalf("set a past due time: %d %s", res.StatusCode, b)
		}
		me := decode[struct{ ID string }](t, w.mustGet(t, userToken, "me"))
		if me.ID != owner.ID {
			t.Fatalf("me = %+v", me)
		}
		for _, call := range []struct{ token, node string }{
			{userToken, "me/pages"}, {userToken, "page/" + w.c.Page.ID}, {userToken, node},
			{liveKey, w.node("")}, {liveKey, node}, {liveKey, w.node("subscriptions")},
		} {
			res, b := w.get(t, call.token, url.Values{"node": {call.node}})
			if e := wantGraphError(t, res, b, 403, 10, 2069002); !strings.Contains(e.Error.Message, "data use checkup") {
				t.Fatalf("GET %s: %s", call.node, b)
			}
		}
		// The team still reads it, and the console says it is overdue.
		if c := decode[checkupView](t, w.mustGet(t, developer, node)); c.Status != "overdue" {
			t.Fatalf("overdue checkup = %+v", c)
		}
		if page := consolePage(t, w.g.URL, w.app.ID, w.session); !strings.Contains(page, "Data use checkup overdue") {
			t.Fatalf("the console does not say the checkup is overdue:\n%s", page)
		}
	})

	uses := map[string]any{"public_profile": "Greets the customer by name in the order chat.",
		"pages:read": "Lists the merchant's shops so she picks which one answers."}

	t.Run("certifying is refused to all but a team Admin's session, and must name every approved scope", func(t *testing.T) {
		full := map[string]any{"node": node, "certify": true, "uses": uses}
		res, b := w.post(t, developer, full, nil)
		wantGraphError(t, res, b, 403, 200, 2069004)
		res, b = w.post(t, liveKey, full, nil)
		wantGraphError(t, res, b, 403, 200, 2069001)
		res, b = w.post(t, userToken, full, nil)
		wantGraphError(t, res, b, 403, 200, 2069001)
		res, b = w.post(t, w.session, map[string]any{"node": node, "certify": true,
			"uses": map[string]any{"public_profile": uses["public_profile"]}}, nil)
		if e := wantGraphError(t, res, b, 400, 100, 0); !strings.Contains(e.Error.Message, "uses") || !strings.Contains(e.Error.Message, "pages:read") {
			t.Fatalf("refusal does not name uses and the missing scope: %s", b)
		}
		res, b = w.post(t, w.session, map[string]any{"node": node, "certify": false, "uses": uses}, nil)
		if e := wantGraphError(t, res, b, 400, 100, 0); !strings.Contains(e.Error.Message, "certify") {
			t.Fatalf("refusal does not name certify: %s", b)
		}
		if c := decode[checkupView](t, w.mustGet(t, w.session, node)); c.Status != "overdue" {
			t.Fatalf("a refused certification changed the checkup: %+v", c)
		}
		res, b = w.get(t, userToken, url.Values{"node": {"me/pages"}})
		wantGraphError(t, res, b, 403, 10, 2069002)
	})

	t.Run("a team Admin certifies: the app works again at once, due a year later", func(t *testing.T) {
		c := decode[checkupView](t, w.mustPost(t, w.session, map[string]any{"node": node, "certify": true, "uses": uses}))
		due, err := time.Parse(time.RFC3339, c.DueTime)
		if err != nil || c.Status != "certified" || c.CertifiedTime == "" || due.Sub(time.Now().AddDate(1, 0, 0)).Abs() > time.Minute {
			t.Fatalf("certified checkup = %+v", c)
		}
		w.mustGet(t, userToken, "me/pages")
		w.mustGet(t, liveKey, w.node(""))
		if c := decode[checkupView](t, w.mustGet(t, liveKey, node)); c.Status != "certified" {
			t.Fatalf("the app reads %+v", c)
		}
		if strings.Contains(consolePage(t, w.g.URL, w.app.ID, w.session), `id="checkup-notice"`) {
			t.Fatal("the console still shows the notice after the certification")
		}
	})
}

// The suspension and its lifting are facts of the database: a gateway
// other than the one that changed them sees each within the credential
// cache's bound (2 s), with no query of its own per call.
func TestACheckupSuspensionAndItsLiftingReachAnotherGatewayWithinTheCacheBound(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	opts := gatewaytest.Options{DatabaseURL: db, DataDir: t.TempDir()}
	first := gatewaytest.Start(t, opts)
	c := first.Credentials(t)
	second := gatewaytest.Start(t, gatewaytest.AnotherMachine(t, opts))
	w := &lifecycleWorld{graphWorld: &graphWorld{g: first, c: c, db: db}}
	w.session = signInAt(t, first.URL, c.Users["owner"].Username, c.Users["owner"].Password)
	res, body := w.post(t, w.session, map[string]any{"node": "me/apps", "name": "Orders bot",
		"redirect_uris": []string{lifecycleRedirect}}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("register app: %d %s", res.StatusCode, body)
	}
	w.app = decode[createdApp](t, body)
	liveKey := goLiveForCheckup(t, w)
	other := &graphWorld{g: second, c: c, db: db}
	other.mustGet(t, liveKey, w.node("")) // remembered by the second gateway now

	// within polls the second gateway until the app's key gets status.
	within := func(status int, bound time.Duration) {
		t.Helper()
		start := time.Now()
		for {
			res, body := other.get(t, liveKey, url.Values{"node": {w.node("")}})
			if res.StatusCode == status {
				return
			}
			if time.Since(start) > bound {
				t.Fatalf("the second gateway still answers %d %s after %v, want %d", res.StatusCode, body, bound, status)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	past := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	if res, b := setCheckupDue(t, first.URL, c.AdminToken, w.app.ID, `{"due_time":"`+past+`"}`); res.StatusCode != 200 {
		t.Fatalf("set a past due time: %d %s", res.StatusCode, b)
	}
	within(403, 3*time.Second)
	res, body = other.get(t, liveKey, url.Values{"node": {w.node("")}})
	wantGraphError(t, res, body, 403, 10, 2069002)
	w.mustPost(t, w.session, map[string]any{"node": w.node("data_use_checkup"), "certify": true,
		"uses": map[string]any{"public_profile": "Greets the customer by name.", "pages:read": "Lists the merchant's shops."}})
	w.mustGet(t, liveKey, w.node("")) // at once on the gateway that certified
	within(200, 3*time.Second)
}
