package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/oauthtest"
)

// The Graph explorer never puts the client secret in a browser (the
// interface's §5.2c): its callback page has no field for it, and it sends
// the code and PKCE verifier to POST /api/developers/explorer/token, which
// redeems the code on the server for the signed-in user of the app's team
// and answers the access token, its scopes and expiry only. Without a
// session it answers 401 (104), with a session of a user not on the app's
// team 403 (2069004), without the CSRF token 403 (2069008), for an app's
// own credential 403 (2069001); a bad or used code answers the token
// endpoint's OAuth error, and reusing a code revokes its token.
func TestTheExplorerExchangesTheCodeOnTheServer(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	owner := c.Users["owner"]
	w := &graphWorld{g: g, c: c}
	callback := g.URL + "/developers/console/explorer/callback"
	const tokenPath = "/api/developers/explorer/token"

	ownerSession := signInAt(t, g.URL, owner.Username, owner.Password)
	w.mustPost(t, ownerSession, map[string]any{"node": "app/" + c.App.ID + "/redirect_uris", "uri": callback})

	// The owner authorizes the app at the explorer's callback, as the
	// explorer's page does, in a browser with its own session cookie.
	verifier := oauth2.GenerateVerifier()
	cfg := oauth2.Config{ClientID: c.App.ClientID, RedirectURL: callback, Scopes: []string{"public_profile", "pages:read"},
		Endpoint: oauth2.Endpoint{AuthURL: g.URL + "/oauth/authorize"}}
	br := oauthtest.NewBrowser(t, g.URL)
	p := br.Get(cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
	if !strings.HasSuffix(p.URL.Path, "/login") || len(p.Forms) != 1 {
		t.Fatalf("want the login page, got %d at %s", p.Status, p.URL)
	}
	p = br.Submit(p, p.Forms[0], url.Values{"username": {owner.Username}, "password": {owner.Password}}, "")
	if p.Status != http.StatusOK || len(p.Forms) != 1 {
		t.Fatalf("want the consent page, got %d at %s:\n%s", p.Status, p.URL, p.Body)
	}
	p = br.Submit(p, p.Forms[0], nil, "allow")
	code := p.URL.Query().Get("code")
	if p.Status != http.StatusOK || p.URL.Path != "/developers/console/explorer/callback" || code == "" {
		t.Fatalf("consent did not land on the explorer's callback with a code: %d at %s", p.Status, p.URL)
	}

	// The callback page and its script hold no field for the secret.
	for _, bad := range []string{"client_secret", "client-secret", `type="password"`, "<form"} {
		if strings.Contains(p.Body, bad) {
			t.Errorf("the callback page holds %q:\n%s", bad, p.Body)
		}
	}
	res, script := do(t, "GET", g.URL+"/developers/console/static/callback.js", nil, nil)
	if res.StatusCode != 200 || bytes.Contains(script, []byte("client_secret")) || !bytes.Contains(script, []byte(tokenPath)) {
		t.Errorf("callback.js: %d, mentions client_secret or not %s:\n%s", res.StatusCode, tokenPath, script)
	}

	var session string
	base, _ := url.Parse(g.URL)
	for _, ck := range br.Client.Jar.Cookies(base) {
		if ck.Name == "svc_session" {
			session = ck.Value
		}
	}
	m := regexp.MustCompile(`<meta name="svc-csrf" content="([^"]+)">`).FindStringSubmatch(p.Body)
	if session == "" || m == nil {
		t.Fatalf("no session cookie (%q) or CSRF token on the callback page", session)
	}
	asBrowser := func(session, csrf string) map[string]string {
		h := map[string]string{"Content-Type": "application/json", "Origin": g.URL}
		if session != "" {
			h["Cookie"] = "svc_session=" + session
		}
		if csrf != "" {
			h["X-Svc-CSRF"] = csrf
		}
		return h
	}
	exchange := func(h map[string]string, body map[string]string) (*http.Response, []byte) {
		b, _ := json.Marshal(body)
		return do(t, "POST", g.URL+tokenPath, bytes.NewReader(b), h)
	}
	request := map[string]string{"app_id": c.App.ID, "code": code, "code_verifier": verifier, "redirect_uri": callback}

	// Refusals, none of which spends the code.
	res, body := exchange(asBrowser("", ""), request)
	wantGraphError(t, res, body, 401, 104, 0)
	res, body = exchange(asBrowser(session, ""), request)
	wantGraphError(t, res, body, 403, 200, 2069008)
	stranger := signInAt(t, g.URL, c.Users["consumer"].Username, c.Users["consumer"].Password) // a Test User, not on the team
	res, body = exchange(asBrowser(stranger, consoleCSRFToken(t, g.URL, stranger)), request)
	wantGraphError(t, res, body, 403, 200, 2069004)
	res, body = exchange(map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + c.App.APIKey}, request)
	wantGraphError(t, res, body, 403, 200, 2069001)
	other := map[string]string{"redirect_uri": c.App.RedirectURI}
	for k, v := range request {
		if _, ok := other[k]; !ok {
			other[k] = v
		}
	}
	res, body = exchange(asBrowser(session, m[1]), other)
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "redirect_uri") {
		t.Errorf("another redirect URI's refusal does not name redirect_uri: %s", body)
	}
	res, body = exchange(asBrowser(session, m[1]), map[string]string{"app_id": c.App.ID, "code": "bogus", "code_verifier": verifier, "redirect_uri": callback})
	if res.StatusCode != 400 || !strings.Contains(string(body), `"error":"invalid_grant"`) {
		t.Errorf("a bad code: %d %s, want 400 invalid_grant", res.StatusCode, body)
	}

	// The owner's session exchanges it: the token, its scopes and expiry,
	// nothing else.
	res, body = exchange(asBrowser(session, m[1]), request)
	if res.StatusCode != 200 {
		t.Fatalf("exchange: %d %s", res.StatusCode, body)
	}
	var answer map[string]any
	if err := json.Unmarshal(body, &answer); err != nil {
		t.Fatal(err)
	}
	token, _ := answer["access_token"].(string)
	scopes, _ := answer["scope"].(string)
	granted := strings.Fields(scopes)
	slices.Sort(granted)
	if !strings.HasPrefix(token, "svcat_") || !slices.Equal(granted, []string{"pages:read", "public_profile"}) || answer["expires_in"] != float64(3600) {
		t.Errorf("exchange answered %s", body)
	}
	for k := range answer {
		if k != "access_token" && k != "token_type" && k != "scope" && k != "expires_in" {
			t.Errorf("exchange answered %q too: %s", k, body)
		}
	}
	if got := w.mustGet(t, token, "me/pages"); !bytes.Contains(got, []byte(c.Page.ID)) {
		t.Errorf("me/pages with the explorer's token: %s", got)
	}

	// The same code again: the OAuth error, and the token it gave is revoked.
	res, body = exchange(asBrowser(session, m[1]), request)
	if res.StatusCode != 400 || !strings.Contains(string(body), `"error":"invalid_grant"`) {
		t.Errorf("a used code: %d %s, want 400 invalid_grant", res.StatusCode, body)
	}
	res, body = w.get(t, token, url.Values{"node": {"me"}})
	wantGraphError(t, res, body, 401, 190, 467)
}
