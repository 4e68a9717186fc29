package bench

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/svcplatform/svc/internal/oauthtest"
)

// OAuth paths of the gateway (gateway/internal/oauth).
const (
	pathAuthorize = "/oauth/authorize"
	pathToken     = "/api/oauth/token"
)

// OAuthClient drives the gateway's authorization code flow the way a browser
// (internal/oauthtest's Agent) and an app do: it signs in through the HTML
// login form, presses Allow on
// the consent page, and exchanges the code (PKCE S256) at the token
// endpoint. Its cookie jar keeps the session, so later codes are issued
// without any page (consent is remembered; prompt=none).
type OAuthClient struct {
	BaseURL      string
	ClientID     string
	ClientSecret string
	RedirectURI  string
	// Verifier is the PKCE verifier of every code this client requests.
	Verifier string
	browser  *oauthtest.Agent
	api      *http.Client
}

// NewOAuthClient returns a client for the app with the given credentials.
func NewOAuthClient(baseURL, clientID, clientSecret, redirectURI string) (*OAuthClient, error) {
	browser, err := oauthtest.NewAgent(baseURL)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return &OAuthClient{
		BaseURL: strings.TrimRight(baseURL, "/"), ClientID: clientID, ClientSecret: clientSecret, RedirectURI: redirectURI,
		Verifier: base64.RawURLEncoding.EncodeToString(b),
		browser:  browser,
		api:      &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
	}, nil
}

func (c *OAuthClient) authorizeURL(scopes []string, prompt string) string {
	sum := sha256.Sum256([]byte(c.Verifier))
	v := url.Values{
		"client_id": {c.ClientID}, "redirect_uri": {c.RedirectURI}, "response_type": {"code"},
		"scope": {strings.Join(scopes, " ")}, "state": {"bench"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
	}
	if prompt != "" {
		v.Set("prompt", prompt)
	}
	return c.BaseURL + pathAuthorize + "?" + v.Encode()
}

// SignInAndConsent runs the browser side once: sign in as username and
// allow the scopes. It returns the first code.
func (c *OAuthClient) SignInAndConsent(ctx context.Context, username, password string, scopes []string) (string, error) {
	p, err := c.browser.Get(ctx, c.authorizeURL(scopes, ""))
	if err != nil {
		return "", err
	}
	for step := 0; step < 4 && p.Location == nil; step++ {
		if len(p.Forms) != 1 {
			return "", fmt.Errorf("oauth: expected one form at %s, got %d (status %d): %s", p.URL, len(p.Forms), p.Status, cut(p.Body))
		}
		f := p.Forms[0]
		set := url.Values{}
		if _, ok := f.Fields["password"]; ok {
			set.Set("username", username)
			set.Set("password", password)
		} else {
			set.Set("decision", "allow")
		}
		if p, err = c.browser.Submit(ctx, p, f, set, ""); err != nil {
			return "", err
		}
	}
	return codeFrom(p)
}

// Code asks for one more code with prompt=none (signed in, consented).
func (c *OAuthClient) Code(ctx context.Context, scopes []string) (string, error) {
	p, err := c.browser.Get(ctx, c.authorizeURL(scopes, "none"))
	if err != nil {
		return "", err
	}
	return codeFrom(p)
}

// Codes asks for up to n codes with par requests at a time, stopping early
// at until; it returns the codes issued.
func (c *OAuthClient) Codes(ctx context.Context, n, par int, scopes []string, until time.Time) ([]string, error) {
	var (
		mu       sync.Mutex
		codes    []string
		firstErr error
		wg       sync.WaitGroup
	)
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && time.Now().Before(until) {
				mu.Lock()
				stop := len(codes) >= n || firstErr != nil
				mu.Unlock()
				if stop {
					return
				}
				code, err := c.Code(ctx, scopes)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				} else if err == nil && len(codes) < n {
					codes = append(codes, code)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return codes, firstErr
	}
	return codes, ctx.Err()
}

// Token is a token endpoint answer.
type Token struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// Exchange redeems a code for tokens.
func (c *OAuthClient) Exchange(ctx context.Context, code string) (*Token, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+pathToken, strings.NewReader(c.ExchangeForm(code)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", c.BasicAuth())
	res, err := c.api.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("oauth: token endpoint answered %d: %s", res.StatusCode, cut(string(body)))
	}
	var t Token
	if err := json.Unmarshal(body, &t); err != nil || t.AccessToken == "" {
		return nil, fmt.Errorf("oauth: no access_token in %s", cut(string(body)))
	}
	return &t, nil
}

// ExchangeForm is the form body redeeming code.
func (c *OAuthClient) ExchangeForm(code string) string {
	return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {c.RedirectURI},
		"code_verifier": {c.Verifier}}.Encode()
}

// BasicAuth is the Authorization header value of the client's credentials
// (RFC 6749 §2.3.1: each part form-encoded first).
func (c *OAuthClient) BasicAuth() string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(c.ClientID)+":"+url.QueryEscape(c.ClientSecret)))
}

func codeFrom(p oauthtest.Page) (string, error) {
	if p.Location == nil {
		return "", fmt.Errorf("oauth: no redirect to the app (status %d at %s): %s", p.Status, p.URL, cut(p.Body))
	}
	q := p.Location.Query()
	if e := q.Get("error"); e != "" {
		return "", fmt.Errorf("oauth: authorization failed: %s: %s", e, q.Get("error_description"))
	}
	code := q.Get("code")
	if code == "" {
		return "", fmt.Errorf("oauth: no code in %s", p.Location)
	}
	return code, nil
}
