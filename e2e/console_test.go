package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/svcplatform/svc/internal/browsertest"
	"github.com/svcplatform/svc/internal/gatewaytest"
)

// waitText waits until an element matching sel contains want.
var waitText = browsertest.WaitText

// A developer does everything in the console, in a real browser: signs in,
// creates an app (its secrets shown once), links the Page, subscribes a
// local receiver (the handshake), sends a test event and sees it delivered
// in the log, replays it, drafts and approves a template, sees a refused
// form's message beside its field, gets a token in the Graph explorer
// through the real OAuth flow with PKCE (the code exchanged on the server,
// no client secret typed into a page) and reads me/pages with it, debugs
// that token, and reads the API reference.
func TestADeveloperWorksInTheConsole(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	owner := c.Users["owner"]
	console := g.URL + "/developers/console"
	b := browsertest.New(t)

	// Sign in: the console sends a signed-out browser to the login page
	// and back.
	b.Do("open the console signed out", chromedp.Navigate(console), chromedp.WaitVisible(chromedp.ID("username")))
	if loc := browsertest.Get(b, "read the login URL", chromedp.Location()); !strings.Contains(loc, "/login?next=") {
		t.Fatalf("a signed-out browser is at %s, want the login page", loc)
	}
	b.Do("sign in",
		chromedp.SendKeys(chromedp.ID("username"), owner.Username),
		chromedp.SendKeys(chromedp.ID("password"), owner.Password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#create-app[data-bound]`)))
	b.Do("see the seeded app", waitText("#apps", "Demo App"))
	b.Shot("apps")

	// Create an app; its secrets are shown once.
	callback := console + "/explorer/callback"
	b.Do("create an app",
		chromedp.SendKeys(chromedp.ID("app-name-input"), "Console app"),
		chromedp.SendKeys(chromedp.ID("app-redirects"), callback),
		chromedp.Click(chromedp.CSS(`input[name=products][value=svcchat]`)),
		chromedp.Click(chromedp.CSS(`#create-app button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-secret=client_secret]`)),
		waitText("#apps", "Console app"))
	b.Shot("app-created")
	secret := browsertest.Get(b, "read the client secret", chromedp.Text(chromedp.CSS(`[data-secret=client_secret]`)))
	apiKey := browsertest.Get(b, "read the app key", chromedp.Text(chromedp.CSS(`[data-secret=api_key]`)))
	if secret == "" || !strings.HasPrefix(apiKey, "svc_test_") {
		t.Fatalf("the new app's secrets are not shown: secret %q, key %q", secret, apiKey)
	}
	if whsec := browsertest.Get(b, "read the webhook secret", chromedp.Text(chromedp.CSS(`[data-secret=webhook_secret]`))); whsec != "whsec_"+base64.StdEncoding.EncodeToString([]byte(secret)) {
		t.Errorf("the webhook secret shown is %q, not whsec_ and the base64 of the client secret", whsec)
	}

	// Settings: link the seeded Page with svcchat.
	b.Do("open the app's settings", chromedp.Click(chromedp.ID("open-created")), chromedp.WaitVisible(chromedp.ID("link-page")))
	b.Do("see the overview", waitText("#overview", "Console app"))
	appID := browsertest.Get(b, "read the app id", chromedp.Evaluate[string](`document.body.dataset.app`))
	// The Page is chosen in the page itself once its option is there: the
	// list is filled while the test runs, and a node looked up first can
	// be gone by the time it is set.
	b.Do("link the Page",
		chromedp.WaitVisible(chromedp.CSS(`#link-page[data-bound]`)),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => { const s = document.getElementById('link-page-id');
			if (!s || !s.querySelector('option[value="%s"]')) return false; s.value = %q; return true; })()`, c.Page.ID, c.Page.ID)),
		chromedp.Click(chromedp.CSS(`#link-page button[type=submit]`)),
		waitText("#links", c.Page.Name))
	b.Do("add a redirect URI",
		chromedp.SendKeys(chromedp.ID("redirect-uri"), "https://app.example/oauth"),
		chromedp.Click(chromedp.CSS(`#add-redirect button[type=submit]`)),
		waitText("#redirects", "https://app.example/oauth"), waitText("#redirects", callback))
	b.Do("a refused redirect URI shows its message beside the field",
		chromedp.SendKeys(chromedp.ID("redirect-uri"), "ftp://nowhere"),
		chromedp.Click(chromedp.CSS(`#add-redirect button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#add-redirect .field-error[data-field=uri]`)))
	b.Do("rotate the app key",
		chromedp.Click(chromedp.CSS(`#rotate-key button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-key [data-secret=api_key]`)))
	rotated := browsertest.Get(b, "read the new key", chromedp.Text(chromedp.CSS(`#new-key [data-secret=api_key]`)))
	if !strings.HasPrefix(rotated, "svc_test_") || rotated == apiKey {
		t.Errorf("the rotated key %q is not a new svc_test_ key", rotated)
	}
	b.Do("rotate the client secret",
		chromedp.SetValue(chromedp.CSS(`#rotate-key select[name=kind]`), "client_secret"),
		chromedp.Click(chromedp.CSS(`#rotate-key button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-key [data-secret=webhook_secret]`)))
	newSecret := browsertest.Get(b, "read the new client secret", chromedp.Text(chromedp.CSS(`#new-key [data-secret=client_secret]`)))
	if whsec := browsertest.Get(b, "read the new webhook secret", chromedp.Text(chromedp.CSS(`#new-key [data-secret=webhook_secret]`))); newSecret == secret ||
		whsec != "whsec_"+base64.StdEncoding.EncodeToString([]byte(newSecret)) {
		t.Errorf("after a rotation the console shows client secret %q and webhook secret %q", newSecret, whsec)
	}
	secret = newSecret // deliveries' X-Svc-Signature-256 is by the new secret
	b.Do("create a Test User",
		chromedp.Click(chromedp.CSS(`#add-test-user button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-secret=test_password]`)))
	testUser := browsertest.Get(b, "read the Test User", chromedp.Text(chromedp.CSS(`[data-secret=test_username]`)))
	b.Do("see the Test User listed", waitText("#test-users", testUser), waitText("#roles", "admin"))
	b.Shot("app-settings")

	// Webhooks: subscribe a local receiver, send a test event, see it
	// delivered in the log, replay it.
	hooks := newHookReceiver(t, secret)
	b.Do("open webhooks", chromedp.Navigate(console+"/apps/"+appID+"/webhooks"))
	b.Do("see the event types", chromedp.WaitVisible(chromedp.CSS(`input[name=events][value="page.message.received"]`)))
	// The handshake and the delivery are long operations: the page shows
	// their progress. Observers record each sign of it in the page as it
	// appears, and the test reads the records once the operation is done,
	// so nothing depends on how long either takes.
	b.Do("watch for progress", watchProgress("#subscribe"), watchProgress("#test-event"), watchProgress("#test-result"))
	b.Do("subscribe the receiver",
		chromedp.SendKeys(chromedp.ID("callback-url"), hooks.srv.URL+"/hook"),
		chromedp.Click(chromedp.CSS(`input[name=events][value="page.message.received"]`)),
		chromedp.SendKeys(chromedp.ID("verify-token"), hookVerifyToken),
		chromedp.Click(chromedp.CSS(`#subscribe button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("subscribed")),
		waitText("#subscribed-url", hooks.srv.URL))
	b.Do("send a test event",
		chromedp.SendKeys(chromedp.ID("test-type"), "book.post.created"),
		chromedp.Click(chromedp.CSS(`#test-event button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#test-result [data-status=succeeded]`)),
		chromedp.WaitVisible(chromedp.CSS(`#deliveries [data-delivery]`)))
	if seen := progressSeen(b, "#subscribe"); !slices.Contains(seen, "busy") || !slices.Contains(seen, "text: Verifying your callback URL…") {
		t.Errorf("saving the subscription showed no progress while the handshake ran: %q", seen)
	}
	if seen := progressSeen(b, "#test-result"); !slices.ContainsFunc(seen, func(s string) bool {
		return strings.HasPrefix(s, "progress: Test event evt_") && strings.HasSuffix(s, "waiting for the delivery…")
	}) {
		t.Errorf("sending a test event showed no progress line while the delivery was pending: %q", seen)
	}
	if seen := progressSeen(b, "#test-event"); !slices.Contains(seen, "busy") {
		t.Errorf("the test event form was not marked busy while sending: %q", seen)
	}
	first := browsertest.Get(b, "read the delivery", chromedp.Evaluate[string](`document.querySelector('#test-result [data-delivery]').dataset.delivery`))
	event := waitForType(t, hooks, "book.post.created")
	b.Shot("webhook-delivered")
	b.Do("replay it",
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`button[data-replay=%q]`, first))),
		waitText("#test-result", "Replay of "+first),
		chromedp.WaitVisible(chromedp.CSS(`#test-result [data-status=succeeded]`)))
	b.Shot("webhook-replayed")
	if d := hooks.waitFor(event, 2); d[0].delivery == d[1].delivery {
		t.Errorf("the replay reused the delivery id %s", d[0].delivery)
	}

	// Templates: a refused draft shows the message beside its field; a good
	// one is drafted and approved.
	b.Do("open templates", chromedp.Navigate(console+"/apps/"+appID+"/templates"), chromedp.WaitVisible(chromedp.CSS(`#draft[data-bound]`)))
	b.Do("see the templates", waitText("#templates", "hello_world"))
	b.Do("draft a template with a bad name",
		chromedp.SendKeys(chromedp.ID("template-name"), "Bad Name!"),
		chromedp.SendKeys(chromedp.ID("template-body"), "Order {{order_id}} shipped."),
		chromedp.SendKeys(chromedp.ID("template-params"), "order_id"),
		chromedp.Click(chromedp.CSS(`#draft button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#draft .field-error[data-field=name]`)))
	b.Shot("refused-form")
	b.Do("draft it again with a good name",
		chromedp.SetValue(chromedp.ID("template-name"), "shipping_update"),
		chromedp.Click(chromedp.CSS(`#draft button[type=submit]`)),
		waitText(`[data-template=shipping_update]`, "draft"))
	b.Do("approve it",
		chromedp.Click(chromedp.CSS(`tr:has([data-template=shipping_update]) button`)),
		waitText(`[data-template=shipping_update]`, "approved"))
	b.Shot("template-approved")

	// The Graph explorer: a token through the real OAuth flow with PKCE,
	// then me/pages with it.
	b.Do("open the explorer", chromedp.Navigate(console+"/explorer"), chromedp.WaitVisible(chromedp.CSS(`#authorize[data-bound]`)))
	b.Do("see the apps", chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector('#explorer-app option[value="%s"]')`, appID)))
	b.Shot("explorer")
	b.Do("ask for a token",
		chromedp.SetValue(chromedp.ID("explorer-app"), appID),
		chromedp.Click(chromedp.CSS(`#authorize button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[value=allow]`)))
	b.Shot("explorer-consent")
	// The callback page has the gateway exchange the code on the server:
	// nobody types the client secret, and the page never holds it.
	b.Do("allow; the code is exchanged on the server", chromedp.Click(chromedp.CSS(`button[value=allow]`)),
		chromedp.WaitVisible(chromedp.ID("request")))
	b.Do("see the token", chromedp.WaitVisible(chromedp.ID("have-token")))
	b.Do("read me/pages",
		chromedp.SetValue(chromedp.ID("req-node"), "me/pages"),
		chromedp.Click(chromedp.CSS(`#request button[type=submit]`)),
		waitText("#response-body", c.Page.ID))
	curl := browsertest.Get(b, "read the curl command", chromedp.Text(chromedp.ID("curl")))
	if !strings.Contains(curl, "node=me%2Fpages") {
		t.Errorf("the explorer's curl command does not name the node: %s", curl)
	}
	// The token is shown (masked until clicked) as the shell line that sets
	// $TOKEN; that line and the curl command, pasted into a shell, work.
	if masked := browsertest.Get(b, "see the masked token", chromedp.Text(chromedp.ID("token-value"))); strings.Count(masked, "…") != 1 {
		t.Errorf("the token is not masked before a click: %q", masked)
	}
	b.Do("show the token", chromedp.Click(chromedp.ID("token-value")))
	export := browsertest.Get(b, "read the token line", chromedp.Text(chromedp.ID("token-value")))
	if !strings.HasPrefix(export, "export TOKEN='svcat_") {
		t.Errorf("the shown token line: %q", export)
	}
	pasted, err := exec.Command("sh", "-c", export+"\n"+curl+" -sS").CombinedOutput()
	if err != nil || !strings.Contains(string(pasted), c.Page.ID) {
		t.Errorf("the token line and curl command pasted into a shell: %v\n%s\n%s\n%s", err, export, curl, pasted)
	}
	b.Shot("explorer-response")

	// The token debugger describes the explorer's token with itself.
	b.Do("open the debugger", chromedp.Navigate(console+"/debugger"), chromedp.WaitVisible(chromedp.ID("input-token")))
	b.Do("debug the token", chromedp.Click(chromedp.CSS(`#debug button[type=submit]`)),
		waitText(`[data-field=is_valid]`, "true"), waitText(`[data-field=app_id]`, appID))
	b.Shot("debugger")

	// The completions playground answers as the app, and usage is shown.
	b.Do("open completions", chromedp.Navigate(console+"/apps/"+appID+"/completions"), chromedp.WaitVisible(chromedp.CSS(`#complete[data-bound]`)))
	b.Do("try a completion", chromedp.SendKeys(chromedp.ID("user-message"), "Hello"),
		chromedp.Click(chromedp.CSS(`#complete button[type=submit]`)),
		waitText("#completion", "finish_reason stop"),
		waitText("#usage", "svc-builtin"))
	b.Shot("completions")

	// The API reference lists the Graph nodes and filters them.
	b.Do("open the reference", chromedp.Navigate(console+"/reference"), chromedp.WaitVisible(chromedp.ID("search-q")))
	b.Do("read the reference", waitText("#reference", "svcchat"),
		chromedp.SendKeys(chromedp.ID("search-q"), "subscriptions"),
		waitText("#reference", "app/{app_id}/subscriptions"),
		// with each node's fields, the required ones marked (CONTRACT §20).
		waitText("#reference", "verify_token string, required;"), waitText("#reference", "callback_url string, required;"), waitText("#reference", "Answer:"))
	// It is rendered from /api/v1/openapi.json: REST paths and Graph nodes
	// with who may call them.
	b.Do("search the reference", chromedp.Navigate(console+"/reference"), chromedp.WaitVisible(chromedp.ID("search-q")), chromedp.SendKeys(chromedp.ID("search-q"), "checkout"),
		waitText("#reference", "POST maison/{maison_id}/checkout"), waitText("#reference", "commerce_checkout"))
	b.Shot("reference")
	// The docs search box asks the public docs search and shows each hit's
	// title, path and passage as text: the matched words marked, the
	// server's ** markers gone. An empty query's refusal names q.
	b.Do("search the docs",
		chromedp.WaitVisible(chromedp.CSS(`#docs-search[data-bound]`)),
		chromedp.SendKeys(chromedp.ID("docs-q"), "webhook signature"),
		chromedp.Click(chromedp.CSS(`#docs-search button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#docs-results .docs-hit .docs-snippet mark`)))
	hit := browsertest.Get(b, "read the first hit", chromedp.Evaluate[map[string]string](
		`(() => { const h = document.querySelector('#docs-results .docs-hit:has(mark)');
		  return { path: h.dataset.path, title: h.querySelector('.docs-title').textContent, text: h.textContent,
		    mark: h.querySelector('mark').textContent }; })()`))
	if hit["path"] == "" || hit["title"] == "" || strings.Contains(hit["text"], "**") || !strings.Contains(strings.ToLower(hit["mark"]), "webhook") &&
		!strings.Contains(strings.ToLower(hit["mark"]), "signature") {
		t.Errorf("a docs search hit reads %+v, want a path, marked words and no ** markers", hit)
	}
	b.Shot("docs-search")
	b.Do("an empty docs search is refused beside its field",
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[string](`document.getElementById('docs-q').value = ''`)(ctx, t)
			return err
		}),
		chromedp.Click(chromedp.CSS(`#docs-search button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#docs-search .field-error[data-field=q]`)))
	if who := browsertest.Get(b, "read who is signed in", chromedp.Text(chromedp.ID("who"))); !strings.Contains(who, "Signed in as") {
		t.Errorf("the header says %q", who)
	}

	// App Review: the wizard submits the scopes the app uses (the explorer
	// was granted public_profile and pages:read); the basic ones pass the
	// automated check, svcchat:send waits for staff.
	// The status table loads after the form and pushes it down: wait for
	// it, or a click aimed at a checkbox before the shift lands elsewhere.
	b.Do("open the App Review wizard", chromedp.Navigate(console+"/apps/"+appID+"/review"), chromedp.WaitVisible(chromedp.CSS(`#review[data-bound]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-scope=public_profile]`)))
	b.Do("submit without a use case: the message is beside the field, in its step",
		chromedp.Click(chromedp.CSS(`input[name=scopes][value=public_profile]`)),
		chromedp.Click(chromedp.CSS(`input[name=scopes][value="pages:read"]`)),
		chromedp.Click(chromedp.CSS(`input[name=scopes][value="svcchat:send"]`)),
		chromedp.Click(chromedp.CSS(`#step-1 [data-next]`)),
		chromedp.SendKeys(chromedp.ID("privacy-policy-url"), "https://app.example/privacy"),
		chromedp.Click(chromedp.CSS(`#step-2 [data-next]`)),
		chromedp.Click(chromedp.CSS(`#review button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#review .field-error[data-field=use_case]`)))
	b.Shot("review-refused")
	b.Do("submit for review",
		chromedp.SendKeys(chromedp.ID("use-case"), "Coffee shop owners sign in so that the app shows their profile name and reads "+
			"their Page to list opening hours; customers get order updates through svcchat messages from that Page."),
		chromedp.Click(chromedp.CSS(`#review button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("submitted")),
		waitText(`[data-scope=public_profile]`, "automated_approved"),
		waitText(`[data-scope="svcchat:send"]`, "pending"))
	b.Shot("review-submitted")

	// Staff approve svcchat:send in the App Review queue, in their own
	// browser.
	staff := c.Users["staff"]
	sb := browsertest.New(t)
	sb.Do("staff open the review queue", chromedp.Navigate(console+"/staff/review"), chromedp.WaitVisible(chromedp.ID("username")))
	sb.Do("staff sign in",
		chromedp.SendKeys(chromedp.ID("username"), staff.Username),
		chromedp.SendKeys(chromedp.ID("password"), staff.Password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("queue")))
	reviewRow := fmt.Sprintf(`form[data-app=%q][data-scope="svcchat:send"]`, appID)
	sb.Do("see the app in the queue", chromedp.WaitVisible(chromedp.CSS(reviewRow)))
	sb.Shot("staff-review-queue")
	sb.Do("approve svcchat:send", chromedp.Click(chromedp.CSS(reviewRow+` button[value=approve]`)),
		chromedp.WaitNotPresent(chromedp.CSS(reviewRow)))

	// Go live: the live key is shown once.
	b.Do("see the approval", chromedp.Navigate(console+"/apps/"+appID+"/review"), chromedp.WaitVisible(chromedp.ID("review")))
	b.Do("read the statuses", waitText(`[data-scope="svcchat:send"]`, "approved"))
	b.Do("go live", chromedp.Navigate(console+"/apps/"+appID), chromedp.WaitVisible(chromedp.CSS(`#go-live[data-bound]`)))
	b.Do("press go live", chromedp.Click(chromedp.CSS(`#go-live button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-secret=live_key]`)), waitText("#app-mode", "live"))
	if live := browsertest.Get(b, "read the live key", chromedp.Text(chromedp.CSS(`[data-secret=live_key]`))); !strings.HasPrefix(live, "svc_live_") {
		t.Errorf("going live showed %q, want a svc_live_ key", live)
	}
	b.Shot("live")

	// A live app submits its draft templates to staff, who approve them in
	// the template queue.
	b.Do("open templates of the live app", chromedp.Navigate(console+"/apps/"+appID+"/templates"), chromedp.WaitVisible(chromedp.CSS(`#draft[data-bound]`)))
	b.Do("draft and submit a template",
		chromedp.SendKeys(chromedp.ID("template-name"), "pickup_ready"),
		chromedp.SendKeys(chromedp.ID("template-body"), "Order {{order_id}} is ready."),
		chromedp.SendKeys(chromedp.ID("template-params"), "order_id"),
		chromedp.Click(chromedp.CSS(`#draft button[type=submit]`)),
		waitText(`[data-template=pickup_ready]`, "draft"),
		chromedp.Click(chromedp.CSS(`tr:has([data-template=pickup_ready]) button:nth-of-type(2)`)),
		waitText(`[data-template=pickup_ready]`, "pending_review"))
	sb.Do("staff open the template queue", chromedp.Navigate(console+"/staff/templates"), chromedp.WaitVisible(chromedp.ID("queue")))
	// shipping_update, which the app approved itself in development, is
	// back in the queue since the app went live (CONTRACT §15).
	sb.Do("see the templates", waitText("#queue", "pickup_ready"), waitText("#queue", "shipping_update"))
	sb.Shot("staff-template-queue")
	pickupRow := `//tr[.//code[text()="pickup_ready"]]`
	sb.Do("approve them", chromedp.Click(chromedp.Search(pickupRow+`//button[@value="approve"]`)),
		chromedp.WaitNotPresent(chromedp.Search(pickupRow)),
		chromedp.Click(chromedp.CSS(`tr:has(code) button[value=approve]`)), waitText("#queue", "The queue is empty"))
	b.Do("see it approved", chromedp.Navigate(console+"/apps/"+appID+"/templates"), chromedp.WaitVisible(chromedp.CSS(`#draft[data-bound]`)))
	b.Do("read its status", waitText(`[data-template=pickup_ready]`, "approved"))
	b.Shot("template-approved-by-staff")

	// Signing out revokes the session: the console sends the browser to
	// the login page again.
	b.Do("sign out", chromedp.Click(chromedp.ID("sign-out")), chromedp.WaitVisible(chromedp.ID("username")))
	b.Do("the console asks to sign in again", chromedp.Navigate(console), chromedp.WaitVisible(chromedp.ID("username")))
}

// The console's pages are not served to a browser that is not signed in,
// and carry the login pages' security headers with a script policy that
// allows only the gateway's own scripts.
func TestConsolePagesNeedASessionAndCarryStrictHeaders(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	res, err := noRedirect.Get(g.URL + "/developers/console/apps/1/webhooks")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login?next="+url.QueryEscape("/developers/console/apps/1/webhooks") {
		t.Fatalf("signed out: %d to %q, want 303 to the login page", res.StatusCode, res.Header.Get("Location"))
	}

	// A bearer session is not a console session: the console is for
	// browsers, signed in with the cookie.
	session := signInAt(t, g.URL, c.Users["owner"].Username, c.Users["owner"].Password)
	req, _ := http.NewRequest("GET", g.URL+"/developers/console", nil)
	req.Header.Set("Authorization", "Bearer "+session)
	if res, err = noRedirect.Do(req); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Errorf("bearer session: %d, want 303 to the login page", res.StatusCode)
	}

	req, _ = http.NewRequest("GET", g.URL+"/developers/console", nil)
	req.AddCookie(&http.Cookie{Name: "svc_session", Value: session})
	if res, err = noRedirect.Do(req); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("signed in: %d", res.StatusCode)
	}
	want := map[string]string{
		"X-Frame-Options":        "DENY",
		"X-Content-Type-Options": "nosniff",
		"Cache-Control":          "no-store",
		"Referrer-Policy":        "same-origin",
	}
	for h, v := range want {
		if got := res.Header.Get(h); got != v {
			t.Errorf("%s = %q, want %q", h, got, v)
		}
	}
	csp := res.Header.Get("Content-Security-Policy")
	for _, d := range []string{"script-src 'self'", "frame-ancestors 'none'", "default-src 'none'"} {
		if !strings.Contains(csp, d) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, d)
		}
	}
	if strings.Contains(csp, "unsafe-inline") {
		t.Errorf("Content-Security-Policy %q allows inline code", csp)
	}
}

