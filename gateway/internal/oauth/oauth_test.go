package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	"github.com/svcplatform/svc/gateway/internal/oauth"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

func TestPKCES256MatchesRFC7636AppendixB(t *testing.T) {
	t.Parallel()
	const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	if got := oauth.S256(verifier); got != challenge {
		t.Fatalf("S256(%s) = %s, want %s", verifier, got, challenge)
	}
	if got := oauth2.S256ChallengeFromVerifier(verifier); got != challenge {
		t.Fatalf("x/oauth2 disagrees: %s", got)
	}
}

// codeFlow runs the browser part of the code flow and returns the code.
func codeFlow(t *testing.T, b *bundle, who identitytest.Person, verifier string, scopes ...string) string {
	t.Helper()
	cb := b.browser(t).authorize(b.config(scopes...).AuthCodeURL("st4te", oauth2.S256ChallengeOption(verifier)), who, "allow")
	if cb.Query().Get("error") != "" || cb.Query().Get("code") == "" {
		t.Fatalf("callback %s", cb)
	}
	return cb.Query().Get("code")
}

func TestCodeFlowWithRealClients(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()

	provider, err := oidc.NewProvider(ctx, b.url)
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	var meta struct {
		Methods  []string `json:"code_challenge_methods_supported"`
		ISS      bool     `json:"authorization_response_iss_parameter_supported"`
		Revoke   string   `json:"revocation_endpoint"`
		Intro    string   `json:"introspection_endpoint"`
		Grants   []string `json:"grant_types_supported"`
		Scopes   []string `json:"scopes_supported"`
		Userinfo string   `json:"userinfo_endpoint"`
	}
	if err := provider.Claims(&meta); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(meta.Methods, []string{"S256"}) || !meta.ISS || meta.Revoke != b.url+oauth.PathRevoke ||
		meta.Intro != b.url+oauth.PathIntrospect || len(meta.Grants) != 3 || !slices.Contains(meta.Scopes, "svcchat:send") {
		t.Errorf("discovery document: %+v", meta)
	}
	res, err := http.Get(b.url + "/.well-known/oauth-authorization-server")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("RFC 8414 metadata: %v %v", res, err)
	}
	res.Body.Close()

	cfg := b.config(oidc.ScopeOpenID, "public_profile", "pages:read")
	cfg.Endpoint = provider.Endpoint()
	cfg.Endpoint.AuthStyle = oauth2.AuthStyleInHeader
	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL("xyz-state", oauth2.S256ChallengeOption(verifier), oidc.Nonce("n0nce"))

	cb := b.browser(t).authorize(authURL, b.Owner, "allow")
	q := cb.Query()
	if cb.Scheme+"://"+cb.Host+cb.Path != identitytest.RedirectURI || q.Get("state") != "xyz-state" || q.Get("iss") != b.url || q.Get("code") == "" {
		t.Fatalf("callback = %s", cb)
	}
	tok, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if tok.TokenType != "Bearer" || tok.RefreshToken == "" || tok.Expiry.IsZero() {
		t.Errorf("token = %+v", tok)
	}
	if got := tok.Extra("scope"); got != "openid pages:read public_profile" {
		t.Errorf("scope = %v", got)
	}

	raw, _ := tok.Extra("id_token").(string)
	idt, err := provider.Verifier(&oidc.Config{ClientID: b.App.ClientID}).Verify(ctx, raw)
	if err != nil {
		t.Fatalf("id_token: %v", err)
	}
	var claims struct {
		Name  string `json:"name"`
		Nonce string `json:"nonce"`
	}
	if err := idt.Claims(&claims); err != nil {
		t.Fatal(err)
	}
	if idt.Subject != b.Owner.ID || idt.Issuer != b.url || claims.Nonce != "n0nce" || claims.Name != "Olivia Owner" {
		t.Errorf("id_token: sub %s iss %s claims %+v", idt.Subject, idt.Issuer, claims)
	}
	if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
		t.Errorf("at_hash: %v", err)
	}

	ui, err := provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil || ui.Subject != b.Owner.ID {
		t.Errorf("userinfo = %+v, %v", ui, err)
	}

	p, err := b.authn.AuthenticateToken(ctx, tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != pluginv1.TokenKind_TOKEN_KIND_USER || p.UserID != b.Owner.ID || p.AppID != b.App.ID || !p.HasScope("pages:read") {
		t.Errorf("principal = %+v", p)
	}

	// The refresh token works through x/oauth2 too.
	old := tok.AccessToken
	tok2, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil || tok2.AccessToken == old || tok2.RefreshToken == tok.RefreshToken {
		t.Fatalf("refresh: %+v, %v", tok2, err)
	}
}

