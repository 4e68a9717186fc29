package e2e

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/svcplatform/svc/internal/browsertest"
	"github.com/svcplatform/svc/internal/gatewaytest"
)

// Without JavaScript the console's plain forms work, in a real browser with
// scripts turned off: a developer signs in, creates an app (its secrets
// shown once), adds a redirect URI, sees a refused one's message beside its
// field, links the Page, removes a redirect URI, drafts a template (a bad
// name refused beside its field) and approves it. Every form posts to the
// console, which calls the same public API in-process.
func TestTheConsolesPlainFormsWorkWithoutJavaScript(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	owner := c.Users["owner"]
	console := g.URL + "/developers/console"
	b := browsertest.New(t)
	b.Do("turn JavaScript off", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))

	b.Do("open the console signed out", chromedp.Navigate(console), chromedp.WaitVisible(chromedp.ID("username")))
	b.Load("sign in",
		chromedp.SendKeys(chromedp.ID("username"), owner.Username),
		chromedp.SendKeys(chromedp.ID("password"), owner.Password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)))
	b.Do("see the apps page", chromedp.WaitVisible(chromedp.ID("create-app")))
	if ran := browsertest.Get(b, "see that no script ran", chromedp.Evaluate[bool](`document.querySelector('form[data-bound]') !== null`)); ran {
		t.Fatal("a page script ran: JavaScript is not off")
	}
	b.Do("see the seeded app, listed by the server", waitText("#apps", "Demo App"), chromedp.WaitVisible(chromedp.ID("noscript")))
	b.Shot("plain-apps")

	b.Load("create an app",
		chromedp.SendKeys(chromedp.ID("app-name-input"), "Plain app"),
		chromedp.SendKeys(chromedp.ID("app-redirects"), "https://plain.example/cb"),
		chromedp.Click(chromedp.CSS(`input[name=products][value=svcchat]`)),
		chromedp.Click(chromedp.CSS(`#create-app button[type=submit]`)))
	b.Do("see its secrets, once",
		chromedp.WaitVisible(chromedp.CSS(`[data-secret=client_secret]`)),
		waitText("#apps", "Plain app"))
	if key := browsertest.Get(b, "read the app key", chromedp.Text(chromedp.CSS(`[data-secret=api_key]`))); !strings.HasPrefix(key, "svc_test_") {
		t.Fatalf("the new app's key is not shown: %q", key)
	}
	secret := browsertest.Get(b, "read the client secret", chromedp.Text(chromedp.CSS(`[data-secret=client_secret]`)))
	if whsec := browsertest.Get(b, "read the webhook secret", chromedp.Text(chromedp.CSS(`[data-secret=webhook_secret]`))); whsec != "whsec_"+base64.StdEncoding.EncodeToString([]byte(secret)) {
		t.Errorf("the webhook secret shown is %q, not whsec_ and the base64 of the client secret %q", whsec, secret)
	}
	b.Shot("plain-app-created")

	b.Load("open the app's settings", chromedp.Click(chromedp.ID("open-created")))
	b.Do("see the app and its redirect URI", waitText("#overview", "Plain app"), waitText("#redirects", "https://plain.example/cb"))
	b.Load("add a redirect URI",
		chromedp.SendKeys(chromedp.ID("redirect-uri"), "https://plain.example/second"),
		chromedp.Click(chromedp.CSS(`#add-redirect button[type=submit]`)))
	b.Do("see it added",
		waitText("#done", "Redirect URI added"),
		waitText("#redirects", "https://plain.example/second"))
	if status := b.Load("add a refused redirect URI",
		chromedp.SendKeys(chromedp.ID("redirect-uri"), "ftp://nowhere"),
		chromedp.Click(chromedp.CSS(`#add-redirect button[type=submit]`))); status != 400 {
		t.Errorf("the refused form's page answered %d, want the API's 400", status)
	}
	b.Do("a refused redirect URI shows its message beside the field",
		chromedp.WaitVisible(chromedp.CSS(`#add-redirect .field-error[data-field=uri][data-code="100"]`)))
	if v := browsertest.Get(b, "read the refused value", chromedp.Value(chromedp.ID("redirect-uri"))); v != "ftp://nowhere" {
		t.Errorf("the refused form holds %q, want what was typed", v)
	}
	b.Shot("plain-refused-redirect")
	b.Load("link the Page",
		chromedp.SetValue(chromedp.ID("link-page-id"), c.Page.ID),
		chromedp.Click(chromedp.CSS(`#link-page button[type=submit]`)))
	b.Do("see it linked",
		waitText("#done", "Page linked"),
		waitText("#links", c.Page.Name))
	b.Load("remove a redirect URI",
		chromedp.Click(chromedp.CSS(`#redirects tr:has(input[value="https://plain.example/second"]) button`)))
	b.Do("see it removed",
		waitText("#done", "Redirect URI removed"))
	if list := browsertest.Get(b, "read the redirect URIs", chromedp.Text(chromedp.ID("redirects"))); strings.Contains(list, "/second") ||
		!strings.Contains(list, "https://plain.example/cb") {
		t.Errorf("after removing one, the redirect URIs read %q", list)
	}
	b.Shot("plain-app-settings")

	appID := browsertest.Get(b, "read the app id", chromedp.Evaluate[string](`document.body.dataset.app`))
	b.Do("open templates", chromedp.Navigate(console+"/apps/"+appID+"/templates"), chromedp.WaitVisible(chromedp.ID("draft")))
	b.Do("see the seeded template", waitText("#templates", "hello_world"))
	b.Load("draft a template with a bad name",
		chromedp.SendKeys(chromedp.ID("template-name"), "Bad Name!"),
		chromedp.SendKeys(chromedp.ID("template-body"), "Order {{order_id}} shipped."),
		chromedp.SendKeys(chromedp.ID("template-params"), "order_id"),
		chromedp.Click(chromedp.CSS(`#draft button[type=submit]`)))
	b.Do("see the name refused beside its field",
		chromedp.WaitVisible(chromedp.CSS(`#draft .field-error[data-field=name]`)))
	b.Shot("plain-refused-template")
	b.Load("draft it again with a good name",
		chromedp.SetValue(chromedp.ID("template-name"), "plain_update"),
		chromedp.Click(chromedp.CSS(`#draft button[type=submit]`)))
	b.Do("see the draft",
		waitText("#done", "Draft saved"),
		waitText(`[data-template=plain_update]`, "draft"))
	b.Load("approve it",
		chromedp.Click(chromedp.CSS(`tr:has([data-template=plain_update]) button`)))
	b.Do("see it approved",
		waitText("#done", "Template approved"),
		waitText(`[data-template=plain_update]`, "approved"))
	b.Shot("plain-template-approved")

	// The docs search is a plain GET form: the console asks the public
	// search in-process and renders the hits as text.
	b.Do("open the reference", chromedp.Navigate(console+"/reference"), chromedp.WaitVisible(chromedp.ID("docs-q")))
	b.Load("search the docs", chromedp.SendKeys(chromedp.ID("docs-q"), "webhook signature"),
		chromedp.Click(chromedp.CSS(`#docs-search button[type=submit]`)))
	b.Do("see marked hits", chromedp.WaitVisible(chromedp.CSS(`#docs-results .docs-hit .docs-snippet mark`)))
	if text := browsertest.Get(b, "read the hits", chromedp.Text(chromedp.ID("docs-results"))); strings.Contains(text, "**") {
		t.Errorf("the hits show the search's markers: %s", text)
	}
	b.Shot("plain-docs-search")
}

