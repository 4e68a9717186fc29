package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/oauthtest"
	"github.com/svcplatform/svc/internal/pgtest"
)

// lifecycleWorld is a running gateway with the seed, an owner's session and
// an app the owner registered through me/apps.
type lifecycleWorld struct {
	*graphWorld
	session string // the owner's first-party session (bearer)
	staff   string // the staff user's session
	app     createdApp
}

type createdApp struct {
	ID           string `json:"id"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	APIKey       string `json:"api_key"`
}

const lifecycleRedirect = "http://127.0.0.1:9/callback"

func newLifecycleWorld(t *testing.T) *lifecycleWorld {
	t.Helper()
	return newLifecycleWorldOn(t, "")
}

// newLifecycleWorldOn is newLifecycleWorld on the database db ("": one of
// the gateway's own), for tests that read it.
func newLifecycleWorldOn(t *testing.T, db string) *lifecycleWorld {
	t.Helper()
	g := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: db})
	c := g.Credentials(t)
	w := &lifecycleWorld{graphWorld: &graphWorld{g: g, c: c, db: db}}
	w.session = signInAt(t, g.URL, c.Users["owner"].Username, c.Users["owner"].Password)
	w.staff = signInAt(t, g.URL, c.Users["staff"].Username, c.Users["staff"].Password)
	res, body := w.post(t, w.session, map[string]any{"node": "me/apps", "name": "Orders bot",
		"redirect_uris": []string{lifecycleRedirect}, "products": []string{"svcchat"}}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("register app: %d %s", res.StatusCode, body)
	}
	w.app = decode[createdApp](t, body)
	return w
}

func (w *lifecycleWorld) node(rest string) string {
	if rest == "" {
		return "app/" + w.app.ID
	}
	return "app/" + w.app.ID + "/" + rest
}

// del sends a Graph DELETE of node with query parameters.
func (w *graphWorld) del(t *testing.T, token, node string, q url.Values) (*http.Response, []byte) {
	t.Helper()
	if q == nil {
		q = url.Values{}
	}
	q.Set("node", node)
	h := map[string]string{}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return do(t, "DELETE", w.g.URL+"/api/v1/graph?"+q.Encode(), nil, h)
}

// oauthConfig is the x/oauth2 client of the app with secret.
func (w *lifecycleWorld) oauthConfig(secret, redirect string, scopes ...string) oauth2.Config {
	return oauth2.Config{ClientID: w.app.ClientID, ClientSecret: secret, RedirectURL: redirect, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: w.g.URL + "/oauth/authorize", TokenURL: w.g.URL + "/api/oauth/token"}}
}

// authorize runs the code flow with PKCE in a fresh browser as username and
// returns where the gateway redirected (nil when it showed a page instead)
// and the verifier.
func (w *lifecycleWorld) authorize(t *testing.T, cfg oauth2.Config, username, password string) (*url.URL, string) {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	br := oauthtest.NewBrowser(t, w.g.URL)
	p := br.Get(cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
	if p.Location == nil && !strings.HasSuffix(p.URL.Path, "/login") {
		return nil, verifier
	}
	return br.Authorize(cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)), username, password, "allow"), verifier
}

func (w *lifecycleWorld) exchange(t *testing.T, cfg oauth2.Config, cb *url.URL, verifier string) (*oauth2.Token, error) {
	t.Helper()
	if cb == nil || cb.Query().Get("code") == "" {
		t.Fatalf("no code in %v", cb)
	}
	return cfg.Exchange(context.Background(), cb.Query().Get("code"), oauth2.VerifierOption(verifier))
}

func (w *graphWorld) mustPost(t *testing.T, token string, body map[string]any) []byte {
	t.Helper()
	res, b := w.post(t, token, body, nil)
	if res.StatusCode != 200 {
		t.Fatalf("POST %v: %d %s", body["node"], res.StatusCode, b)
	}
	return b
}

func (w *graphWorld) mustGet(t *testing.T, token, node string) []byte {
	t.Helper()
	res, b := w.get(t, token, url.Values{"node": {node}})
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", node, res.StatusCode, b)
	}
	return b
}

// staffREST calls the staff App Review queue.
func (w *lifecycleWorld) staffREST(t *testing.T, token, method, body string) (*http.Response, []byte) {
	t.Helper()
	var r *strings.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	h := map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}
	if r == nil {
		return do(t, method, w.g.URL+"/api/developers/admin/app-review", nil, h)
	}
	return do(t, method, w.g.URL+"/api/developers/admin/app-review", r, h)
}

type reviewList struct {
	Data []struct{ Scope, Status, Reason string } `json:"data"`
}

func (r reviewList) status(scope string) string {
	for _, d := range r.Data {
		if d.Scope == scope {
			return d.Status
		}
	}
	return ""
}

// The path issue #14 describes, through the Graph as a client would: a
// developer's app gets a redirect URI, a team, a Test User who signs in
// through the real OAuth flow, rotated keys, App Review (automated and
// staff) and goes live with a svc_live_ key.
func TestAnAppGoesFromRegistrationThroughReviewToLive(t *testing.T) {
	t.Parallel()
	w := newLifecycleWorld(t)
	owner := w.c.Users["owner"]

	t.Run("a redirect URI added works at once in /oauth/authorize and a deleted one stops", func(t *testing.T) {
		second := "http://localhost:9/second"
		cfg := w.oauthConfig(w.app.ClientSecret, second, "public_profile")
		if cb, _ := w.authorize(t, cfg, owner.Username, owner.Password); cb != nil {
			t.Fatalf("an unregistered redirect URI was redirected to: %v", cb)
		}
		w.mustPost(t, w.session, map[string]any{"node": w.node("redirect_uris"), "uri": second})
		list := decode[struct{ Data []struct{ URI string } }](t, w.mustGet(t, w.session, w.node("redirect_uris")))
		if len(list.Data) != 2 {
			t.Fatalf("redirect uris = %+v", list)
		}
		cb, verifier := w.authorize(t, cfg, owner.Username, owner.Password)
		if cb == nil || !strings.HasPrefix(cb.String(), second) {
			t.Fatalf("the new redirect URI: %v", cb)
		}
		if _, err := w.exchange(t, cfg, cb, verifier); err != nil {
			t.Fatal(err)
		}
		res, body := w.del(t, w.session, w.node("redirect_uris"), url.Values{"uri": {second}})
		if res.StatusCode != 200 {
			t.Fatalf("delete: %d %s", res.StatusCode, body)
		}
		if cb, _ := w.authorize(t, cfg, owner.Username, owner.Password); cb != nil {
			t.Fatalf("a deleted redirect URI was redirected to: %v", cb)
		}
		res, body = w.post(t, w.session, map[string]any{"node": w.node("redirect_uris"), "uri": "http://orders.example/cb"}, nil)
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "uri") {
			t.Fatalf("refusal does not name uri: %s", body)
		}
		res, body = w.post(t, w.session, map[string]any{"node": w.node("redirect_uris"), "uri": "https://orders.example/cb#x"}, nil)
		wantGraphError(t, res, body, 400, 100, 0)
		res, body = w.del(t, w.session, w.node("redirect_uris"), url.Values{"uri": {"https://never.example/cb"}})
		wantGraphError(t, res, body, 404, 100, 33)
	})

	t.Run("roles: a member is added, listed and removed; the last Admin cannot be removed", func(t *testing.T) {
		consumer := w.c.Users["consumer"]
		w.mustPost(t, w.session, map[string]any{"node": w.node("roles"), "user_id": consumer.ID, "role": "developer"})
		roles := decode[struct {
			Data []struct{ UserID, Role string }
		}](t, w.mustGet(t, w.session, w.node("roles")))
		if len(roles.Data) != 2 {
			t.Fatalf("roles = %+v", roles)
		}
		res, body := w.del(t, w.session, w.node("roles"), url.Values{"user_id": {owner.ID}})
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "last Admin") {
			t.Fatalf("%s", body)
		}
		res, body = w.post(t, w.session, map[string]any{"node": w.node("roles"), "user_id": owner.ID, "role": "tester"}, nil)
		wantGraphError(t, res, body, 400, 100, 0)
		res, body = w.post(t, w.session, map[string]any{"node": w.node("roles"), "user_id": "424242", "role": "tester"}, nil)
		wantGraphError(t, res, body, 404, 100, 33)
		res, body = w.post(t, w.session, map[string]any{"node": w.node("roles"), "user_id": consumer.ID, "role": "owner"}, nil)
		wantGraphError(t, res, body, 400, 100, 0)
		if res, body := w.del(t, w.session, w.node("roles"), url.Values{"user_id": {consumer.ID}}); res.StatusCode != 200 {
			t.Fatalf("remove developer: %d %s", res.StatusCode, body)
		}
		roles = decode[struct {
			Data []struct{ UserID, Role string }
		}](t, w.mustGet(t, w.session, w.node("roles")))
		if len(roles.Data) != 1 || roles.Data[0].Role != "admin" {
			t.Fatalf("roles = %+v", roles)
		}
	})

	var testUser struct{ ID, Username, Password string }
	t.Run("a Test User is created, signs in and authorizes the app in development with x/oauth2", func(t *testing.T) {
		testUser = decode[struct{ ID, Username, Password string }](t, w.mustPost(t, w.session, map[string]any{"node": w.node("test_users")}))
		if testUser.ID == "" || testUser.Password == "" {
			t.Fatalf("test user = %+v", testUser)
		}
		cfg := w.oauthConfig(w.app.ClientSecret, lifecycleRedirect, "public_profile", "pages:read")
		cb, verifier := w.authorize(t, cfg, testUser.Username, testUser.Password)
		tok, err := w.exchange(t, cfg, cb, verifier)
		if err != nil {
			t.Fatal(err)
		}
		me := decode[struct{ ID string }](t, w.mustGet(t, tok.AccessToken, "me"))
		if me.ID != testUser.ID {
			t.Fatalf("me = %+v", me)
		}
		list := w.mustGet(t, w.session, w.node("test_users"))
		if !strings.Contains(string(list), testUser.Username) || strings.Contains(string(list), testUser.Password) {
			t.Fatalf("test users list: %s", list)
		}
		staff := w.c.Users["staff"]
		if cb, _ := w.authorize(t, cfg, staff.Username, staff.Password); cb == nil || cb.Query().Get("error") != "access_denied" {
			t.Fatalf("a user off the team authorized a development app: %v", cb)
		}
	})

	t.Run("a rotated api key: the new one works and the old one still works during the overlap", func(t *testing.T) {
		r := decode[struct {
			Kind, Value       string
			PreviousExpiresAt string `json:"previous_expires_at"`
		}](t, w.mustPost(t, w.session, map[string]any{"node": w.node("keys"), "kind": "api_key"}))
		if r.Kind != "api_key" || !strings.HasPrefix(r.Value, "svc_test_") || r.PreviousExpiresAt == "" {
			t.Fatalf("rotated = %+v", r)
		}
		for _, key := range []string{r.Value, w.app.APIKey} {
			w.mustGet(t, key, w.node(""))
		}
		w.app.APIKey = r.Value
	})

	t.Run("a rotated client secret: both secrets exchange codes during the overlap", func(t *testing.T) {
		r := decode[struct{ Kind, Value string }](t, w.mustPost(t, w.session, map[string]any{"node": w.node("keys"), "kind": "client_secret"}))
		if r.Kind != "client_secret" || r.Value == "" || r.Value == w.app.ClientSecret {
			t.Fatalf("rotated = %+v", r)
		}
		for _, secret := range []string{r.Value, w.app.ClientSecret} {
			cfg := w.oauthConfig(secret, lifecycleRedirect, "public_profile")
			cb, verifier := w.authorize(t, cfg, owner.Username, owner.Password)
			if _, err := w.exchange(t, cfg, cb, verifier); err != nil {
				t.Fatalf("exchange with a secret of the overlap: %v", err)
			}
		}
		cfg := w.oauthConfig("svccs_wrong", lifecycleRedirect, "public_profile")
		cb, verifier := w.authorize(t, cfg, owner.Username, owner.Password)
		if _, err := w.exchange(t, cfg, cb, verifier); err == nil {
			t.Fatal("a wrong secret exchanged a code")
		}
		w.app.ClientSecret = r.Value
		res, body := w.post(t, w.session, map[string]any{"node": w.node("keys"), "kind": "password"}, nil)
		wantGraphError(t, res, body, 400, 100, 0)
	})

	t.Run("review: basic scopes pass the automated check, svcchat:send waits for staff", func(t *testing.T) {
		rv := decode[reviewList](t, w.mustGet(t, w.session, w.node("review")))
		// Every scope the platform has (discovery lists them) but openid.
		_, disc := do(t, "GET", w.g.URL+"/.well-known/openid-configuration", nil, nil)
		scopes := decode[struct {
			Scopes []string `json:"scopes_supported"`
		}](t, disc).Scopes
		if len(rv.Data) != len(scopes)-1 || rv.status("public_profile") != "not_submitted" {
			t.Fatalf("review before submitting: %+v", rv)
		}
		res, body := w.post(t, w.session, map[string]any{"node": w.node("review"), "scopes": []string{"public_profile"}, "use_case": "x"}, nil)
		if res.StatusCode != 200 || decode[reviewList](t, body).status("public_profile") != "rejected" {
			t.Fatalf("a one-letter use case: %d %s", res.StatusCode, body)
		}
		rv = decode[reviewList](t, w.mustPost(t, w.session, map[string]any{"node": w.node("review"),
			"scopes":             []string{"public_profile", "pages:read", "svcchat:send"},
			"use_case":           "Orders bot greets each customer by name from the public profile and lists the Pages the merchant manages, so she can pick which shop answers order questions in chat. Nothing is stored beyond the session.",
			"privacy_policy_url": "https://orders.example/privacy"}))
		if rv.status("public_profile") != "automated_approved" || rv.status("pages:read") != "automated_approved" || rv.status("svcchat:send") != "pending" {
			t.Fatalf("review after submitting: %+v", rv)
		}
		res, body = w.post(t, w.session, map[string]any{"node": w.node("review"), "scopes": []string{"profile:all"}, "use_case": "x"}, nil)
		wantGraphError(t, res, body, 400, 100, 0)
		res, body = w.post(t, w.session, map[string]any{"node": w.node("review"), "scopes": []string{"pages:read"}}, nil)
		wantGraphError(t, res, body, 400, 100, 0)
	})

	t.Run("going live before staff approved a used scope is refused naming mode", func(t *testing.T) {
		res, body := w.post(t, w.session, map[string]any{"node": w.node(""), "mode": "live"}, nil)
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "svcchat:send") {
			t.Fatalf("%s", body)
		}
	})

	t.Run("staff see the queue and approve; a second decision is 409 2018305; others are 2069005", func(t *testing.T) {
		res, body := w.staffREST(t, w.staff, "GET", "")
		q := decode[struct {
			Data []struct{ AppID, AppName, Scope, UseCase, PrivacyPolicyURL, SubmittedAt string }
		}](t, body)
		if res.StatusCode != 200 || !slices.ContainsFunc(q.Data, func(d struct{ AppID, AppName, Scope, UseCase, PrivacyPolicyURL, SubmittedAt string }) bool {
			return d.AppID == w.app.ID && d.Scope == "svcchat:send" && d.AppName == "Orders bot" && d.UseCase != ""
		}) {
			t.Fatalf("queue: %d %s", res.StatusCode, body)
		}
		res, body = w.staffREST(t, w.session, "GET", "")
		wantGraphError(t, res, body, 403, 200, 2069005)
		decision := `{"appId":"` + w.app.ID + `","scope":"svcchat:send","decision":"approve"}`
		res, body = w.staffREST(t, w.session, "POST", decision)
		wantGraphError(t, res, body, 403, 200, 2069005)
		res, body = w.staffREST(t, w.staff, "POST", `{"appId":"`+w.app.ID+`","scope":"svcchat:send","decision":"reject"}`)
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "reason") {
			t.Fatalf("%s", body)
		}
		res, body = w.staffREST(t, w.staff, "POST", decision)
		d := decode[struct {
			Review struct{ AppID, Scope, Status, DecidedAt string }
		}](t, body)
		if res.StatusCode != 200 || d.Review.Status != "approved" || d.Review.DecidedAt == "" {
			t.Fatalf("approve: %d %s", res.StatusCode, body)
		}
		res, body = w.staffREST(t, w.staff, "POST", decision)
		wantGraphError(t, res, body, 409, 10, 2018305)
		res, body = w.staffREST(t, w.staff, "POST", `{"appId":"424242","scope":"svcchat:send","decision":"approve"}`)
		wantGraphError(t, res, body, 404, 100, 33)
		if st := decode[reviewList](t, w.mustGet(t, w.session, w.node("review"))).status("svcchat:send"); st != "approved" {
			t.Fatalf("svcchat:send = %s", st)
		}
	})

	t.Run("going live answers the svc_live_ key once; the svc_test_ key stops", func(t *testing.T) {
		live := decode[struct {
			Success bool
			Mode    string
			APIKey  string `json:"api_key"`
		}](t, w.mustPost(t, w.session, map[string]any{"node": w.node(""), "mode": "live"}))
		if !live.Success || live.Mode != "live" || !strings.HasPrefix(live.APIKey, "svc_live_") {
			t.Fatalf("went live = %+v", live)
		}
		app := decode[struct {
			Mode   string
			Scopes []string
		}](t, w.mustGet(t, live.APIKey, w.node("")))
		if app.Mode != "live" || !slices.Contains(app.Scopes, "svcchat:send") || slices.Contains(app.Scopes, "pages:manage") {
			t.Fatalf("live app = %+v", app)
		}
		res, body := w.get(t, w.app.APIKey, url.Values{"node": {w.node("")}})
		wantGraphError(t, res, body, 401, 190, 467)
		res, body = w.post(t, w.session, map[string]any{"node": w.node(""), "mode": "live"}, nil)
		wantGraphError(t, res, body, 400, 100, 0)
	})

	t.Run("a live app is open to anyone for approved scopes only", func(t *testing.T) {
		staff := w.c.Users["staff"]
		cfg := w.oauthConfig(w.app.ClientSecret, lifecycleRedirect, "public_profile", "svcchat:send")
		cb, verifier := w.authorize(t, cfg, staff.Username, staff.Password)
		if _, err := w.exchange(t, cfg, cb, verifier); err != nil {
			t.Fatalf("anyone authorizes a live app: %v", err)
		}
		cfg = w.oauthConfig(w.app.ClientSecret, lifecycleRedirect, "pages:manage")
		if cb, _ := w.authorize(t, cfg, staff.Username, staff.Password); cb == nil || cb.Query().Get("error") != "invalid_scope" {
			t.Fatalf("an unapproved scope on a live app: %v", cb)
		}
	})

	t.Run("a removed Test User can no longer sign in", func(t *testing.T) {
		if res, body := w.del(t, w.session, w.node("test_users"), url.Values{"user_id": {testUser.ID}}); res.StatusCode != 200 {
			t.Fatalf("delete test user: %d %s", res.StatusCode, body)
		}
		b, _ := json.Marshal(map[string]string{"username": testUser.Username, "password": testUser.Password})
		res, body := do(t, "POST", w.g.URL+"/api/mobile/auth/session", strings.NewReader(string(b)), map[string]string{"Content-Type": "application/json"})
		wantGraphError(t, res, body, 401, 190, 2069007)
		res, body = w.del(t, w.session, w.node("test_users"), url.Values{"user_id": {testUser.ID}})
		wantGraphError(t, res, body, 404, 100, 33)
	})
}

// CONTRACT §4 "who may manage an app", row by row: roles, keys, Test Users,
// review and mode are first-party (a team Admin's session); redirect URIs
// take an Admin's session or a token the Admin gave this very app; an app
// key never changes its own team or review; a refusal changes nothing.
func TestWhoMayManageAnAppsLifecycle(t *testing.T) {
	t.Parallel()
	w := newLifecycleWorld(t)
	consumer, staff := w.c.Users["consumer"], w.c.Users["staff"]
	// staff is a Developer of the app; consumer is on no team of it.
	w.mustPost(t, w.session, map[string]any{"node": w.node("roles"), "user_id": staff.ID, "role": "developer"})
	developer := w.staff
	outsider := signInAt(t, w.g.URL, consumer.Username, consumer.Password)
	cfg := w.oauthConfig(w.app.ClientSecret, lifecycleRedirect, "public_profile")
	cb, verifier := w.authorize(t, cfg, w.c.Users["owner"].Username, w.c.Users["owner"].Password)
	tok, err := w.exchange(t, cfg, cb, verifier)
	if err != nil {
		t.Fatal(err)
	}
	adminToken := tok.AccessToken                                // the Admin's token of this app
	otherAppToken := w.g.UserToken(t, "owner", "public_profile") // the Admin's token of the seeded app
	otherAppKey := w.c.App.APIKey                                // the seeded app's key
	system, err := (&clientcredentials.Config{ClientID: w.app.ClientID, ClientSecret: w.app.ClientSecret,
		TokenURL: w.g.URL + "/api/oauth/token", Scopes: []string{"public_profile"}}).Token(context.Background())
	if err != nil {
		t.Fatalf("client_credentials: %v", err)
	}
	review := map[string]any{"scopes": []string{"public_profile"}, "use_case": "Shows the user's name."}
	testUser := decode[struct{ ID string }](t, w.mustPost(t, w.session, map[string]any{"node": w.node("test_users")}))

	type op struct {
		name   string
		method string
		node   string
		body   map[string]any
		query  url.Values
	}
	firstParty := []op{
		{"add a team member", "POST", "roles", map[string]any{"user_id": consumer.ID, "role": "tester"}, nil},
		{"remove a team member", "DELETE", "roles", nil, url.Values{"user_id": {staff.ID}}},
		{"create a Test User", "POST", "test_users", map[string]any{}, nil},
		{"remove a Test User", "DELETE", "test_users", nil, url.Values{"user_id": {testUser.ID}}},
		{"rotate the api key", "POST", "keys", map[string]any{"kind": "api_key"}, nil},
		{"rotate the client secret", "POST", "keys", map[string]any{"kind": "client_secret"}, nil},
		{"submit for review", "POST", "review", review, nil},
		{"go live", "POST", "", map[string]any{"mode": "live"}, nil},
	}
	redirects := []op{
		{"add a redirect URI", "POST", "redirect_uris", map[string]any{"uri": "https://orders.example/cb"}, nil},
		{"remove a redirect URI", "DELETE", "redirect_uris", nil, url.Values{"uri": {lifecycleRedirect}}},
	}
	call := func(t *testing.T, token string, o op) (*http.Response, []byte) {
		if o.method == "DELETE" {
			return w.del(t, token, w.node(o.node), o.query)
		}
		body := map[string]any{"node": w.node(o.node)}
		for k, v := range o.body {
			body[k] = v
		}
		return w.post(t, token, body, nil)
	}
	type cred struct {
		rule    string
		token   string
		status  int
		code    int
		subcode int
	}
	appKeyRow := cred{"the app's own key is the wrong kind of credential (2069001)", w.app.APIKey, 403, 200, 2069001}
	for _, o := range firstParty {
		for _, c := range []cred{
			appKeyRow,
			{"the app's client_credentials token is the wrong kind of credential (2069001)", system.AccessToken, 403, 200, 2069001},
			{"another app's key is the wrong kind of credential (2069001)", otherAppKey, 403, 200, 2069001},
			{"the Admin's own user token of the app is not first-party (2069001)", adminToken, 403, 200, 2069001},
			{"a Developer's session is below Admin (2069004)", developer, 403, 200, 2069004},
			{"a session of a user off the team is refused (2069004)", outsider, 403, 200, 2069004},
			{"no credential is 104", "", 401, 104, 0},
		} {
			t.Run(o.name+": "+c.rule, func(t *testing.T) {
				res, body := call(t, c.token, o)
				wantGraphError(t, res, body, c.status, c.code, c.subcode)
			})
		}
	}
	for _, o := range redirects {
		for _, c := range []cred{
			appKeyRow,
			{"a user token issued to another app is refused (2069004)", otherAppToken, 403, 200, 2069004},
			{"a Developer's session is below Admin (2069004)", developer, 403, 200, 2069004},
			{"a session of a user off the team is refused (2069004)", outsider, 403, 200, 2069004},
		} {
			t.Run(o.name+": "+c.rule, func(t *testing.T) {
				res, body := call(t, c.token, o)
				wantGraphError(t, res, body, c.status, c.code, c.subcode)
			})
		}
	}
	t.Run("an app that does not exist is 100/33 whatever its id looks like", func(t *testing.T) {
		for _, id := range []string{"424242", "not-an-id"} {
			res, body := w.post(t, w.session, map[string]any{"node": "app/" + id + "/test_users"}, nil)
			wantGraphError(t, res, body, 404, 100, 33)
		}
	})
	t.Run("the refusals changed nothing", func(t *testing.T) {
		roles := decode[struct {
			Data []struct{ UserID, Role string }
		}](t, w.mustGet(t, w.session, w.node("roles")))
		users := decode[struct{ Data []any }](t, w.mustGet(t, w.session, w.node("test_users")))
		uris := decode[struct{ Data []any }](t, w.mustGet(t, w.session, w.node("redirect_uris")))
		rv := decode[reviewList](t, w.mustGet(t, w.session, w.node("review")))
		if len(roles.Data) != 2 || len(users.Data) != 1 || len(uris.Data) != 1 || rv.status("public_profile") != "not_submitted" {
			t.Fatalf("state after refusals: roles %+v, test users %+v, uris %+v, review %+v", roles, users, uris, rv)
		}
		w.mustGet(t, w.app.APIKey, w.node("")) // the key was not rotated away
	})
	t.Run("the Admin's token of this app manages its redirect URIs", func(t *testing.T) {
		w.mustPost(t, adminToken, map[string]any{"node": w.node("redirect_uris"), "uri": "https://orders.example/cb"})
	})
	t.Run("a Developer's session reads roles, Test Users and review", func(t *testing.T) {
		for _, n := range []string{"roles", "test_users", "review", "redirect_uris"} {
			w.mustGet(t, developer, w.node(n))
		}
	})
	t.Run("the Admin's session makes every first-party change", func(t *testing.T) {
		for _, o := range firstParty[:len(firstParty)-1] {
			if res, body := call(t, w.session, o); res.StatusCode != 200 {
				t.Fatalf("%s: %d %s", o.name, res.StatusCode, body)
			}
		}
	})
}

// The console calls the Graph with the login session cookie: a change
// needs the session's CSRF token, which only our own pages can read.
func TestACookieSessionChangesAnAppOnlyWithItsCSRFToken(t *testing.T) {
	t.Parallel()
	w := newLifecycleWorld(t)
	cookie := "svc_session=" + w.session
	post := func(header map[string]string) (*http.Response, []byte) {
		h := map[string]string{"Content-Type": "application/json", "Cookie": cookie}
		for k, v := range header {
			h[k] = v
		}
		b, _ := json.Marshal(map[string]any{"node": w.node("redirect_uris"), "uri": "https://orders.example/cb"})
		return do(t, "POST", w.g.URL+"/api/v1/graph", strings.NewReader(string(b)), h)
	}
	res, body := post(nil)
	wantGraphError(t, res, body, 403, 200, 2069008)
	res, body = post(map[string]string{"X-Svc-CSRF": "forged"})
	wantGraphError(t, res, body, 403, 200, 2069008)

	res, body = do(t, "GET", w.g.URL+"/api/mobile/auth/session", nil, map[string]string{"Cookie": cookie})
	info := decode[struct{ UserID, CSRFToken string }](t, body)
	if res.StatusCode != 200 || info.CSRFToken == "" || info.UserID != w.c.Users["owner"].ID {
		t.Fatalf("session info: %d %s", res.StatusCode, body)
	}
	res, body = post(map[string]string{"X-Svc-CSRF": info.CSRFToken, "Origin": "https://evil.example"})
	wantGraphError(t, res, body, 403, 200, 2069008)
	if res, body = post(map[string]string{"X-Svc-CSRF": info.CSRFToken, "Origin": w.g.URL}); res.StatusCode != 200 {
		t.Fatalf("with the token from our own origin: %d %s", res.StatusCode, body)
	}
	res, body = do(t, "GET", w.g.URL+"/api/v1/graph?node="+url.QueryEscape(w.node("redirect_uris")), nil, map[string]string{"Cookie": cookie})
	if res.StatusCode != 200 || !strings.Contains(string(body), "orders.example") {
		t.Fatalf("a cookie read needs no token: %d %s", res.StatusCode, body)
	}
}

// A secret shown once stays shown once in the database too: a write retried
// with its Idempotency-Key answers the same Test User password, and the
// kept answer is sealed, so the password is nowhere in plain.
func TestAKeptIdempotentAnswerDoesNotHoldASecretInPlain(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	g := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: db})
	c := g.Credentials(t)
	w := &graphWorld{g: g, c: c, db: db}
	session := signInAt(t, g.URL, c.Users["owner"].Username, c.Users["owner"].Password)
	node := map[string]any{"node": "app/" + c.App.ID + "/test_users"}
	key := map[string]string{"Idempotency-Key": "create-test-user-1"}
	res, first := w.post(t, session, node, key)
	if res.StatusCode != 200 {
		t.Fatalf("create test user: %d %s", res.StatusCode, first)
	}
	_, again := w.post(t, session, node, key)
	created := decode[struct{ ID, Password string }](t, first)
	if string(again) != string(first) || created.Password == "" {
		t.Fatalf("the retry answered %s, the first %s", again, first)
	}
	if n := dbCount(t, db, `SELECT count(*) FROM core.idempotency_keys WHERE sealed`); n != 1 {
		t.Fatalf("%d sealed answers, want 1", n)
	}
	if n := dbCount(t, db, `SELECT count(*) FROM core.idempotency_keys WHERE position($1::bytea in response) > 0`, []byte(created.Password)); n != 0 {
		t.Fatal("the Test User's password is kept in plain")
	}
	users := decode[struct{ Data []any }](t, w.mustGet(t, session, "app/"+c.App.ID+"/test_users"))
	if len(users.Data) != 2 { // the seed's consumer and the one created
		t.Fatalf("test users = %+v: the retry created another", users)
	}
}
