package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// rest calls a mobile or staff REST path with a bearer token and, unless
// body is nil, a JSON body.
func (w *chatWorld) rest(t *testing.T, method, token, path string, body any) (*http.Response, []byte) {
	t.Helper()
	h := map[string]string{}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r, h["Content-Type"] = strings.NewReader(string(b)), "application/json"
	}
	return do(t, method, w.g.URL+path, r, h)
}

// pageThreads counts the consumer's Page threads in the inbox and in the
// chats list.
func (w *chatWorld) pageThreads(t *testing.T) (inbox, chats int) {
	t.Helper()
	res, body := w.mobileGet(t, w.consumer, "inbox?userId="+w.consumerID)
	if res.StatusCode != 200 {
		t.Fatalf("inbox: %d %s", res.StatusCode, body)
	}
	inbox = len(decode[struct{ Threads []any }](t, body).Threads)
	res, body = w.rest(t, "GET", w.consumer, "/api/mobile/chat", nil)
	if res.StatusCode != 200 {
		t.Fatalf("chats list: %d %s", res.StatusCode, body)
	}
	for _, th := range decode[struct{ Threads []struct{ Kind string } }](t, body).Threads {
		if th.Kind == "page" {
			chats++
		}
	}
	return inbox, chats
}

// CONTRACT §16, blocks and reports through the public HTTP API: the
// consumer blocks the Page (the app's sends refused with 2018309, the
// Page's thread gone from the inbox and the chats list), unblocks it (the
// send works, the thread is back), blocks a person (their direct message
// refused as to an unknown user) and unblocks them; then reports the Page,
// staff restrict it (the app's send refused with 2018310) and lift the
// restriction (the send works). Every refusal of the new paths is provoked.
func TestBlocksAndReportsRefuseAndRestoreSendsEndToEnd(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t)
	page, owner := w.c.Page.ID, w.c.Users["owner"].ID
	w.write(t, "Hi! Where is my order?")
	wantSent(t, first(w.session(t, "It ships today.")), w.consumerID)
	if inbox, chats := w.pageThreads(t); inbox != 1 || chats != 1 {
		t.Fatalf("before the block: %d inbox threads, %d in the chats list", inbox, chats)
	}

	// 1. Block the Page.
	res, body := w.rest(t, "POST", w.consumer, "/api/mobile/blocks", map[string]string{"pageId": page})
	if b := decode[map[string]any](t, body); res.StatusCode != 200 || keys(b) != "createdAt,pageId" || b["pageId"] != page {
		t.Fatalf("block the Page: %d %s", res.StatusCode, body)
	}
	res, body = w.rest(t, "GET", w.consumer, "/api/mobile/blocks", nil)
	list := decode[struct{ Data []map[string]any }](t, body).Data
	if res.StatusCode != 200 || len(list) != 1 || keys(list[0]) != "createdAt,pageId" || list[0]["pageId"] != page {
		t.Fatalf("blocks: %d %s", res.StatusCode, body)
	}
	res, body = w.session(t, "Anything else?")
	wantGraphError(t, res, body, 403, 10, 2018309)
	res, body = w.template(t, "A-1")
	wantGraphError(t, res, body, 403, 10, 2018309)
	if inbox, chats := w.pageThreads(t); inbox != 0 || chats != 0 {
		t.Fatalf("with the Page blocked: %d inbox threads, %d in the chats list", inbox, chats)
	}
	res, body = w.mobile(t, w.consumer, "messages", map[string]any{"pageId": page, "text": "hello?"})
	wantGraphError(t, res, body, 403, 10, 2018309)

	// 2. Unblock it.
	if res, body := w.rest(t, "DELETE", w.consumer, "/api/mobile/blocks?pageId="+page, nil); res.StatusCode != 200 {
		t.Fatalf("unblock the Page: %d %s", res.StatusCode, body)
	}
	wantSent(t, first(w.session(t, "Anything else?")), w.consumerID)
	if inbox, chats := w.pageThreads(t); inbox != 1 || chats != 1 {
		t.Fatalf("after the unblock: %d inbox threads, %d in the chats list", inbox, chats)
	}

	// 3. Block a person: their direct message is answered as to nobody.
	dm := func() (*http.Response, []byte) {
		return w.rest(t, "POST", w.owner, "/api/mobile/chat/messages", map[string]string{"toUserId": w.consumerID, "text": "hi"})
	}
	if res, body := dm(); res.StatusCode != 200 {
		t.Fatalf("a direct message before the block: %d %s", res.StatusCode, body)
	}
	res, body = w.rest(t, "POST", w.consumer, "/api/mobile/blocks", map[string]string{"userId": owner})
	if b := decode[map[string]any](t, body); res.StatusCode != 200 || keys(b) != "createdAt,userId" || b["userId"] != owner {
		t.Fatalf("block the person: %d %s", res.StatusCode, body)
	}
	res, body = dm()
	wantGraphError(t, res, body, 403, 10, 2018309)
	res, body = w.rest(t, "GET", w.consumer, "/api/mobile/blocks", nil)
	if list := decode[struct{ Data []map[string]any }](t, body).Data; res.StatusCode != 200 || len(list) != 1 || keys(list[0]) != "createdAt,userId" {
		t.Fatalf("blocks: %d %s", res.StatusCode, body)
	}
	if res, body := w.rest(t, "DELETE", w.consumer, "/api/mobile/blocks?userId="+owner, nil); res.StatusCode != 200 {
		t.Fatalf("unblock the person: %d %s", res.StatusCode, body)
	}
	if res, body := dm(); res.StatusCode != 200 {
		t.Fatalf("a direct message after the unblock: %d %s", res.StatusCode, body)
	}

	t.Run("bad blocks are refused and change nothing", func(t *testing.T) {
		for _, c := range []struct {
			body         any
			status, code int
			subcode      int
			field        string
		}{
			{map[string]string{}, 400, 100, 0, "pageId"},
			{map[string]string{"pageId": page, "userId": owner}, 400, 100, 0, "userId"},
			{map[string]string{"pageId": "424242"}, 404, 100, 33, ""},
			{map[string]string{"userId": "424242"}, 404, 100, 33, ""},
			{map[string]string{"userId": w.consumerID}, 400, 100, 0, "userId"},
		} {
			res, body := w.rest(t, "POST", w.consumer, "/api/mobile/blocks", c.body)
			wantGraphError(t, res, body, c.status, c.code, c.subcode)
			if c.field != "" && !strings.Contains(string(body), c.field) {
				t.Fatalf("%v: the refusal does not name %s: %s", c.body, c.field, body)
			}
		}
		res, body := w.rest(t, "DELETE", w.consumer, "/api/mobile/blocks", nil)
		wantGraphError(t, res, body, 400, 100, 0)
		if n := dbCount(t, w.db, "SELECT (SELECT count(*) FROM svcchat.page_blocks) + (SELECT count(*) FROM chat.user_blocks)"); n != 0 {
			t.Fatalf("%d blocks stored", n)
		}
	})
	t.Run("the new paths answer only the user's session", func(t *testing.T) {
		for _, c := range []struct {
			method, path string
			body         any
		}{{"POST", "/api/mobile/blocks", map[string]string{"pageId": page}}, {"GET", "/api/mobile/blocks", nil},
			{"DELETE", "/api/mobile/blocks?pageId=" + page, nil}, {"POST", "/api/mobile/reports", map[string]string{"pageId": page, "reason": "x"}}} {
			res, body := w.rest(t, c.method, w.app, c.path, c.body)
			wantGraphError(t, res, body, 403, 200, 2069001)
			res, body = w.rest(t, c.method, "", c.path, c.body)
			wantGraphError(t, res, body, 401, 104, 0)
		}
	})

	// 4. Report the Page; staff restrict it.
	res, body = w.rest(t, "POST", w.consumer, "/api/mobile/reports", map[string]string{"pageId": page, "reason": "Spam"})
	report := decode[struct{ ID, Status, CreatedAt string }](t, body)
	if res.StatusCode != 200 || report.ID == "" || report.Status != "open" {
		t.Fatalf("report: %d %s", res.StatusCode, body)
	}
	const reports = "/api/developers/admin/trust-safety/reports"
	const restrictions = "/api/developers/admin/trust-safety/restrictions"
	t.Run("only staff read and decide reports and lift restrictions", func(t *testing.T) {
		for _, c := range []struct {
			method, path string
			body         any
		}{{"GET", reports, nil}, {"POST", reports, map[string]string{"id": report.ID, "decision": "dismiss"}},
			{"GET", restrictions, nil}, {"DELETE", restrictions + "?pageId=" + page, nil}} {
			res, body := w.rest(t, c.method, w.consumer, c.path, c.body)
			wantGraphError(t, res, body, 403, 200, 2069005)
			res, body = w.rest(t, c.method, w.owner, c.path, c.body)
			wantGraphError(t, res, body, 403, 200, 2069005)
			res, body = w.rest(t, c.method, w.app, c.path, c.body)
			if res.StatusCode != 403 || decode[graphError](t, body).Error.Code != 200 {
				t.Fatalf("%s %s with an app token: %d %s", c.method, c.path, res.StatusCode, body)
			}
		}
	})
	res, body = w.rest(t, "GET", w.staff, reports, nil)
	queue := decode[struct{ Data []map[string]any }](t, body).Data
	if res.StatusCode != 200 || len(queue) != 1 || queue[0]["id"] != report.ID || queue[0]["pageId"] != page ||
		queue[0]["kind"] != "page" || queue[0]["reason"] != "Spam" || queue[0]["reporterUserId"] != w.consumerID || queue[0]["status"] != "open" {
		t.Fatalf("staff queue: %d %s", res.StatusCode, body)
	}
	res, body = w.rest(t, "POST", w.staff, reports, map[string]string{"id": report.ID, "decision": "restrict"})
	decided := decode[struct {
		Report      map[string]any
		Restriction map[string]any
	}](t, body)
	if res.StatusCode != 200 || decided.Report["status"] != "restricted" || decided.Restriction["pageId"] != page {
		t.Fatalf("restrict: %d %s", res.StatusCode, body)
	}
	res, body = w.session(t, "Buy now")
	wantGraphError(t, res, body, 403, 10, 2018310)
	res, body = w.rest(t, "POST", w.staff, reports, map[string]string{"id": report.ID, "decision": "dismiss"})
	wantGraphError(t, res, body, 409, 10, 2018305)

	// 5. Staff lift the restriction.
	res, body = w.rest(t, "GET", w.staff, restrictions, nil)
	if r := decode[struct{ Data []map[string]any }](t, body).Data; res.StatusCode != 200 || len(r) != 1 || r[0]["pageId"] != page {
		t.Fatalf("restrictions: %d %s", res.StatusCode, body)
	}
	if res, body := w.rest(t, "DELETE", w.staff, restrictions+"?pageId="+page, nil); res.StatusCode != 200 {
		t.Fatalf("lift: %d %s", res.StatusCode, body)
	}
	wantSent(t, first(w.session(t, "Sorry about that.")), w.consumerID)
	res, body = w.rest(t, "DELETE", w.staff, restrictions+"?pageId="+page, nil)
	wantGraphError(t, res, body, 409, 10, 2018305)
}