// watchProgress records, from now on, each sign of progress inside the
// element matching sel into window.svcProgress[sel]: "busy" when it or an
// element in it is marked aria-busy="true", "progress: <text>" for each
// progress line added, "text: <text>" for each text put in it (a button
// saying what it waits for). Mutation records keep what was added even
// when it is gone by the time the test reads them.
func watchProgress(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](fmt.Sprintf(`((sel) => {
  const seen = [];
  (window.svcProgress = window.svcProgress || {})[sel] = seen;
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === 'attributes' && (r.oldValue === 'true' || r.target.getAttribute('aria-busy') === 'true')) seen.push('busy');
      for (const n of r.addedNodes) {
        if (n.nodeType === Node.TEXT_NODE) seen.push('text: ' + n.textContent);
        else if (n.nodeType === Node.ELEMENT_NODE && n.matches('.progress')) seen.push('progress: ' + n.textContent);
      }
    }
  }).observe(document.querySelector(sel), { subtree: true, childList: true, attributes: true, attributeOldValue: true, attributeFilter: ['aria-busy'] });
  return true;
})(%q)`, sel))(ctx, t)
		return err
	})
}

// progressSeen answers what watchProgress recorded for sel.
func progressSeen(b *browsertest.Browser, sel string) []string {
	return browsertest.Get(b, "read the progress of "+sel, chromedp.Evaluate[[]string](fmt.Sprintf(`window.svcProgress[%q]`, sel)))
}