func TestConsentIsRememberedUntilPromptConsent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	br := b.browser(t)
	cfg := b.config("public_profile")
	v := oauth2.GenerateVerifier()
	if cb := br.authorize(cfg.AuthCodeURL("s1", oauth2.S256ChallengeOption(v)), b.Consumer, "allow"); cb.Query().Get("code") == "" {
		t.Fatalf("first authorization: %s", cb)
	}
	p := br.Get(cfg.AuthCodeURL("s2", oauth2.S256ChallengeOption(v)))
	if p.Location == nil || p.Location.Query().Get("code") == "" || p.Location.Query().Get("state") != "s2" {
		t.Fatalf("second authorization should skip the consent page: %d %s", p.Status, p.Location)
	}
	p = br.Get(cfg.AuthCodeURL("s3", oauth2.S256ChallengeOption(v), oauth2.SetAuthURLParam("prompt", "consent")))
	if p.Location != nil || len(p.Forms) != 1 || !strings.Contains(p.Body, "See your name") {
		t.Fatalf("prompt=consent should show the consent page: %d %s", p.Status, p.Location)
	}
	// Scopes in plain words, and exactly the two buttons of CONTRACT §10.
	var buttons []string
	for _, bt := range p.Forms[0].Buttons {
		buttons = append(buttons, "decision="+bt.Get("decision"))
	}
	if !slices.Equal(buttons, []string{"decision=deny", "decision=allow"}) {
		t.Errorf("buttons = %v", buttons)
	}
	// A wider scope set asks again.
	p = br.Get(b.config("public_profile", "pages:read").AuthCodeURL("s4", oauth2.S256ChallengeOption(v)))
	if p.Location != nil || len(p.Forms) != 1 {
		t.Fatalf("new scopes should show the consent page: %d %s", p.Status, p.Location)
	}
}

func TestAuthorizationRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	challenge := oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())
	base := func(mod func(url.Values)) string {
		v := url.Values{"client_id": {b.App.ClientID}, "redirect_uri": {identitytest.RedirectURI}, "response_type": {"code"},
			"scope": {"public_profile"}, "state": {"S"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}}
		mod(v)
		return b.url + oauth.PathAuthorize + "?" + v.Encode()
	}
	t.Run("client and redirect URI errors show the error page and never redirect", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			mod  func(url.Values)
		}{
			{"unknown client_id", func(v url.Values) { v.Set("client_id", "123456") }},
			{"missing client_id", func(v url.Values) { v.Del("client_id") }},
			{"unregistered redirect_uri", func(v url.Values) { v.Set("redirect_uri", "https://evil.example/cb") }},
			{"redirect_uri differing by a trailing slash", func(v url.Values) { v.Set("redirect_uri", identitytest.RedirectURI+"/") }},
			{"redirect_uri differing by a query", func(v url.Values) { v.Set("redirect_uri", identitytest.RedirectURI+"?x=1") }},
			{"missing redirect_uri", func(v url.Values) { v.Del("redirect_uri") }},
			{"wrong redirect_uri even with plain PKCE", func(v url.Values) {
				v.Set("redirect_uri", "https://evil.example/cb")
				v.Set("code_challenge_method", "plain")
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := b.browser(t).Get(base(tc.mod))
				if p.Location != nil || p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "<h1>") {
					t.Fatalf("got %d location=%v", p.Status, p.Location)
				}
			})
		}
	})
	t.Run("other errors redirect with error, state and iss", func(t *testing.T) {
		for _, tc := range []struct {
			name, want string
			mod        func(url.Values)
		}{
			{"plain PKCE is refused", "invalid_request", func(v url.Values) {
				v.Set("code_challenge_method", "plain")
				v.Set("code_challenge", strings.Repeat("a", 43))
			}},
			{"a missing code_challenge_method (plain by default) is refused", "invalid_request", func(v url.Values) { v.Del("code_challenge_method") }},
			{"a missing code_challenge is refused", "invalid_request", func(v url.Values) { v.Del("code_challenge") }},
			{"a malformed code_challenge is refused", "invalid_request", func(v url.Values) { v.Set("code_challenge", "short") }},
			{"an unknown scope is refused", "invalid_scope", func(v url.Values) { v.Set("scope", "public_profile email") }},
			{"another response type is refused", "unsupported_response_type", func(v url.Values) { v.Set("response_type", "token") }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := b.browser(t).Get(base(tc.mod))
				if p.Location == nil {
					t.Fatalf("no redirect: %d", p.Status)
				}
				q := p.Location.Query()
				if q.Get("error") != tc.want || q.Get("state") != "S" || q.Get("iss") != b.url || q.Get("code") != "" ||
					!strings.HasPrefix(p.Location.String(), identitytest.RedirectURI) {
					t.Fatalf("redirect = %s", p.Location)
				}
			})
		}
	})
	t.Run("a user outside a development app's team gets access_denied", func(t *testing.T) {
		cb := b.browser(t).authorize(base(func(url.Values) {}), b.Stranger, "allow")
		if cb.Query().Get("error") != "access_denied" || cb.Query().Get("state") != "S" || cb.Query().Get("code") != "" {
			t.Fatalf("callback = %s", cb)
		}
	})
	t.Run("denying consent gives access_denied", func(t *testing.T) {
		cb := b.browser(t).authorize(base(func(url.Values) {}), b.Consumer, "deny")
		if cb.Query().Get("error") != "access_denied" || cb.Query().Get("code") != "" {
			t.Fatalf("callback = %s", cb)
		}
	})
	t.Run("prompt=none without a session gives login_required", func(t *testing.T) {
		p := b.browser(t).Get(base(func(v url.Values) { v.Set("prompt", "none") }))
		if p.Location == nil || p.Location.Query().Get("error") != "login_required" {
			t.Fatalf("got %d %v", p.Status, p.Location)
		}
	})
	t.Run("a consent form without its CSRF token is refused", func(t *testing.T) {
		br := b.browser(t)
		p := br.Get(base(func(url.Values) {}))
		p = br.Submit(p, p.Forms[0], url.Values{"username": {b.Consumer.Username}, "password": {b.Consumer.Password}}, "")
		if len(p.Forms) != 1 {
			t.Fatalf("no consent form: %d", p.Status)
		}
		p = br.Submit(p, p.Forms[0], url.Values{"csrf_token": {"forged"}}, "allow")
		if p.Status != http.StatusForbidden || p.Location != nil {
			t.Fatalf("got %d %v", p.Status, p.Location)
		}
	})
	t.Run("a login form without its CSRF token is refused", func(t *testing.T) {
		br := b.browser(t)
		p := br.Get(b.url + oauth.PathLogin)
		p = br.Submit(p, p.Forms[0], url.Values{"csrf_token": {""}, "username": {b.Owner.Username}, "password": {b.Owner.Password}}, "")
		if p.Status != http.StatusForbidden {
			t.Fatalf("got %d", p.Status)
		}
	})
	t.Run("a wrong password shows the form again", func(t *testing.T) {
		br := b.browser(t)
		p := br.Get(b.url + oauth.PathLogin)
		p = br.Submit(p, p.Forms[0], url.Values{"username": {b.Owner.Username}, "password": {"wrong"}}, "")
		if p.Status != http.StatusUnauthorized || !strings.Contains(p.Body, "Wrong username or password") {
			t.Fatalf("got %d", p.Status)
		}
	})
	t.Run("the login page never redirects off-site", func(t *testing.T) {
		br := b.browser(t)
		p := br.Get(b.url + oauth.PathLogin + "?next=" + url.QueryEscape("//evil.example/x"))
		p = br.Submit(p, p.Forms[0], url.Values{"username": {b.Owner.Username}, "password": {b.Owner.Password}}, "")
		if p.Location != nil || p.Status != http.StatusOK || !strings.Contains(p.Body, "Signed in") {
			t.Fatalf("got %d %v", p.Status, p.Location)
		}
	})
}

