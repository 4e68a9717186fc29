package e2e

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/svcplatform/svc/internal/browsertest"
	"github.com/svcplatform/svc/internal/gatewaytest"
)

// A person does in a real browser what issue 30 asks of the console and
// /chat, on a platform started empty (--no-dev-seed): signs up from the
// login page's link and lands on their Pages; creates a Page and publishes
// it (chat surfacing, inbox merge); makes a second person its editor and
// sees the refusal to remove the last owner beside the control; the editor
// finds the Page's thread in /chat and replies as the Page; the customer
// blocks and unblocks the Page there; the person removes an app they
// authorized and sees the app's data deletion confirmation; and leaves,
// after a confirmation step, signed out for good.
func TestAPersonManagesPagesAndTheirAccountInTheConsoleAndChat(t *testing.T) {
	t.Parallel()
	// The app's data deletion callback is a local receiver: loopback is
	// allowed for development apps, which is not the default without the
	// seed.
	g := gatewaytest.Start(t, gatewaytest.Options{Args: []string{"--no-dev-seed", "--webhook-allow-loopback"}})
	w := &pagesWorld{graphWorld: &graphWorld{g: g}, people: map[string]signedUp{}}
	const password = "a long enough secret"
	console := g.URL + "/developers/console"
	b := browsertest.New(t)

	// Sign up from /login's link; the console's Pages is where it lands.
	b.Do("open the login page", chromedp.Navigate(g.URL+"/login?next="+url.QueryEscape("/developers/console/pages")),
		chromedp.WaitVisible(chromedp.ID("signup")))
	b.Do("follow the sign-up link", chromedp.Click(chromedp.ID("signup")), chromedp.WaitVisible(chromedp.ID("password")))
	b.Do("sign up",
		chromedp.SendKeys(chromedp.ID("name"), "Olivia Owner"),
		chromedp.SendKeys(chromedp.ID("username"), "olivia"),
		chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#create-page[data-bound]`)),
		waitText("#pages", "You have no Pages yet"))
	olivia := browsertest.Get(b, "read the signed-in user", chromedp.Evaluate[string](`document.body.dataset.user`))
	b.Shot("pages-empty")

	// Create a Page: it opens on its settings, unpublished.
	b.Do("create a Page",
		chromedp.SendKeys(chromedp.ID("page-name-input"), "Olivia's Coffee"),
		chromedp.SendKeys(chromedp.ID("page-category-input"), "Coffee shop"),
		chromedp.Click(chromedp.CSS(`#create-page button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("created")),
		waitText("#overview-role", "owner"), waitText("#overview-published", "no"))
	page := browsertest.Get(b, "read the Page id", chromedp.Evaluate[string](`document.body.dataset.pageId`))
	b.Do("publish it with chat surfacing and the inbox merge",
		chromedp.WaitVisible(chromedp.CSS(`#settings[data-bound]`)),
		chromedp.Click(chromedp.ID("published")), chromedp.Click(chromedp.ID("chat-surfacing")), chromedp.Click(chromedp.ID("inbox-merge")),
		chromedp.Click(chromedp.CSS(`#settings button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("settings-saved")), waitText("#overview-published", "yes"))
	oliviaSession := signInAt(t, g.URL, "olivia", password)
	settings := decode[struct {
		Published     bool `json:"published"`
		ChatSurfacing bool `json:"chat_surfacing"`
		Merge         bool `json:"inbox_merge_linked"`
	}](t, w.mustGet(t, oliviaSession, "page/"+page))
	if !settings.Published || !settings.ChatSurfacing || !settings.Merge {
		t.Fatalf("the Page after saving its settings: %+v", settings)
	}

	// A second person becomes its editor; the last owner cannot step down
	// or leave, and the refusal shows beside the control that tried.
	eddie := mustSignUp(t, g, "eddie", "Eddie Editor")
	b.Do("make the second person editor",
		chromedp.SendKeys(chromedp.ID("role-user"), eddie.UserID),
		chromedp.SetValue(chromedp.ID("role-role"), "editor"),
		chromedp.Click(chromedp.CSS(`#add-role button[type=submit]`)),
		waitText("#roles", "Eddie Editor"), waitText(`#roles .role[data-user="`+eddie.UserID+`"]`, "editor"))
	mine := fmt.Sprintf(`#roles form.role-change[data-user="%s"]`, olivia)
	b.Do("try to step down as the last owner",
		chromedp.SetValue(chromedp.CSS(mine+` select[name=role]`), "admin"),
		chromedp.Click(chromedp.CSS(mine+` button[type=submit]`)),
		waitText(mine+` [role=alert]`, "owner"))
	b.Do("try to leave the Page as its last owner",
		chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll('#roles button.danger')].find((b) => b.textContent === 'Leave the Page').click()`),
		waitText(`#roles form.inline:not(.role-change) [role=alert]`, "last owner"))
	b.Shot("page-roles")

	// A customer writes to the Page; its editor's /chat lists the thread
	// under the Page, and the reply goes out as the Page.
	casey := mustSignUp(t, g, "casey", "Casey Customer")
	res, body := w.mobile(t, casey.SessionToken, "/api/mobile/svcchat/page-messaging/messages", `{"pageId":"`+page+`","text":"Open today?"}`)
	if res.StatusCode != 200 {
		t.Fatalf("the customer's message: %d %s", res.StatusCode, body)
	}
	conv := decode[struct{ ConversationID string }](t, body).ConversationID
	// The chat app reads the Page's inbox through the Graph with the
	// person's session: anyone without a role on the Page is refused.
	res, body = w.get(t, casey.SessionToken, url.Values{"node": {"page/" + page + "/conversations"}})
	wantGraphError(t, res, body, 403, 200, 2069003)
	res, body = w.get(t, casey.SessionToken, url.Values{"node": {"page/" + page + "/conversations/" + conv + "/messages"}})
	wantGraphError(t, res, body, 403, 200, 2069003)

	chatSignIn := func(username string) {
		t.Helper()
		// The chat app keeps its session in the tab's sessionStorage.
		b.Do("sign in to /chat as "+username, chromedp.Evaluate[chromedp.Void](`sessionStorage.clear()`),
			chromedp.Navigate(g.URL+"/chat"),
			chromedp.WaitVisible(chromedp.ID("signin-username")),
			chromedp.SendKeys(chromedp.ID("signin-username"), username),
			chromedp.SendKeys(chromedp.ID("signin-password"), password),
			chromedp.Click(chromedp.ID("signin-submit")),
			chromedp.WaitVisible(chromedp.ID("to-page")))
	}
	chatSignIn("eddie")
	b.Do("see the Page's thread", chromedp.WaitVisible(chromedp.CSS(`#page-inboxes a.thread.managed`)), waitText("#page-inboxes", "Olivia's Coffee"))
	b.Shot("editor-chats")
	b.Do("open it", chromedp.Click(chromedp.CSS(`#page-inboxes a.thread.managed`)),
		waitText("#messages li.theirs .text", "Open today?"), waitText("#thread-title", "Olivia's Coffee"))
	b.Do("reply as the Page",
		chromedp.SendKeys(chromedp.ID("composer-text"), "Until six!"),
		chromedp.Click(chromedp.ID("composer-submit")),
		waitText("#messages li.mine .text", "Until six!"))
	b.Shot("editor-reply")
	res, body = do(t, "GET", g.URL+"/api/mobile/svcchat/page-messaging/threads/"+conv, nil, map[string]string{"Authorization": "Bearer " + casey.SessionToken})
	if res.StatusCode != 200 || !strings.Contains(string(body), "Until six!") {
		t.Fatalf("the customer's thread after the editor's reply: %d %s", res.StatusCode, body)
	}

	// The customer blocks the Page from the thread and unblocks it from
	// the chats list.
	chatSignIn("casey")
	b.Do("open the thread as the customer", chromedp.Navigate(g.URL+"/chat#/page/"+page+"/"+conv),
		waitText("#messages li.theirs .text", "Until six!"))
	b.Do("block the Page", chromedp.Click(chromedp.ID("block-page")), chromedp.WaitVisible(chromedp.CSS(`#blocked button.unblock[data-page-id="`+page+`"]`)))
	b.Shot("blocked")
	res, body = do(t, "GET", g.URL+"/api/mobile/blocks", nil, map[string]string{"Authorization": "Bearer " + casey.SessionToken})
	if res.StatusCode != 200 || !strings.Contains(string(body), `"pageId":"`+page+`"`) {
		t.Fatalf("the customer's blocks after blocking: %d %s", res.StatusCode, body)
	}
	b.Do("unblock it", chromedp.Click(chromedp.CSS(`#blocked button.unblock`)), chromedp.WaitNotPresent(chromedp.CSS(`#blocked button.unblock`)))
	res, body = do(t, "GET", g.URL+"/api/mobile/blocks", nil, map[string]string{"Authorization": "Bearer " + casey.SessionToken})
	if res.StatusCode != 200 || strings.Contains(string(body), page) {
		t.Fatalf("the customer's blocks after unblocking: %d %s", res.StatusCode, body)
	}

	// The person authorized an app of their own; removing it in the
	// console shows the app's data deletion confirmation.
	app := decode[createdApp](t, w.mustPost(t, oliviaSession, map[string]any{"node": "me/apps", "name": "Olivia's tools",
		"redirect_uris": []string{lifecycleRedirect}, "products": []string{"svcchat"}}))
	recv := newDeletionReceiver(t, app.ClientSecret)
	w.mustPost(t, oliviaSession, map[string]any{"node": "app/" + app.ID, "data_deletion_callback_url": recv.URL + "/deletion"})
	appToken := w.userToken(t, app, "olivia", "public_profile", "pages:read")
	b.Do("open the account", chromedp.Navigate(console+"/account"),
		waitText("#authorized", "Olivia's tools"), waitText("#authorized", "pages:read"),
		waitText("#deletions", "No app has been asked"))
	b.Shot("account")
	b.Do("remove the app",
		chromedp.Click(chromedp.CSS(`#authorized button.danger`)),
		waitText("#authorized", "You have not authorized any app"),
		waitText(`#deletions [data-status]`, "confirmed"), waitText("#deletions .confirmation", "del-"+olivia),
		waitText("#deletions", "Olivia's tools"))
	b.Shot("deletion-confirmed")
	select {
	case got := <-recv.users:
		if got != olivia {
			t.Fatalf("the callback names user %q, want %q", got, olivia)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the app's data deletion callback was not called")
	}
	if res, body := w.get(t, appToken, url.Values{"node": {"me"}}); res.StatusCode != 401 {
		t.Fatalf("the removed app's token: %d %s", res.StatusCode, body)
	}

	// Leaving takes a confirmation; then every session is gone.
	if shown := browsertest.Get(b, "read whether the confirmation shows", chromedp.Evaluate[bool](
		`getComputedStyle(document.getElementById('leave-confirm')).display !== 'none'`)); shown {
		t.Fatal("the confirmation to leave shows before the person asked to leave")
	}
	b.Do("start leaving", chromedp.Click(chromedp.ID("leave-start")), chromedp.WaitVisible(chromedp.ID("leave-confirm")))
	b.Do("confirming without ticking the box is refused",
		chromedp.WaitVisible(chromedp.CSS(`#leave-confirm[data-bound]`)),
		chromedp.Click(chromedp.ID("leave-now")), waitText("#leave-confirm [role=alert]", "cannot be undone"))
	if res, _ := w.get(t, oliviaSession, url.Values{"node": {"me"}}); res.StatusCode != 200 {
		t.Fatalf("the person left before confirming: %d", res.StatusCode)
	}
	b.Shot("leave-confirm")
	b.Do("leave", chromedp.Click(chromedp.ID("leave-understood")), chromedp.Click(chromedp.ID("leave-now")),
		chromedp.WaitVisible(chromedp.ID("username")))
	if loc := browsertest.Get(b, "read the location", chromedp.Location()); !strings.Contains(loc, "/login") {
		t.Fatalf("after leaving the browser is at %s, want the login page", loc)
	}
	b.Do("the console no longer knows the browser", chromedp.Navigate(console+"/account"), chromedp.WaitVisible(chromedp.ID("username")))
	if loc := browsertest.Get(b, "read the location", chromedp.Location()); !strings.Contains(loc, "/login?next=") {
		t.Fatalf("the console after leaving is at %s, want the login page", loc)
	}
	if res, body := w.get(t, oliviaSession, url.Values{"node": {"me"}}); res.StatusCode != 401 {
		t.Fatalf("another session of the person who left: %d %s", res.StatusCode, body)
	}
}
