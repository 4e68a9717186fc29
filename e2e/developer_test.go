package e2e

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/oauthtest"
)

// A new developer's path: sign in, register an app, send the Page admin
// through login and consent, exchange the code with PKCE, call the Graph.
func TestADeveloperRegistersAnAppAndActsForAPage(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	owner := c.Users["owner"]
	session := signInAt(t, g.URL, owner.Username, owner.Password)
	w := &graphWorld{g: g, c: c}

	redirect := "http://127.0.0.1:9/callback"
	res, body := w.post(t, session, map[string]any{"node": "me/apps", "name": "Orders bot", "redirect_uris": []string{redirect}}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("register app: %d %s", res.StatusCode, body)
	}
	app := decode[struct {
		ID, Mode     string
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		APIKey       string `json:"api_key"`
	}](t, body)
	if app.ID == "" || app.Mode != "development" || app.ClientSecret == "" || !strings.HasPrefix(app.APIKey, "svc_test_") {
		t.Fatalf("registered app = %s", body)
	}

	cfg := oauth2.Config{ClientID: app.ClientID, ClientSecret: app.ClientSecret, RedirectURL: redirect,
		Scopes:   []string{"pages:read", "pages:manage"},
		Endpoint: oauth2.Endpoint{AuthURL: g.URL + "/oauth/authorize", TokenURL: g.URL + "/api/oauth/token"}}
	verifier := oauth2.GenerateVerifier()
	cb := oauthtest.NewBrowser(t, g.URL).Authorize(cfg.AuthCodeURL("s1", oauth2.S256ChallengeOption(verifier)),
		owner.Username, owner.Password, "allow")
	tok, err := cfg.Exchange(context.Background(), cb.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	res, body = w.post(t, tok.AccessToken, map[string]any{"node": "page/" + c.Page.ID + "/posts", "content": "posted by a new app"}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("publish with the new app's token: %d %s", res.StatusCode, body)
	}
	res, body = w.get(t, app.APIKey, url.Values{"node": {"app/" + app.ID}})
	if res.StatusCode != 200 || !strings.Contains(string(body), `"mode":"development"`) {
		t.Fatalf("app node with its key: %d %s", res.StatusCode, body)
	}

	t.Run("a redirect URI with a fragment is refused naming the field", func(t *testing.T) {
		res, body := w.post(t, session, map[string]any{"node": "me/apps", "name": "x", "redirect_uris": []string{"https://a.example/cb#frag"}}, nil)
		e := wantGraphError(t, res, body, 400, 100, 0)
		if !strings.Contains(e.Error.Message, "redirect_uris") {
			t.Fatalf("%s", body)
		}
	})
	t.Run("registering needs a signed-in user", func(t *testing.T) {
		res, body := w.post(t, "", map[string]any{"node": "me/apps", "name": "x", "redirect_uris": []string{redirect}}, nil)
		wantGraphError(t, res, body, 401, 104, 0)
		res, body = w.post(t, c.App.APIKey, map[string]any{"node": "me/apps", "name": "x", "redirect_uris": []string{redirect}}, nil)
		if res.StatusCode != 403 {
			t.Fatalf("app key registered an app: %d %s", res.StatusCode, body)
		}
	})
}