func TestSessionCookieAttributes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	br := b.browser(t)
	p := br.Get(b.url + oauth.PathLogin)
	vals := url.Values{}
	for k, v := range p.Forms[0].Fields {
		vals[k] = v
	}
	vals.Set("username", b.Owner.Username)
	vals.Set("password", b.Owner.Password)
	req, _ := http.NewRequest(http.MethodPost, b.url+oauth.PathLogin, strings.NewReader(vals.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := br.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var found bool
	for _, c := range res.Cookies() {
		if c.Name == "svc_session" {
			found = true
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure {
				t.Errorf("cookie = %+v; want HttpOnly, SameSite=Lax, not Secure over plain HTTP", c)
			}
		}
	}
	if !found {
		t.Fatal("no session cookie")
	}
}

func TestTokenRequestRefusalsLeaveNoUsableToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	type tc struct {
		name    string
		mod     func(v url.Values)
		prepare func(code string)
		want    string
		status  int
	}
	expire := func(code string) {
		if _, err := b.Pool.Exec(ctx, "UPDATE core.oauth_codes SET expires_at = now() - interval '1 second' WHERE code_hash = $1",
			identity.HashToken(code)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []tc{
		{"a missing code_verifier is invalid_request", func(v url.Values) { v.Del("code_verifier") }, nil, "invalid_request", 400},
		{"a malformed code_verifier is invalid_request", func(v url.Values) { v.Set("code_verifier", "too-short") }, nil, "invalid_request", 400},
		{"a verifier with a forbidden character is invalid_request", func(v url.Values) { v.Set("code_verifier", strings.Repeat("a", 42)+"+") }, nil, "invalid_request", 400},
		{"a wrong code_verifier is invalid_grant", func(v url.Values) { v.Set("code_verifier", oauth2.GenerateVerifier()) }, nil, "invalid_grant", 400},
		{"the plain verifier as challenge is invalid_grant", func(v url.Values) { v.Set("code_verifier", v.Get("code_challenge_sent")) }, nil, "invalid_grant", 400},
		{"another redirect_uri is invalid_grant", func(v url.Values) { v.Set("redirect_uri", "http://127.0.0.1:8765/other") }, nil, "invalid_grant", 400},
		{"an expired code is invalid_grant", func(url.Values) {}, expire, "invalid_grant", 400},
		{"an unknown code is invalid_grant", func(v url.Values) { v.Set("code", "svcac_nope") }, nil, "invalid_grant", 400},
		{"a wrong client secret is invalid_client", func(v url.Values) { v.Set("client_secret", "nope") }, nil, "invalid_client", 401},
		{"an unknown grant type is unsupported_grant_type", func(v url.Values) { v.Set("grant_type", "password") }, nil, "unsupported_grant_type", 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			verifier := oauth2.GenerateVerifier()
			code := codeFlow(t, b, b.Owner, verifier, "public_profile")
			if c.prepare != nil {
				c.prepare(code)
			}
			v := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {identitytest.RedirectURI},
				"code_verifier": {verifier}, "client_id": {b.App.ClientID}, "client_secret": {b.App.ClientSecret},
				"code_challenge_sent": {oauth.S256(verifier)}}
			c.mod(v)
			v.Del("code_challenge_sent")
			status, body := b.postForm(t, oauth.PathToken, v, "", "")
			if status != c.status || body["error"] != c.want || body["error_description"] == "" || body["access_token"] != nil {
				t.Fatalf("got %d %v, want %d %s", status, body, c.status, c.want)
			}
			var live int
			if err := b.Pool.QueryRow(ctx, `SELECT count(*) FROM core.credentials c JOIN core.oauth_codes o ON o.grant_id = c.grant_id
				WHERE o.code_hash = $1 AND c.revoked_at IS NULL`, identity.HashToken(code)).Scan(&live); err != nil {
				t.Fatal(err)
			}
			if live != 0 {
				t.Errorf("%d usable access tokens from the refused code", live)
			}
		})
	}
}

