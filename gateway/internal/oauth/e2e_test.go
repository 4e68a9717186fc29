package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/oauthtest"
)

// TestTheBuiltGatewaySeedsAndServesTheCodeFlow runs the gateway binary on a
// fresh database and drives the flow with the seeded credentials, as the
// README tells a developer to.
func TestTheBuiltGatewaySeedsAndServesTheCodeFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway binary")
	}
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	path := filepath.Join(g.DataDir, "dev-credentials.json")
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", st, err)
	}
	c := g.Credentials(t)
	if c.BaseURL != g.URL || c.App.ClientID == "" || c.App.RedirectURI == "" || !strings.HasPrefix(c.App.APIKey, "svc_test_") ||
		c.AdminToken == "" || c.Users["consumer"].Password == "" || c.Page.ID == "" {
		t.Fatalf("credentials = %+v", c)
	}

	ctx := context.Background()
	provider, err := oidc.NewProvider(ctx, c.BaseURL)
	if err != nil {
		t.Fatal(err)
	}
	cfg := oauth2.Config{ClientID: c.App.ClientID, ClientSecret: c.App.ClientSecret, RedirectURL: c.App.RedirectURI,
		Endpoint: provider.Endpoint(), Scopes: []string{"openid", "public_profile", "svcchat:read"}}
	verifier := oauth2.GenerateVerifier()
	consumer := c.Users["consumer"]
	cb := oauthtest.NewBrowser(t, g.URL).Authorize(cfg.AuthCodeURL("e2e", oauth2.S256ChallengeOption(verifier)),
		consumer.Username, consumer.Password, "allow")
	if cb.Query().Get("iss") != c.BaseURL || cb.Query().Get("state") != "e2e" {
		t.Fatalf("callback = %s", cb)
	}
	tok, err := cfg.Exchange(ctx, cb.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	idt, err := provider.Verifier(&oidc.Config{ClientID: c.App.ClientID}).Verify(ctx, tok.Extra("id_token").(string))
	if err != nil || idt.Subject != consumer.ID {
		t.Fatalf("id_token: %v %v", idt, err)
	}

	// The mobile session endpoint is wired too, and errors use the Graph envelope.
	res, err := http.Post(g.URL+"/api/mobile/auth/session", "application/json",
		strings.NewReader(`{"username":"`+consumer.Username+`","password":"wrong"}`))
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Error struct {
			Code      int    `json:"code"`
			FBTraceID string `json:"fbtrace_id"`
		} `json:"error"`
	}
	_ = json.NewDecoder(res.Body).Decode(&env)
	res.Body.Close()
	if res.StatusCode != 401 || env.Error.Code != 190 || env.Error.FBTraceID == "" {
		t.Errorf("wrong password: %d %+v", res.StatusCode, env)
	}
}

func TestNoDevSeedKeepsTheGeneratedAdminTokenInTheDataFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway binary")
	}
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{Args: []string{"--no-dev-seed"}})
	if _, err := os.Stat(filepath.Join(g.DataDir, "dev-credentials.json")); !os.IsNotExist(err) {
		t.Errorf("dev credentials written despite --no-dev-seed: %v", err)
	}
	st, err := os.Stat(filepath.Join(g.DataDir, "admin-token"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("admin-token file: %v %v", st, err)
	}
}
