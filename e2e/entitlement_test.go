package e2e

import (
	"net/url"
	"testing"
)

// CONTRACT §15, "Events reach only apps entitled to them", through the
// public API with the real svcchat and book plugins (issue 26 item 2).

// A consumer's private message reaches the app whose link to the Page
// carries svcchat, and not an app the Page linked for book only, though
// that app has svcchat enabled and subscribed to the message events.
func TestPageMessagesReachOnlyAppsWhoseLinkCarriesSvcchat(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t)
	subscribe := func(appID, key, callback string, events ...string) {
		t.Helper()
		res, body := w.post(t, key, map[string]any{"node": "app/" + appID + "/subscriptions", "callback_url": callback,
			"events": events, "verify_token": hookVerifyToken}, nil)
		if res.StatusCode != 200 {
			t.Fatalf("subscribe app %s: %d %s", appID, res.StatusCode, body)
		}
	}
	// The seeded app: linked with svcchat.
	chat := newHookReceiver(t, w.c.App.ClientSecret)
	subscribe(w.c.App.ID, w.c.App.APIKey, chat.srv.URL+"/hook", "page.message.received")

	// The owner's second app, linked to the same Page for book only.
	res, body := w.post(t, w.owner, map[string]any{"node": "me/apps", "name": "Post scheduler",
		"redirect_uris": []string{"http://127.0.0.1:9/callback"}, "products": []string{"svcchat", "book"}}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("create app: %d %s", res.StatusCode, body)
	}
	bookApp := decode[createdApp](t, body)
	res, body = w.post(t, w.owner, map[string]any{"node": "app/" + bookApp.ID + "/page_links", "page_id": w.c.Page.ID,
		"products": []string{"book"}}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("link the Page for book: %d %s", res.StatusCode, body)
	}
	book := newHookReceiver(t, bookApp.ClientSecret)
	subscribe(bookApp.ID, bookApp.APIKey, book.srv.URL+"/hook", "page.message.received", "book.post.created")

	_, messageID := w.write(t, "my door code is 4711")
	chat.waitForData("page.message.received", "messageId", messageID)

	// A post after the message: once the book app has it, the message was
	// dispatched too (the outbox is dispatched in order).
	w.graphWorld.owner = w.g.UserToken(t, "owner", "pages:read", "pages:manage")
	postID := w.graphWorld.publish(t, "Open on Sunday")
	book.waitForData("book.post.created", "postId", postID)

	book.mu.Lock()
	for _, d := range book.got {
		if d.body.Type != "book.post.created" {
			t.Errorf("the app linked for book only received %s: %s", d.body.Type, d.raw)
		}
	}
	book.mu.Unlock()
	res, body = w.get(t, bookApp.APIKey, url.Values{"node": {"app/" + bookApp.ID + "/deliveries"}, "event_type": {"page.message.received"}})
	if log := decode[struct{ Data []any }](t, body); res.StatusCode != 200 || len(log.Data) != 0 {
		t.Fatalf("the book-only app's deliveries of page.message.received: %d %s", res.StatusCode, body)
	}
}
