package gatewaytest

import (
	"context"
	"testing"

	"golang.org/x/oauth2"

	"github.com/svcplatform/svc/internal/oauthtest"
)

// UserToken runs the OAuth code flow with PKCE for the seeded app as the
// seeded user named user ("owner", "consumer", …), through the real login
// and consent pages, and returns the access token.
func (g *Gateway) UserToken(t testing.TB, user string, scopes ...string) string {
	t.Helper()
	c := g.Credentials(t)
	u, ok := c.Users[user]
	if !ok {
		t.Fatalf("no seeded user %q", user)
	}
	cfg := oauth2.Config{
		ClientID: c.App.ClientID, ClientSecret: c.App.ClientSecret, RedirectURL: c.App.RedirectURI, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: g.URL + "/oauth/authorize", TokenURL: g.URL + "/api/oauth/token"},
	}
	verifier := oauth2.GenerateVerifier()
	cb := oauthtest.NewBrowser(t, g.URL).Authorize(cfg.AuthCodeURL("state", oauth2.S256ChallengeOption(verifier)),
		u.Username, u.Password, "allow")
	tok, err := cfg.Exchange(context.Background(), cb.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange code for %s: %v", user, err)
	}
	return tok.AccessToken
}