func TestCodeReuseRevokesTheTokensIssuedFromIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	verifier := oauth2.GenerateVerifier()
	code := codeFlow(t, b, b.Owner, verifier, "public_profile")
	cfg := b.config()
	tok, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.authn.AuthenticateToken(ctx, tok.AccessToken); err != nil {
		t.Fatal(err) // cached as valid
	}
	_, err = cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("second use: %v", err)
	}
	if _, err := b.authn.AuthenticateToken(ctx, tok.AccessToken); !isAPIError(err, 190, 467) {
		t.Errorf("access token after code reuse: %v, want 190/467", err)
	}
	status, body := b.clientPost(t, oauth.PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}})
	if status != 400 || body["error"] != "invalid_grant" {
		t.Errorf("refresh token after code reuse: %d %v", status, body)
	}
}

func TestRefreshTokensRotateAndReuseRevokesTheFamily(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	verifier := oauth2.GenerateVerifier()
	code := codeFlow(t, b, b.Consumer, verifier, "public_profile", "pages:read")
	tok, err := b.config().Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	refresh := func(rt string, scope string) (int, map[string]any) {
		v := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}
		if scope != "" {
			v.Set("scope", scope)
		}
		return b.clientPost(t, oauth.PathToken, v)
	}

	status, r1 := refresh(tok.RefreshToken, "")
	if status != 200 || r1["refresh_token"] == tok.RefreshToken || r1["scope"] != "pages:read public_profile" {
		t.Fatalf("first refresh: %d %v", status, r1)
	}
	t.Run("scope escalation on refresh is invalid_scope and leaves the token usable", func(t *testing.T) {
		status, body := refresh(r1["refresh_token"].(string), "public_profile svcchat:send")
		if status != 400 || body["error"] != "invalid_scope" {
			t.Fatalf("got %d %v", status, body)
		}
	})
	status, r2 := refresh(r1["refresh_token"].(string), "public_profile")
	if status != 200 || r2["scope"] != "public_profile" {
		t.Fatalf("narrowing refresh: %d %v", status, r2)
	}
	status, r3 := refresh(r2["refresh_token"].(string), "")
	if status != 200 || r3["scope"] != "pages:read public_profile" {
		t.Fatalf("a later refresh keeps the original grant's scopes: %d %v", status, r3)
	}
	live := []string{tok.AccessToken, r1["access_token"].(string), r2["access_token"].(string), r3["access_token"].(string)}
	for _, at := range live {
		if _, err := b.authn.AuthenticateToken(ctx, at); err != nil {
			t.Fatal(err)
		}
	}

	// An old refresh token comes back: the whole family goes.
	status, body := refresh(r1["refresh_token"].(string), "")
	if status != 400 || body["error"] != "invalid_grant" {
		t.Fatalf("reuse: %d %v", status, body)
	}
	for i, at := range live {
		if _, err := b.authn.AuthenticateToken(ctx, at); !isAPIError(err, 190, 467) {
			t.Errorf("access token %d after reuse: %v", i, err)
		}
	}
	if status, body := refresh(r3["refresh_token"].(string), ""); status != 400 || body["error"] != "invalid_grant" {
		t.Errorf("latest refresh token after reuse: %d %v", status, body)
	}
}

func TestRevokedTokenIsInactiveAndRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	verifier := oauth2.GenerateVerifier()
	tok, err := b.config().Exchange(ctx, codeFlow(t, b, b.Owner, verifier, "pages:read"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	status, in := b.clientPost(t, oauth.PathIntrospect, url.Values{"token": {tok.AccessToken}})
	if status != 200 || in["active"] != true || in["sub"] != b.Owner.ID || in["scope"] != "pages:read" || in["client_id"] != b.App.ClientID {
		t.Fatalf("introspection of a live token: %d %v", status, in)
	}
	if status, in := b.clientPost(t, oauth.PathIntrospect, url.Values{"token": {tok.RefreshToken}}); status != 200 || in["active"] != true || in["token_type"] != "refresh_token" {
		t.Fatalf("introspection of the refresh token: %d %v", status, in)
	}
	// Another client learns nothing.
	other, _ := b.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: "Other"})
	if status, in := b.postForm(t, oauth.PathIntrospect, url.Values{"token": {tok.AccessToken}}, other.ClientID, other.ClientSecret); status != 200 || in["active"] != false {
		t.Fatalf("introspection by another client: %d %v", status, in)
	}
	if status, _ := b.postForm(t, oauth.PathRevoke, url.Values{"token": {tok.AccessToken}}, other.ClientID, other.ClientSecret); status != 200 {
		t.Fatalf("revocation by another client answers 200: %d", status)
	}
	if _, err := b.authn.AuthenticateToken(ctx, tok.AccessToken); err != nil {
		t.Fatalf("another client cannot revoke it: %v", err)
	}

	if status, _ := b.clientPost(t, oauth.PathRevoke, url.Values{"token": {tok.AccessToken}, "token_type_hint": {"access_token"}}); status != 200 {
		t.Fatalf("revoke: %d", status)
	}
	if status, in := b.clientPost(t, oauth.PathIntrospect, url.Values{"token": {tok.AccessToken}}); status != 200 || len(in) != 1 || in["active"] != false {
		t.Errorf("introspection of a revoked token: %d %v", status, in)
	}
	if _, err := b.authn.AuthenticateToken(ctx, tok.AccessToken); !isAPIError(err, 190, 467) {
		t.Errorf("Authenticate of a revoked token: %v", err)
	}

	// Revoking the refresh token revokes its family.
	verifier = oauth2.GenerateVerifier()
	tok, err = b.config().Exchange(ctx, codeFlow(t, b, b.Owner, verifier, "pages:read"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := b.clientPost(t, oauth.PathRevoke, url.Values{"token": {tok.RefreshToken}}); status != 200 {
		t.Fatalf("revoke refresh: %d", status)
	}
	if _, err := b.authn.AuthenticateToken(ctx, tok.AccessToken); !isAPIError(err, 190, 467) {
		t.Errorf("access token after its refresh token was revoked: %v", err)
	}
	if status, body := b.clientPost(t, oauth.PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}); status != 400 || body["error"] != "invalid_grant" {
		t.Errorf("revoked refresh token: %d %v", status, body)
	}
	if status, body := b.clientPost(t, oauth.PathRevoke, url.Values{}); status != 400 || body["error"] != "invalid_request" {
		t.Errorf("revoke without token: %d %v", status, body)
	}
}

