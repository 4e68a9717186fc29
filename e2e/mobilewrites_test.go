package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// CONTRACT §15: mobile writes are rate-limited per user, 60 a minute each
// (429, code 17): direct messages, Page messages, blocks and reports are
// counted apart, and one user's count is not another's.
func TestMobileWritesAreLimitedTo60AMinutePerUserEach(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t)
	write := func(token, path, body string) (*http.Response, []byte) {
		return do(t, "POST", w.g.URL+path, strings.NewReader(body),
			map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"})
	}
	dm := func(token string) (*http.Response, []byte) {
		return write(token, "/api/mobile/chat/messages", `{"toUserId":"`+w.c.Users["owner"].ID+`","text":"hi"}`)
	}
	pageMessage := func(token string) (*http.Response, []byte) {
		return write(token, "/api/mobile/svcchat/page-messaging/messages", `{"pageId":"`+w.c.Page.ID+`","text":"hello"}`)
	}
	block := func(token string) (*http.Response, []byte) {
		return write(token, "/api/mobile/blocks", `{"pageId":"`+w.c.Page.ID+`"}`)
	}
	report := func(token string) (*http.Response, []byte) {
		return write(token, "/api/mobile/reports", `{"pageId":"`+w.c.Page.ID+`","reason":"spam"}`)
	}
	for _, kind := range []struct {
		name string
		send func(string) (*http.Response, []byte)
	}{{"direct messages", dm}, {"Page messages", pageMessage}, {"blocks", block}, {"reports", report}} {
		t.Run(kind.name, func(t *testing.T) {
			minute := time.Now().Unix() / 60
			sent := 0
			for {
				res, body := kind.send(w.consumer)
				if res.StatusCode == http.StatusTooManyRequests {
					wantGraphError(t, res, body, 429, 17, 0)
					break
				}
				if res.StatusCode != 200 {
					t.Fatalf("write %d: %d %s", sent+1, res.StatusCode, body)
				}
				if sent++; sent > 120 {
					t.Fatal("120 writes in a row were accepted")
				}
			}
			// A minute that turned during the loop restarted the count.
			if time.Now().Unix()/60 == minute && sent != 60 {
				t.Fatalf("%d writes were accepted in one minute, want 60", sent)
			}
			if res, body := kind.send(w.staff); res.StatusCode != 200 {
				t.Fatalf("another user's write: %d %s", res.StatusCode, body)
			}
		})
	}
}
