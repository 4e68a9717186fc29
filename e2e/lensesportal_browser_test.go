package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/svcplatform/svc/internal/browsertest"
)

// In Chromium: the seeded app's team watches a card's delivery and the
// device it reached in the Wearables tab, makes a lens in the Lenses tab
// and submits it; staff approve it from the lens review queue in their own
// browser; the partner then sees it approved.
func TestAPartnerUsesTheWearablesPortalAndLensesTabsAndStaffApproveTheLens(t *testing.T) {
	t.Parallel()
	w := newWearablesWorld(t)
	cardID := w.push(t, "Coffee is ready")
	w.rcv.waitForData("wearables.card.delivered", "cardId", cardID)
	console := w.g.URL + "/developers/console"
	app := console + "/apps/" + w.c.App.ID
	signIn := func(b *browsertest.Browser, who, waitFor string) {
		u := w.c.Users[who]
		b.Do(who+" signs in",
			chromedp.SendKeys(chromedp.ID("username"), u.Username),
			chromedp.SendKeys(chromedp.ID("password"), u.Password),
			chromedp.Click(chromedp.CSS(`button[type=submit]`)),
			chromedp.WaitVisible(chromedp.ID(waitFor)))
	}

	b := browsertest.New(t)
	b.Do("open the wearables portal signed out", chromedp.Navigate(app+"/wearables"), chromedp.WaitVisible(chromedp.ID("username")))
	signIn(b, "owner", "cards")
	b.Do("see the card, its delivery and the device",
		waitText(`[data-card="`+cardID+`"]`, "delivered"), waitText("#deliveries", cardID), waitText("#devices", "simulated"))
	b.Shot("wearables-portal")

	b.Do("open the lenses tab", chromedp.Navigate(app+"/lenses"), chromedp.WaitVisible(chromedp.CSS(`#lens[data-bound]`)),
		waitText("#lenses", "Sunny"))
	b.Do("make a lens",
		chromedp.SendKeys(chromedp.ID("lens-name"), "Glitter"),
		chromedp.SendKeys(chromedp.ID("lens-icon"), "data:image/png;base64,iVBORw0KGgo="),
		chromedp.Click(chromedp.CSS(`#lens button[type=submit]`)),
		waitText("#lenses", "Glitter"))
	lensID := browsertest.Get(b, "read the lens id", chromedp.Evaluate[string](`document.querySelector('span.badge.draft').dataset.lens`))
	badge := `span[data-lens="` + lensID + `"]`
	b.Do("submit it", chromedp.Click(chromedp.CSS(`button[data-lens="`+lensID+`"][data-action=submit]`)), waitText(badge, "in_review"))

	sb := browsertest.New(t)
	sb.Do("staff open the lens queue", chromedp.Navigate(console+"/staff/lenses"), chromedp.WaitVisible(chromedp.ID("username")))
	signIn(sb, "staff", "queue")
	row := `form[data-lens="` + lensID + `"]`
	sb.Do("see the lens in the queue", chromedp.WaitVisible(chromedp.CSS(row)))
	sb.Shot("staff-lens-queue")
	sb.Do("approve it", chromedp.Click(chromedp.CSS(row+` button[value=approve]`)), chromedp.WaitNotPresent(chromedp.CSS(row)))

	b.Do("see it approved", chromedp.Navigate(app+"/lenses"), waitText(badge, "approved"))
}