func TestClientAuthentication(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	// Characters that HTTP Basic and form encoding both care about.
	secret := "s3cr:t/+ =&%ü?#"
	if _, err := b.IDs.Apps.SetClientSecret(ctx, b.App.ID, secret); err != nil {
		t.Fatal(err)
	}
	b.App.ClientSecret = secret

	t.Run("client_secret_basic with special characters, through x/oauth2", func(t *testing.T) {
		verifier := oauth2.GenerateVerifier()
		cfg := b.config()
		cfg.Endpoint.AuthStyle = oauth2.AuthStyleInHeader
		if _, err := cfg.Exchange(ctx, codeFlow(t, b, b.Owner, verifier), oauth2.VerifierOption(verifier)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("client_secret_post with special characters, through x/oauth2", func(t *testing.T) {
		verifier := oauth2.GenerateVerifier()
		cfg := b.config()
		cfg.Endpoint.AuthStyle = oauth2.AuthStyleInParams
		if _, err := cfg.Exchange(ctx, codeFlow(t, b, b.Owner, verifier), oauth2.VerifierOption(verifier)); err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct {
		name   string
		send   func(req *http.Request, v url.Values)
		status int
		want   string
	}{
		{"basic credentials not form-urlencoded fail", func(req *http.Request, v url.Values) {
			req.SetBasicAuth(b.App.ClientID, secret) // '+' would decode as a space
		}, 401, "invalid_client"},
		{"both methods at once are refused", func(req *http.Request, v url.Values) {
			req.SetBasicAuth(url.QueryEscape(b.App.ClientID), url.QueryEscape(secret))
			v.Set("client_secret", secret)
		}, 400, "invalid_request"},
		{"no client authentication is invalid_client", func(req *http.Request, v url.Values) {
			v.Set("client_id", b.App.ClientID)
		}, 401, "invalid_client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := url.Values{"grant_type": {"client_credentials"}}
			req, _ := http.NewRequest(http.MethodPost, b.url+oauth.PathToken, nil)
			tc.send(req, v)
			req.Body = http.NoBody
			req2, _ := http.NewRequest(http.MethodPost, b.url+oauth.PathToken, strings.NewReader(v.Encode()))
			req2.Header = req.Header
			req2.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			res, err := http.DefaultClient.Do(req2)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var body map[string]any
			_ = jsonDecode(res, &body)
			if res.StatusCode != tc.status || body["error"] != tc.want {
				t.Fatalf("got %d %v", res.StatusCode, body)
			}
		})
	}
}

func TestClientCredentialsIssueSystemUserTokens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	status, body := b.clientPost(t, oauth.PathToken, url.Values{"grant_type": {"client_credentials"}, "scope": {"svcchat:send"}})
	if status != 200 || body["refresh_token"] != nil || body["scope"] != "svcchat:send" || body["expires_in"] != float64(3600) {
		t.Fatalf("got %d %v", status, body)
	}
	p, err := b.authn.AuthenticateToken(ctx, body["access_token"].(string))
	if err != nil || p.Kind != pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER || p.AppID != b.App.ID || p.UserID != "" {
		t.Fatalf("principal = %+v, %v", p, err)
	}
	if status, body := b.clientPost(t, oauth.PathToken, url.Values{"grant_type": {"client_credentials"}, "scope": {"openid"}}); status != 400 || body["error"] != "invalid_scope" {
		t.Errorf("openid without a user: %d %v", status, body)
	}
}

func TestLiveAppsOpenToEveryoneForApprovedScopesOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if _, err := b.IDs.Review.SubmitForReview(ctx, b.App.ID, []string{"public_profile", "svcchat:send"}, 90); err != nil {
		t.Fatal(err)
	}
	if _, err := b.IDs.Review.ApproveScope(ctx, b.Staff.ID, b.App.ID, "svcchat:send"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.IDs.Review.GoLive(ctx, b.App.ID); err != nil {
		t.Fatal(err)
	}
	verifier := oauth2.GenerateVerifier()
	tok, err := b.config().Exchange(ctx, codeFlow(t, b, b.Stranger, verifier, "openid", "public_profile", "svcchat:send"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("a stranger authorizes a live app: %v", err)
	}
	p, err := b.authn.AuthenticateToken(ctx, tok.AccessToken)
	if err != nil || !p.Live {
		t.Fatalf("principal = %+v, %v", p, err)
	}
	cb := b.browser(t).authorize(b.config("pages:manage").AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), b.Stranger, "allow")
	if cb.Query().Get("error") != "invalid_scope" {
		t.Errorf("unapproved scope on a live app: %s", cb)
	}
}

func TestUserinfoNeedsAUserTokenWithOpenID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	verifier := oauth2.GenerateVerifier()
	tok, err := b.config().Exchange(ctx, codeFlow(t, b, b.Owner, verifier, "public_profile"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, token string
		status      int
	}{{"without openid", tok.AccessToken, 403}, {"unknown token", "nope", 401}, {"no token", "", 401}} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, b.url+oauth.PathUserinfo, nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.status || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("got %d %q", res.StatusCode, res.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

func isAPIError(err error, code, subcode int) bool {
	e, ok := apierr.As(err)
	return ok && e.Code == code && e.Subcode == subcode
}

// Issue 16: a Test User removed from a development app kept access for the
// refresh token's 60 days. A refresh re-checks who may authorize the app.
func TestARefreshByAUserRemovedFromTheAppIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	verifier := oauth2.GenerateVerifier()
	code := codeFlow(t, b, b.Consumer, verifier, "public_profile")
	tok, err := b.config().Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Pool.Exec(ctx, "DELETE FROM core.app_test_users WHERE app_id = $1 AND user_id = $2",
		mustInt(t, b.App.ID), mustInt(t, b.Consumer.ID)); err != nil {
		t.Fatal(err)
	}
	status, body := b.clientPost(t, oauth.PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}})
	if status != 400 || body["error"] != "invalid_grant" {
		t.Fatalf("refresh after removal: %d %v, want invalid_grant", status, body)
	}
}

func mustInt(t *testing.T, id string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestEveryGrantAnswersTokenTypeBearer checks issue 28 item 8: the token
// endpoint spells token_type "Bearer" (RFC 6750's examples, Meta's) from
// every grant, as sent on the wire (clients such as openid-client lower
// it themselves; the wire is one spelling).
func TestEveryGrantAnswersTokenTypeBearer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	verifier := oauth2.GenerateVerifier()
	code := codeFlow(t, b, b.Owner, verifier, "pages:read")
	status, byCode := b.clientPost(t, oauth.PathToken, url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {identitytest.RedirectURI}, "code_verifier": {verifier}})
	if status != 200 {
		t.Fatalf("authorization_code: %d %v", status, byCode)
	}
	refresh, _ := byCode["refresh_token"].(string)
	status, byRefresh := b.clientPost(t, oauth.PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}})
	if status != 200 {
		t.Fatalf("refresh_token: %d %v", status, byRefresh)
	}
	status, byClient := b.clientPost(t, oauth.PathToken, url.Values{"grant_type": {"client_credentials"}, "scope": {"svcchat:send"}})
	if status != 200 {
		t.Fatalf("client_credentials: %d %v", status, byClient)
	}
	for grant, body := range map[string]map[string]any{"authorization_code": byCode, "refresh_token": byRefresh, "client_credentials": byClient} {
		if body["token_type"] != "Bearer" {
			t.Errorf("%s: token_type %v, want Bearer", grant, body["token_type"])
		}
	}
}

