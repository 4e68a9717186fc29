package e2e

import (
	"context"
	"net/url"
	"testing"

	"golang.org/x/oauth2"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/oauthtest"
)

// The attack a security review found: app T holds a Page admin's token with
// only public_profile and uses it to create an app, link the admin's other
// app to her Page or rewrite that app's settings. CONTRACT §4: a user token
// acts only on the app it was issued to; creating apps is first-party.
func TestAUserTokenOfOneAppCannotManageTheUsersOtherApps(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	owner := c.Users["owner"]
	session := signInAt(t, g.URL, owner.Username, owner.Password)
	w := &graphWorld{g: g, c: c}

	// The owner tries a third-party tool, app T, and grants it only
	// public_profile.
	redirect := "http://127.0.0.1:9/callback"
	res, body := w.post(t, session, map[string]any{"node": "me/apps", "name": "Tool T", "redirect_uris": []string{redirect}}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("register app T: %d %s", res.StatusCode, body)
	}
	appT := decode[struct {
		ID           string
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}](t, body)
	cfg := oauth2.Config{ClientID: appT.ClientID, ClientSecret: appT.ClientSecret, RedirectURL: redirect,
		Scopes:   []string{"public_profile"},
		Endpoint: oauth2.Endpoint{AuthURL: g.URL + "/oauth/authorize", TokenURL: g.URL + "/api/oauth/token"}}
	verifier := oauth2.GenerateVerifier()
	cb := oauthtest.NewBrowser(t, g.URL).Authorize(cfg.AuthCodeURL("t1", oauth2.S256ChallengeOption(verifier)),
		owner.Username, owner.Password, "allow")
	tok, err := cfg.Exchange(context.Background(), cb.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	stolen := tok.AccessToken
	other := c.App.ID // the owner's other app, linked to her Page

	t.Run("a user token cannot create an app: that is first-party (2069001)", func(t *testing.T) {
		res, body := w.post(t, stolen, map[string]any{"node": "me/apps", "name": "T's puppet", "redirect_uris": []string{redirect}}, nil)
		wantGraphError(t, res, body, 403, 200, 2069001)
	})
	t.Run("a token of app T cannot rewrite the owner's other app's config (2069004)", func(t *testing.T) {
		res, body := w.post(t, stolen, map[string]any{"node": "app/" + other + "/config", "platformConfig": map[string]any{"x": 1}}, nil)
		wantGraphError(t, res, body, 403, 200, 2069004)
	})
	t.Run("a token of app T cannot read the other app's subscriptions or deliveries (2069004)", func(t *testing.T) {
		res, body := w.get(t, stolen, url.Values{"node": {"app/" + other + "/subscriptions"}})
		wantGraphError(t, res, body, 403, 200, 2069004)
		res, body = w.get(t, stolen, url.Values{"node": {"app/" + other + "/deliveries"}})
		wantGraphError(t, res, body, 403, 200, 2069004)
	})
	t.Run("a token of app T cannot link the other app to the owner's Page (2069004)", func(t *testing.T) {
		res, body := w.post(t, stolen, map[string]any{"node": "app/" + other + "/page_links", "page_id": c.Page.ID, "products": []string{"svcchat"}}, nil)
		wantGraphError(t, res, body, 403, 200, 2069004)
	})
	t.Run("a token of app T cannot take the other app live", func(t *testing.T) {
		res, body := w.post(t, stolen, map[string]any{"node": "app/" + other, "mode": "live"}, nil)
		wantGraphError(t, res, body, 403, 200, 2069001)
	})
	t.Run("an app's key acts on its own app only (2069004)", func(t *testing.T) {
		res, body := w.get(t, c.App.APIKey, url.Values{"node": {"app/" + appT.ID + "/config"}})
		wantGraphError(t, res, body, 403, 200, 2069004)
	})
	t.Run("the token still works on its own app, within the owner's role", func(t *testing.T) {
		res, body := w.get(t, stolen, url.Values{"node": {"app/" + appT.ID + "/config"}})
		if res.StatusCode != 200 {
			t.Fatalf("own app's config with its token: %d %s", res.StatusCode, body)
		}
	})
	t.Run("the owner's own session still manages her other app", func(t *testing.T) {
		res, body := w.post(t, session, map[string]any{"node": "app/" + other + "/config", "platformConfig": map[string]any{"x": 1}}, nil)
		if res.StatusCode != 200 {
			t.Fatalf("config with the owner's session: %d %s", res.StatusCode, body)
		}
	})
}
