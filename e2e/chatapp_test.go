package e2e

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/svcplatform/svc/internal/browsertest"
)

// The consumer chat app at /chat, in a real browser, on the public mobile
// APIs only: the consumer signs in, writes to the seeded Page, sees the
// assistant's attributed reply arrive, opts in, receives the app's template
// message and sees it turn read (and the Page typing), finds the thread
// again by its deep link, and exchanges direct
// messages with another user; a refused write shows the message beside the
// field it names.
func TestTheConsumerUsesTheEmulatedChatAppInABrowser(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t)
	w.setPage(t, map[string]any{"inbox_automation": true})
	consumer := w.c.Users["consumer"]
	b := browsertest.New(t)

	b.Do("open /chat", chromedp.Navigate(w.g.URL+"/chat"), chromedp.WaitVisible(chromedp.ID("signin-username")))
	b.Shot("sign-in")
	b.Do("sign in as the consumer",
		chromedp.SendKeys(chromedp.ID("signin-username"), consumer.Username),
		chromedp.SendKeys(chromedp.ID("signin-password"), consumer.Password),
		chromedp.Click(chromedp.ID("signin-submit")),
		chromedp.WaitVisible(chromedp.ID("to-page")))
	b.Shot("chats")

	b.Do("write to the Page",
		chromedp.SendKeys(chromedp.ID("to-page-pageId"), w.c.Page.ID),
		chromedp.SendKeys(chromedp.ID("to-page-text"), "Hello! Do you deliver?"),
		chromedp.Click(chromedp.ID("to-page-submit")),
		browsertest.WaitText("#messages li.mine", "Hello! Do you deliver?"))
	b.Do("see the assistant's reply, attributed", browsertest.WaitText("#messages li.theirs .sender", w.c.Page.Name+" · Assistant"))
	if title := browsertest.Get(b, "read the thread title", chromedp.Text(chromedp.ID("thread-title"))); title != w.c.Page.Name {
		t.Errorf("thread title = %q, want the Page's name %q", title, w.c.Page.Name)
	}
	b.Shot("assistant-reply")
	threadURL := browsertest.Get(b, "read the location", chromedp.Location())

	b.Do("opt in", chromedp.Click(chromedp.ID("opt-in")), browsertest.WaitText("#notice", "Opted in"))
	res, body := w.template(t, "A-1042")
	if res.StatusCode != 200 {
		t.Fatalf("the app's template message: %d %s", res.StatusCode, body)
	}
	b.Do("see the app's template message arrive", browsertest.WaitText("#messages li.theirs .text", "A-1042"))
	b.Shot("template-message")

	// The consumer has the thread open: what the app sent turns to read.
	sent := decode[sentMessage](t, body)
	deadline := time.Now().Add(20 * time.Second)
	for w.graphStatuses(t, sent.ConversationID)[sent.MessageID] != "read" {
		if time.Now().After(deadline) {
			t.Fatalf("the template message never turned read: %v", w.graphStatuses(t, sent.ConversationID))
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.Do("see the status read", browsertest.WaitText(`#messages li[data-message-id="`+sent.MessageID+`"] .status`, "read"))
	if res, body := w.senderAction(t, "typing_on"); res.StatusCode != 200 {
		t.Fatalf("typing_on: %d %s", res.StatusCode, body)
	}
	b.Do("see the Page typing", chromedp.WaitVisible(chromedp.ID("typing")))
	b.Shot("typing")
	if res, body := w.senderAction(t, "typing_off"); res.StatusCode != 200 {
		t.Fatalf("typing_off: %d %s", res.StatusCode, body)
	}
	b.Do("see the typing stop", chromedp.WaitNotVisible(chromedp.ID("typing")))

	t.Run("a refused write shows the envelope's message beside the field", func(t *testing.T) {
		long := strings.Repeat("x", 2001)
		b.Do("write too much", chromedp.SetValue(chromedp.ID("composer-text"), long), chromedp.Click(chromedp.ID("composer-submit")),
			browsertest.WaitText("#composer-text-error", "text"))
		b.Shot("refused-write")
	})

	// The chats list holds the thread with its deep link; following that
	// link opens the same thread.
	b.Do("back to the chats", chromedp.Navigate(w.g.URL+"/chat#/"), chromedp.WaitVisible(chromedp.CSS("#threads a.thread.page")))
	link := browsertest.Get(b, "read the deep link", chromedp.AttributeValue(chromedp.CSS("#threads a.thread.page"), "data-deep-link")).Value
	if !strings.HasPrefix(link, "svcchat://page-inbox/"+w.c.Page.ID+"/") {
		t.Fatalf("deep link = %q", link)
	}
	b.Do("see the sponsored item", chromedp.WaitVisible(chromedp.ID("sponsored")))
	b.Do("open the deep link", chromedp.Navigate(w.g.URL+"/chat?link="+url.QueryEscape(link)),
		browsertest.WaitText("#messages li.theirs .text", "A-1042"))
	if got := browsertest.Get(b, "read the location", chromedp.Location()); got != threadURL {
		t.Errorf("the deep link opened %s, want %s", got, threadURL)
	}

	// Another user writes to the consumer; the consumer answers in the app.
	res, body = w.get(t, w.owner, url.Values{"node": {"me"}, "fields": {"name"}})
	owner := decode[struct{ Name string }](t, body)
	if res.StatusCode != 200 || owner.Name == "" {
		t.Fatalf("the owner's name: %d %s", res.StatusCode, body)
	}
	dm := strings.NewReader(`{"toUserId":"` + w.consumerID + `","text":"Lunch on Friday?"}`)
	res, body = do(t, "POST", w.g.URL+"/api/mobile/chat/messages", dm,
		map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + w.owner})
	if res.StatusCode != 200 {
		t.Fatalf("direct message: %d %s", res.StatusCode, body)
	}
	b.Do("open the direct thread", chromedp.Navigate(w.g.URL+"/chat#/"),
		chromedp.WaitVisible(chromedp.CSS("#threads a.thread.direct")), chromedp.Click(chromedp.CSS("#threads a.thread.direct")),
		browsertest.WaitText("#messages li.theirs .text", "Lunch on Friday?"))
	b.Do("answer it", chromedp.SendKeys(chromedp.ID("composer-text"), "Yes, noon works"), chromedp.Click(chromedp.ID("composer-submit")),
		browsertest.WaitText("#messages li.mine .text", "Yes, noon works"))
	if title := browsertest.Get(b, "read the direct thread title", chromedp.Text(chromedp.ID("thread-title"))); title != owner.Name {
		t.Errorf("direct thread title = %q, want %q", title, owner.Name)
	}
	b.Shot("direct-thread")
}