// A plain console form is held to the CSRF rule of the session cookie: posted
// without the page's token, with another token, or from another origin, it
// is refused with 403 (subcode 2069008 on the page) and changes nothing;
// with the page's token it is done and the browser is sent back (303).
func TestAPlainConsoleFormWithoutThePagesTokenIsRefusedAndChangesNothing(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	owner := c.Users["owner"]
	session := signInAt(t, g.URL, owner.Username, owner.Password)
	token := consoleCSRFToken(t, g.URL, session)
	page := g.URL + "/developers/console/apps/" + c.App.ID
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(form url.Values, origin string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", page, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: "svc_session", Value: session})
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	redirects := func() string {
		_, body := do(t, "GET", g.URL+"/api/v1/graph?"+url.Values{"node": {"app/" + c.App.ID + "/redirect_uris"}}.Encode(), nil,
			map[string]string{"Authorization": "Bearer " + session})
		return string(body)
	}
	before := redirects()
	add := url.Values{"op": {"add-redirect"}, "uri": {"https://evil.example/cb"}}
	withToken := func(tok string) url.Values {
		f := url.Values{"csrf_token": {tok}}
		for k, v := range add {
			f[k] = v
		}
		return f
	}
	for _, tc := range []struct {
		name   string
		form   url.Values
		origin string
	}{
		{"no token", add, g.URL},
		{"another session's token", withToken("not-this-sessions-token"), g.URL},
		{"the right token from another origin", withToken(token), "https://evil.example"},
	} {
		res, body := post(tc.form, tc.origin)
		if res.StatusCode != 403 || !strings.Contains(body, `data-subcode="2069008"`) {
			t.Errorf("%s: %d, want 403 with subcode 2069008 on the page:\n%s", tc.name, res.StatusCode, body)
		}
	}
	if after := redirects(); after != before || strings.Contains(after, "evil.example") {
		t.Fatalf("refused forms changed the redirect URIs: %s, then %s", before, after)
	}
	res, body := post(withToken(token), g.URL)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/developers/console/apps/"+c.App.ID+"?done=add-redirect" {
		t.Fatalf("with the page's token: %d to %q, want 303 back to the page:\n%s", res.StatusCode, res.Header.Get("Location"), body)
	}
	if after := redirects(); !strings.Contains(after, "https://evil.example/cb") {
		t.Errorf("the accepted form did not add the redirect URI: %s", after)
	}
}
