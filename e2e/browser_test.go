package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/svcplatform/svc/internal/browsertest"
	"github.com/svcplatform/svc/internal/gatewaytest"
)

// A person in a real browser signs in on the login page, allows the app on
// the consent page, and lands on the app's redirect URI with a code the app
// exchanges (with PKCE) for a token that reads the person's Pages.
func TestAPersonInABrowserSignsInAndAllowsAnApp(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	owner := c.Users["owner"]

	landed := make(chan url.Values, 1)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case landed <- r.URL.Query():
		default:
		}
		_, _ = w.Write([]byte(`<!doctype html><p id="done">back at the app</p>`))
	}))
	defer app.Close()
	redirect := app.URL + "/callback"

	w := &graphWorld{g: g, c: c}
	res, body := w.post(t, signInAt(t, g.URL, owner.Username, owner.Password),
		map[string]any{"node": "me/apps", "name": "Browser app", "redirect_uris": []string{redirect}}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("register app: %d %s", res.StatusCode, body)
	}
	reg := decode[struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}](t, body)
	cfg := oauth2.Config{ClientID: reg.ClientID, ClientSecret: reg.ClientSecret, RedirectURL: redirect,
		Scopes:   []string{"pages:read"},
		Endpoint: oauth2.Endpoint{AuthURL: g.URL + "/oauth/authorize", TokenURL: g.URL + "/api/oauth/token"}}
	verifier := oauth2.GenerateVerifier()

	b := browsertest.New(t)
	b.Do("open the authorization URL", chromedp.Navigate(cfg.AuthCodeURL("st-1", oauth2.S256ChallengeOption(verifier))),
		chromedp.WaitVisible(chromedp.ID("username")))
	b.Shot("login")
	b.Do("sign in",
		chromedp.SendKeys(chromedp.ID("username"), owner.Username),
		chromedp.SendKeys(chromedp.ID("password"), owner.Password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[value=allow]`)))
	consent := browsertest.Get(b, "read the consent page", chromedp.Text(chromedp.CSS("body")))
	if !strings.Contains(consent, "Browser app") || !strings.Contains(consent, "pages:read") {
		t.Errorf("the consent page does not name the app and the scope:\n%s", consent)
	}
	b.Shot("consent")
	b.Do("allow", chromedp.Click(chromedp.CSS(`button[value=allow]`)), chromedp.WaitVisible(chromedp.ID("done")))
	b.Shot("redirected")

	q := <-landed
	if q.Get("state") != "st-1" || q.Get("iss") == "" || q.Get("code") == "" {
		t.Fatalf("redirect query = %v", q)
	}
	tok, err := cfg.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange the browser's code: %v", err)
	}
	res, body = w.get(t, tok.AccessToken, url.Values{"node": {"me/pages"}})
	if res.StatusCode != 200 || !strings.Contains(string(body), c.Page.ID) {
		t.Fatalf("me/pages with the token: %d %s", res.StatusCode, body)
	}
}

// In a real browser, the consent page lists the person's Pages as checked
// checkboxes named page_id when a Page scope is asked (CONTRACT §17); the
// person unchecks one, allows, and the app's token lists only the other.
func TestAPersonInABrowserChoosesWhichPagesAnAppMayActOn(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	owner := c.Users["owner"]
	landed := make(chan url.Values, 1)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case landed <- r.URL.Query():
		default:
		}
		_, _ = w.Write([]byte(`<!doctype html><p id="done">back at the app</p>`))
	}))
	defer app.Close()
	redirect := app.URL + "/callback"

	w := &graphWorld{g: g, c: c}
	session := signInAt(t, g.URL, owner.Username, owner.Password)
	second := decode[struct{ ID string }](t, w.mustPost(t, session, map[string]any{"node": "me/pages", "name": "Second Shop", "category": "Shop"})).ID
	reg := decode[struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}](t, w.mustPost(t, session, map[string]any{"node": "me/apps", "name": "Pages app", "redirect_uris": []string{redirect}}))
	cfg := oauth2.Config{ClientID: reg.ClientID, ClientSecret: reg.ClientSecret, RedirectURL: redirect,
		Scopes:   []string{"pages:read"},
		Endpoint: oauth2.Endpoint{AuthURL: g.URL + "/oauth/authorize", TokenURL: g.URL + "/api/oauth/token"}}
	verifier := oauth2.GenerateVerifier()

	b := browsertest.New(t)
	b.Do("open the authorization URL", chromedp.Navigate(cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier))),
		chromedp.WaitVisible(chromedp.ID("username")))
	b.Do("sign in",
		chromedp.SendKeys(chromedp.ID("username"), owner.Username),
		chromedp.SendKeys(chromedp.ID("password"), owner.Password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`input[name=page_id]`)))
	checked := browsertest.Get(b, "read the Page checkboxes", chromedp.Evaluate[string](
		`Array.from(document.querySelectorAll('input[type=checkbox][name=page_id]')).map(i => i.value + (i.checked ? ':on' : ':off')).join(',')`))
	if want := c.Page.ID + ":on," + second + ":on"; checked != want {
		t.Fatalf("Page checkboxes = %q, want %q", checked, want)
	}
	b.Shot("consent-pages")
	b.Do("uncheck the second Page and allow",
		chromedp.Click(chromedp.CSS(`input[name=page_id][value="`+second+`"]`)),
		chromedp.Click(chromedp.CSS(`button[value=allow]`)), chromedp.WaitVisible(chromedp.ID("done")))

	q := <-landed
	tok, err := cfg.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange the browser's code: %v", err)
	}
	if got := decode[pageList](t, w.mustGet(t, tok.AccessToken, "me/pages")).ids(); len(got) != 1 || got[0] != c.Page.ID {
		t.Fatalf("me/pages with the token = %v, want only %s", got, c.Page.ID)
	}
	res, body := w.get(t, tok.AccessToken, url.Values{"node": {"page/" + second}})
	wantGraphError(t, res, body, 403, 200, 2069007)
}
