package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/svcplatform/svc/internal/browsertest"
	"github.com/svcplatform/svc/internal/gatewaytest"
)

// consoleSignIn opens path of the console signed out and signs in as user.
func consoleSignIn(b *browsertest.Browser, url, username, password, ready string) {
	b.Do("open "+url+" signed out", chromedp.Navigate(url), chromedp.WaitVisible(chromedp.ID("username")))
	b.Do("sign in as "+username,
		chromedp.SendKeys(chromedp.ID("username"), username),
		chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(ready)))
}

// The owner sees where her business stands in the console's Business view
// and asks for verification there (only the document's SHA-256 leaves the
// browser); staff reject it in their queue with a reason; the owner then
// sees "rejected" with the reason, and the form to ask again.
func TestTheConsoleShowsWhereABusinessStandsInVerification(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	console := g.URL + "/developers/console"
	business := `section.business[data-business="` + c.Business.ID + `"]`
	doc := filepath.Join(t.TempDir(), "registration.pdf")
	if err := os.WriteFile(doc, []byte("%PDF-1.4 registration extract"), 0o600); err != nil {
		t.Fatal(err)
	}

	b := browsertest.New(t)
	owner := c.Users["owner"]
	consoleSignIn(b, console+"/business", owner.Username, owner.Password, `#businesses[data-loaded]`)
	b.Do("see the seeded business, unverified, with its Page and app",
		waitText(business+" h2", c.Business.Name),
		waitText(business+" [data-status]", "unverified"),
		waitText(business+" table", c.Page.Name),
		waitText(business+" table", "Demo App"))
	b.Shot("business")

	// The partner program: the admin's button; the API's refusal (the
	// business registered meanwhile, by the same admin through the API)
	// shown beside it; then the tier and each criterion, unmet.
	partner := business + ` .partner`
	b.Do("see the partner program's button",
		chromedp.WaitVisible(chromedp.CSS(partner+` form.register-partner[data-bound]`)))
	res, body := do(t, "POST", g.URL+"/api/v1/partners", strings.NewReader(`{"business_id":"`+c.Business.ID+`"}`),
		map[string]string{"Authorization": "Bearer " + signInAt(t, g.URL, owner.Username, owner.Password), "Content-Type": "application/json"})
	if res.StatusCode != 200 {
		t.Fatalf("register as a partner through the API: %d %s", res.StatusCode, body)
	}
	b.Do("register again: the refusal is shown beside the button",
		chromedp.Click(chromedp.CSS(partner+` form.register-partner button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(partner+` form.register-partner .form-error[data-code="100"]`)))
	b.Do("see the tier registered with each criterion unmet", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#businesses[data-loaded]`)),
		waitText(partner+` [data-tier]`, "registered"),
		waitText(partner+` table`, "live_reviewed_app"),
		chromedp.WaitNotPresent(chromedp.CSS(partner+` form.register-partner`)))
	criteria := browsertest.Get(b, "read the criteria", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('`+partner+` [data-met]')].map((e) => e.dataset.met)`))
	if len(criteria) != 5 || slices.Contains(criteria, "true") {
		t.Errorf("a new partner's criteria shown met: %v, want 5 unmet", criteria)
	}
	b.Shot("business-partner")
	b.Do("ask for verification with a document",
		chromedp.SendKeys(chromedp.CSS(business+` form.verify input[name=legal_name]`), "Demo Coffee SARL"),
		chromedp.SendKeys(chromedp.CSS(business+` form.verify input[name=country]`), "FR"),
		chromedp.SetUploadFiles(chromedp.CSS(business+` form.verify input[name=document]`), []string{doc}),
		chromedp.Click(chromedp.CSS(business+` form.verify button[type=submit]`)),
		waitText(business+" [data-status]", "pending"),
		chromedp.WaitNotPresent(chromedp.CSS(business+` form.verify`)))

	staff := c.Users["staff"]
	sb := browsertest.New(t)
	row := `form[data-business="` + c.Business.ID + `"]`
	consoleSignIn(sb, console+"/staff/business-verification", staff.Username, staff.Password, row)
	sb.Do("see the request's legal name and the document's SHA-256",
		waitText("#queue", "Demo Coffee SARL, FR"),
		waitText("#queue", "business_registration"))
	sb.Shot("staff-business-verification")
	sb.Do("reject with a reason",
		chromedp.SendKeys(chromedp.CSS(row+` input[name=reason]`), "The extract is unreadable."),
		chromedp.Click(chromedp.CSS(row+` button[value=reject]`)),
		chromedp.WaitNotPresent(chromedp.CSS(row)))

	b.Do("see the rejection and its reason", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#businesses[data-loaded]`)),
		waitText(business+" [data-status]", "rejected"),
		waitText(business+" .reason", "The extract is unreadable."),
		chromedp.WaitVisible(chromedp.CSS(business+` form.verify`)))
	b.Shot("business-rejected")

	b.Do("follow the partner docs link to the docs search's section on partners",
		chromedp.Click(chromedp.CSS(partner+` a.partner-docs`)),
		chromedp.WaitVisible(chromedp.CSS(`#docs-results .docs-hit[data-path^="docs/PARTNERS.md"]`)),
		chromedp.NavigateBack(), chromedp.WaitVisible(chromedp.CSS(`#businesses[data-loaded]`)))

	b.Do("create a business",
		chromedp.SendKeys(chromedp.ID("business-name-input"), "Second Shop"),
		chromedp.Click(chromedp.CSS(`#create-business button[type=submit]`)),
		waitText("#businesses", "Second Shop"))
	if n := browsertest.Get(b, "count the businesses", chromedp.Evaluate[int](`document.querySelectorAll('section.business').length`)); n != 2 {
		t.Errorf("the Business view shows %d businesses, want 2", n)
	}
	if text := browsertest.Get(b, "read the page", chromedp.Text(chromedp.ID("main"))); strings.Contains(text, "undefined") {
		t.Errorf("the Business view shows undefined: %s", text)
	}
}