// Authenticated clients are remembered for auth.DefaultCacheTTL (an
// exchange is then one round trip to PostgreSQL): a secret replaced through
// this gateway stops at once, one replaced through another gateway within
// the bound every revocation is stated against; a new secret works at once
// and a wrong one never.
func TestAReplacedClientSecretStopsAtOnceHereAndWithinTheCacheBoundElsewhere(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	revoke := func(secret string) (int, map[string]any) {
		return b.postForm(t, oauth.PathRevoke, url.Values{"token": {"svc_unknown_token"}}, b.App.ClientID, secret)
	}
	refused := func(what, secret string) {
		t.Helper()
		if status, body := revoke(secret); status != 401 || body["error"] != "invalid_client" {
			t.Errorf("%s: %d %v, want 401 invalid_client", what, status, body)
		}
	}
	accepted := func(what, secret string) {
		t.Helper()
		if status, body := revoke(secret); status != 200 {
			t.Errorf("%s: %d %v, want 200", what, status, body)
		}
	}
	old := b.App.ClientSecret
	accepted("the current secret", old)
	here, err := b.IDs.Apps.SetClientSecret(ctx, b.App.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	refused("the secret replaced here, at once", old)
	accepted("its replacement, at once", here)
	refused("a wrong secret", here+"x")

	// Another gateway: its own identity.Service on the same database.
	elsewhere, err := identity.New(b.Pool).Apps.SetClientSecret(ctx, b.App.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	accepted("the replacement from elsewhere, at once", elsewhere)
	refused("the secret replaced elsewhere, once its replacement was seen", here)

	// The same again without using the new secret first: only the bound ends
	// the old one.
	accepted("the current secret", elsewhere)
	if _, err := identity.New(b.Pool).Apps.SetClientSecret(ctx, b.App.ID, ""); err != nil {
		t.Fatal(err)
	}
	time.Sleep(auth.DefaultCacheTTL + 100*time.Millisecond)
	refused("the secret replaced elsewhere, after "+auth.DefaultCacheTTL.String(), elsewhere)
}