// waitForType returns the id of the first event of type the receiver got.
func waitForType(t *testing.T, r *hookReceiver, typ string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		for _, d := range r.got {
			if d.body.Type == typ {
				r.mu.Unlock()
				return d.body.ID
			}
		}
		r.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s event delivered", typ)
	return ""
}

// Every state change the console makes, sent with the session cookie but
// without the session's CSRF token (or from another site with it), is
// refused with 403, code 200, subcode 2069008, and changes nothing: every
// read of the app answers the same afterwards. With the token the console
// page carries, the same request passes.
func TestConsoleStateChangesWithoutTheCSRFTokenAreRefusedAndChangeNothing(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	owner := c.Users["owner"]
	session := signInAt(t, g.URL, owner.Username, owner.Password)
	cookie := map[string]string{"Cookie": "svc_session=" + session, "Content-Type": "application/json"}
	app := c.App.ID

	graphPost := func(h map[string]string, body map[string]any) (*http.Response, []byte) {
		b, _ := json.Marshal(body)
		return do(t, "POST", g.URL+"/api/v1/graph", bytes.NewReader(b), h)
	}
	graphDelete := func(h map[string]string, q url.Values) (*http.Response, []byte) {
		return do(t, "DELETE", g.URL+"/api/v1/graph?"+q.Encode(), nil, h)
	}
	// reads is everything the console shows of the app and the user.
	reads := func() string {
		var out strings.Builder
		for _, node := range []string{"me/apps", "app/" + app, "app/" + app + "/redirect_uris", "app/" + app + "/roles",
			"app/" + app + "/test_users", "app/" + app + "/review", "app/" + app + "/page_links", "app/" + app + "/config",
			"app/" + app + "/subscriptions", "app/" + app + "/svcchat_templates", "app/" + app + "/deliveries"} {
			res, body := do(t, "GET", g.URL+"/api/v1/graph?"+url.Values{"node": {node}}.Encode(), nil, cookie)
			if res.StatusCode != 200 {
				t.Fatalf("read %s: %d %s", node, res.StatusCode, body)
			}
			fmt.Fprintf(&out, "%s: %s\n", node, body)
		}
		return out.String()
	}
	before := reads()

	type change struct {
		name string
		send func(h map[string]string) (*http.Response, []byte)
	}
	post := func(node string, body map[string]any) func(map[string]string) (*http.Response, []byte) {
		return func(h map[string]string) (*http.Response, []byte) {
			b := map[string]any{"node": node}
			for k, v := range body {
				b[k] = v
			}
			return graphPost(h, b)
		}
	}
	del := func(node string, q url.Values) func(map[string]string) (*http.Response, []byte) {
		return func(h map[string]string) (*http.Response, []byte) {
			all := url.Values{"node": {node}}
			for k, v := range q {
				all[k] = v
			}
			return graphDelete(h, all)
		}
	}
	rest := func(method, path string, body map[string]any) func(map[string]string) (*http.Response, []byte) {
		return func(h map[string]string) (*http.Response, []byte) {
			b, _ := json.Marshal(body)
			return do(t, method, g.URL+path, bytes.NewReader(b), h)
		}
	}
	a := "app/" + app
	changes := []change{
		{"create an app", post("me/apps", map[string]any{"name": "Forged", "redirect_uris": []string{"https://evil.example/cb"}})},
		{"go live", post(a, map[string]any{"mode": "live"})},
		{"add a redirect URI", post(a+"/redirect_uris", map[string]any{"uri": "https://evil.example/cb"})},
		{"remove a redirect URI", del(a+"/redirect_uris", url.Values{"uri": {c.App.RedirectURI}})},
		{"rotate the app key", post(a+"/keys", map[string]any{"kind": "api_key"})},
		{"rotate the client secret", post(a+"/keys", map[string]any{"kind": "client_secret"})},
		{"add a team member", post(a+"/roles", map[string]any{"user_id": c.Users["consumer"].ID, "role": "admin"})},
		{"remove a team member", del(a+"/roles", url.Values{"user_id": {owner.ID}})},
		{"create a Test User", post(a+"/test_users", nil)},
		{"delete a Test User", del(a+"/test_users", url.Values{"user_id": {c.Users["consumer"].ID}})},
		{"link a Page", post(a+"/page_links", map[string]any{"page_id": c.Page.ID, "products": []string{"book"}})},
		{"unlink a Page", del(a+"/page_links", url.Values{"page_id": {c.Page.ID}})},
		{"save the configuration", post(a+"/config", map[string]any{"platformConfig": map[string]any{"forged": true}})},
		{"subscribe a webhook", post(a+"/subscriptions", map[string]any{"callback_url": "http://127.0.0.1:9/x", "events": []string{"book.post.created"}, "verify_token": "v"})},
		{"delete the subscription", del(a+"/subscriptions", nil)},
		{"send a test event", post(a+"/test_event", map[string]any{"type": "book.post.created"})},
		{"replay a delivery", post("delivery/whd_forged/replay", nil)},
		{"draft a template", post(a+"/svcchat_templates", map[string]any{"name": "forged", "body": "x", "params": []string{}})},
		{"approve a template", post(a+"/svcchat_templates/hello_world/approve", nil)},
		{"submit a template", post(a+"/svcchat_templates/hello_world/submit", nil)},
		{"submit for review", post(a+"/review", map[string]any{"scopes": []string{"pages:read"}, "use_case": "forged"})},
		{"decide an App Review", rest("POST", "/api/developers/admin/app-review", map[string]any{"appId": app, "scope": "pages:read", "decision": "approve"})},
		{"decide a template", rest("POST", "/api/developers/admin/svcchat/template-queue", map[string]any{"id": "1", "decision": "approve"})},
		{"exchange a code in the explorer", rest("POST", "/api/developers/explorer/token", map[string]any{"app_id": app, "code": "forged", "code_verifier": strings.Repeat("v", 43), "redirect_uri": g.URL + "/developers/console/explorer/callback"})},
	}
	for _, ch := range changes {
		res, body := ch.send(cookie)
		if res.StatusCode != 403 || !strings.Contains(string(body), `"error_subcode":2069008`) {
			t.Errorf("%s with the cookie and no CSRF token: %d %s, want 403 with subcode 2069008", ch.name, res.StatusCode, body)
		}
	}
	// The console page carries the session's token; from another site, even
	// the right token is refused.
	token := consoleCSRFToken(t, g.URL, session)
	crossSite := map[string]string{"X-Svc-CSRF": token, "Origin": "https://evil.example"}
	for k, v := range cookie {
		crossSite[k] = v
	}
	for _, ch := range changes {
		res, body := ch.send(crossSite)
		if res.StatusCode != 403 || !strings.Contains(string(body), `"error_subcode":2069008`) {
			t.Errorf("%s from another origin: %d %s, want 403 with subcode 2069008", ch.name, res.StatusCode, body)
		}
	}
	if after := reads(); after != before {
		t.Errorf("refused requests changed what the console shows:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	withToken := map[string]string{"X-Svc-CSRF": token, "Origin": g.URL}
	for k, v := range cookie {
		withToken[k] = v
	}
	res, body := post(a+"/redirect_uris", map[string]any{"uri": "https://app.example/cb"})(withToken)
	if res.StatusCode != 200 {
		t.Fatalf("the same change with the console's token: %d %s", res.StatusCode, body)
	}
}

// consoleCSRFToken reads the CSRF token a console page carries for session.
func consoleCSRFToken(t *testing.T, base, session string) string {
	t.Helper()
	res, body := do(t, "GET", base+"/developers/console", nil, map[string]string{"Cookie": "svc_session=" + session})
	m := regexp.MustCompile(`<meta name="svc-csrf" content="([^"]+)">`).FindSubmatch(body)
	if res.StatusCode != 200 || m == nil {
		t.Fatalf("console page: %d, no CSRF token in %s", res.StatusCode, body)
	}
	return string(m[1])
}

// me/apps lists the apps on the user's teams with the user's role, and
// only for the user's own session: an app key or a user token an app holds
// is refused with 2069001, so an app cannot learn the user's other apps.
func TestMyAppsListsTheUsersTeamsForTheSessionOnly(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	w := &graphWorld{g: g, c: c}
	q := url.Values{"node": {"me/apps"}}

	owner := signInAt(t, g.URL, c.Users["owner"].Username, c.Users["owner"].Password)
	res, body := w.get(t, owner, q)
	if res.StatusCode != 200 {
		t.Fatalf("me/apps: %d %s", res.StatusCode, body)
	}
	list := decode[struct {
		Data []struct{ ID, Name, Mode, Role, ClientID string }
	}](t, body)
	if len(list.Data) != 1 || list.Data[0].ID != c.App.ID || list.Data[0].Role != "admin" || list.Data[0].Mode != "development" {
		t.Fatalf("the owner's apps = %s, want the seeded app with role admin", body)
	}

	staff := signInAt(t, g.URL, c.Users["staff"].Username, c.Users["staff"].Password)
	if res, body = w.get(t, staff, q); res.StatusCode != 200 || strings.Contains(string(body), c.App.ID) {
		t.Errorf("someone off the team sees the app: %d %s", res.StatusCode, body)
	}

	res, body = w.get(t, c.App.APIKey, q)
	wantGraphError(t, res, body, 403, 200, 2069001)
}
