package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/pgtest"
)

// graphWorld is a running gateway with the seeded world and tokens.
type graphWorld struct {
	g        *gatewaytest.Gateway
	db       string
	c        gatewaytest.Credentials
	owner    string // user token of the Page owner with pages:read and pages:manage
	reader   string // user token of the owner with pages:read only
	stranger string // user token of the consumer (not a Page admin) with both scopes
}

func newGraphWorld(t *testing.T) *graphWorld {
	t.Helper()
	db := pgtest.NewDatabase(t)
	g := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: db})
	return &graphWorld{
		g: g, db: db, c: g.Credentials(t),
		owner:    g.UserToken(t, "owner", "public_profile", "pages:read", "pages:manage"),
		reader:   g.UserToken(t, "owner", "pages:read"),
		stranger: g.UserToken(t, "consumer", "pages:read", "pages:manage"),
	}
}

func (w *graphWorld) get(t *testing.T, token string, q url.Values) (*http.Response, []byte) {
	t.Helper()
	h := map[string]string{}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return do(t, "GET", w.g.URL+"/api/v1/graph?"+q.Encode(), nil, h)
}

func (w *graphWorld) post(t *testing.T, token string, body any, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	h := map[string]string{"Content-Type": "application/json"}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	for k, v := range header {
		h[k] = v
	}
	return do(t, "POST", w.g.URL+"/api/v1/graph", strings.NewReader(string(b)), h)
}

func (w *graphWorld) publish(t *testing.T, content string) string {
	t.Helper()
	res, body := w.post(t, w.owner, map[string]any{"node": "page/" + w.c.Page.ID + "/posts", "content": content, "audience": "everyone"}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("publish: %d %s", res.StatusCode, body)
	}
	var out struct{ ID string }
	if err := json.Unmarshal(body, &out); err != nil || out.ID == "" {
		t.Fatalf("publish answered %s", body)
	}
	return out.ID
}

func decode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}

type postList struct {
	Data []struct {
		ID, Content, Audience, PageID string
		CreatedTime                   string `json:"created_time"`
	} `json:"data"`
	Paging struct {
		Cursors struct{ Before, After string } `json:"cursors"`
		Next    string                         `json:"next"`
	} `json:"paging"`
}

func TestAnAppPublishesAndReadsPostsAsThePage(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	page := w.c.Page.ID

	res, body := w.get(t, w.owner, url.Values{"node": {"me/pages"}, "limit": {"10"}})
	if res.StatusCode != 200 {
		t.Fatalf("me/pages: %d %s", res.StatusCode, body)
	}
	pages := decode[struct {
		Data []struct {
			ID, Name, Role string
			Published      bool
		}
	}](t, body)
	if len(pages.Data) != 1 || pages.Data[0].ID != page || pages.Data[0].Role != "owner" || !pages.Data[0].Published {
		t.Fatalf("me/pages = %s", body)
	}

	id := w.publish(t, "Hello from the Page 👋")
	res, body = w.get(t, w.reader, url.Values{"node": {"post/" + id}})
	if res.StatusCode != 200 {
		t.Fatalf("post/%s: %d %s", id, res.StatusCode, body)
	}
	post := decode[struct {
		ID, Content, Audience string
		PageID                string `json:"page_id"`
	}](t, body)
	if post.ID != id || post.Content != "Hello from the Page 👋" || post.Audience != "everyone" || post.PageID != page {
		t.Fatalf("post = %s", body)
	}

	t.Run("nested fields expand the posts edge of each Page", func(t *testing.T) {
		res, body := w.get(t, w.owner, url.Values{"node": {"me/pages"}, "fields": {"id,name,posts.limit(1){id,content}"}})
		if res.StatusCode != 200 {
			t.Fatalf("%d %s", res.StatusCode, body)
		}
		got := decode[struct {
			Data []map[string]json.RawMessage `json:"data"`
		}](t, body)
		if len(got.Data) != 1 {
			t.Fatalf("%s", body)
		}
		item := got.Data[0]
		if _, hasPublished := item["published"]; hasPublished {
			t.Errorf("unselected field returned: %s", body)
		}
		posts := decode[postList](t, item["posts"])
		if len(posts.Data) != 1 || posts.Data[0].ID != id || posts.Data[0].Content != "Hello from the Page 👋" {
			t.Fatalf("posts edge = %s", item["posts"])
		}
		if posts.Data[0].Audience != "" {
			t.Errorf("unselected nested field returned: %s", item["posts"])
		}
	})
	t.Run("an unknown field is refused naming it", func(t *testing.T) {
		res, body := w.get(t, w.owner, url.Values{"node": {"page/" + page}, "fields": {"id,bogus"}})
		e := wantGraphError(t, res, body, 400, 100, 0)
		if !strings.Contains(e.Error.Message, "bogus") {
			t.Errorf("message does not name the field: %s", body)
		}
	})
}

func TestUnicodeContentRoundTripsByteForByte(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	for _, content := range []string{
		"emoji 👩‍👩‍👧‍👦🏳️‍🌈 and 🇯🇵",
		"RTL: שלום עולם — مرحبا بالعالم",
		"combining: e\u0301 a\u0308 n\u0303 Z\u0351\u0352\u0353",
		"CJK: 漢字かなカナ한국어",
		"line\nbreaks\tand \"quotes\" and \\ and <tags> & \u2028",
		strings.Repeat("é", 63206),
	} {
		id := w.publish(t, content)
		res, body := w.get(t, w.owner, url.Values{"node": {"post/" + id}, "fields": {"content"}})
		if res.StatusCode != 200 {
			t.Fatalf("%d %s", res.StatusCode, body)
		}
		if got := decode[struct{ Content string }](t, body).Content; got != content {
			t.Fatalf("content changed: sent %q… got %q…", trim(content), trim(got))
		}
	}
	res, body := w.post(t, w.owner, map[string]any{"node": "page/" + w.c.Page.ID + "/posts", "content": strings.Repeat("é", 63207)}, nil)
	wantGraphError(t, res, body, 400, 100, 0)
}

func trim(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}

func TestPagingIsStableUnderInserts(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	var ids []string
	for i := range 7 {
		ids = append(ids, w.publish(t, fmt.Sprintf("post %d", i)))
	}
	q := url.Values{"node": {"page/" + w.c.Page.ID + "/posts"}, "limit": {"3"}}
	res, body := w.get(t, w.reader, q)
	first := decode[postList](t, body)
	if res.StatusCode != 200 || len(first.Data) != 3 || first.Data[0].ID != ids[6] || first.Paging.Next == "" {
		t.Fatalf("first page: %s", body)
	}
	// New posts arrive between pages: the next page still continues where
	// the first ended.
	w.publish(t, "late 1")
	w.publish(t, "late 2")
	next, err := url.Parse(first.Paging.Next)
	if err != nil || next.Host != strings.TrimPrefix(w.g.URL, "http://") {
		t.Fatalf("next is not an absolute URL of the gateway: %q", first.Paging.Next)
	}
	res, body = w.get(t, w.reader, next.Query())
	second := decode[postList](t, body)
	if res.StatusCode != 200 || len(second.Data) != 3 || second.Data[0].ID != ids[3] || second.Data[2].ID != ids[1] {
		t.Fatalf("second page: %s", body)
	}
	next, _ = url.Parse(second.Paging.Next)
	res, body = w.get(t, w.reader, next.Query())
	last := decode[postList](t, body)
	if res.StatusCode != 200 || len(last.Data) != 1 || last.Data[0].ID != ids[0] || last.Paging.Next != "" {
		t.Fatalf("last page (next must be absent): %s", body)
	}
	if strings.Contains(string(body), `"next"`) {
		t.Fatalf("next present on the last page: %s", body)
	}
}

func TestBatchRunsInOrderWithNamedResults(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	page := w.c.Page.ID
	res, body := w.post(t, w.owner, map[string]any{"batch": []map[string]any{
		{"method": "POST", "relative_url": "page/" + page + "/posts", "body": map[string]any{"content": "from a batch"}, "name": "created"},
		{"method": "GET", "relative_url": "post/{result=created:$.id}?fields=id,content"},
		{"method": "GET", "relative_url": "post/999999999999"},
		{"method": "GET", "relative_url": "page/" + page + "/posts?limit=1"},
	}}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	items := decode[[]struct {
		Code int
		Body string
	}](t, body)
	if len(items) != 4 {
		t.Fatalf("%s", body)
	}
	created := decode[struct{ ID string }](t, []byte(items[0].Body))
	read := decode[struct{ ID, Content string }](t, []byte(items[1].Body))
	if items[0].Code != 200 || items[1].Code != 200 || read.ID != created.ID || read.Content != "from a batch" {
		t.Fatalf("dependent item: %s", body)
	}
	if items[2].Code != 404 || !strings.Contains(items[2].Body, `"error_subcode":33`) {
		t.Fatalf("failing item: %+v", items[2])
	}
	if items[3].Code != 200 {
		t.Fatalf("item after a failure: %+v", items[3])
	}

	res, body = w.post(t, w.owner, map[string]any{"batch": make([]map[string]any, 51)}, nil)
	wantGraphError(t, res, body, 400, 100, 0)
}

func TestIdempotentRetryCreatesOnePost(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	body := map[string]any{"node": "page/" + w.c.Page.ID + "/posts", "content": "exactly once"}
	key := map[string]string{"Idempotency-Key": "retry-1"}
	var wg sync.WaitGroup
	answers := make([]string, 4)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, b := w.post(t, w.owner, body, key)
			if res.StatusCode == 200 {
				answers[i] = string(b)
			}
		}()
	}
	wg.Wait()
	res, b := w.post(t, w.owner, body, key)
	if res.StatusCode != 200 {
		t.Fatalf("retry: %d %s", res.StatusCode, b)
	}
	for _, a := range answers {
		if a != "" && a != string(b) {
			t.Fatalf("different answers for one key: %s vs %s", a, b)
		}
	}
	if n := countPosts(t, w.db, "exactly once"); n != 1 {
		t.Fatalf("%d posts created for one Idempotency-Key", n)
	}
	other := map[string]any{"node": "page/" + w.c.Page.ID + "/posts", "content": "another body"}
	res, b = w.post(t, w.owner, other, key)
	wantGraphError(t, res, b, 400, 100, 0)
	// Another user of the same app with the same key is another key: it
	// never gets the first caller's answer (CONTRACT §1); here its own write
	// is refused, since it does not manage the Page.
	res, b = w.post(t, w.stranger, body, key)
	wantGraphError(t, res, b, 403, 200, 2069003)
}

func countPosts(t *testing.T, dbURL, content string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM book.posts WHERE content = $1", content).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPostCreatedEventIsWrittenWithThePost(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	id := w.publish(t, "evented")
	conn, err := pgx.Connect(context.Background(), w.db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var data []byte
	var pageID string
	if err := conn.QueryRow(context.Background(),
		"SELECT data, page_id FROM core.outbox WHERE type = 'book.post.created' AND data->>'postId' = $1", id).Scan(&data, &pageID); err != nil {
		t.Fatalf("no book.post.created event for post %s: %v", id, err)
	}
	ev := decode[map[string]string](t, data)
	if pageID != w.c.Page.ID || ev["content"] != "evented" || ev["audience"] != "everyone" || ev["pageId"] != w.c.Page.ID {
		t.Fatalf("event data = %s", data)
	}
}

func TestGraphRefusalsFollowTheContract(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	page := w.c.Page.ID
	posts := url.Values{"node": {"page/" + page + "/posts"}}
	write := map[string]any{"node": "page/" + page + "/posts", "content": "x"}
	cases := []struct {
		name                  string
		res                   func() (*http.Response, []byte)
		status, code, subcode int
	}{
		{"no token is 104", func() (*http.Response, []byte) { return w.get(t, "", posts) }, 401, 104, 0},
		{"an unknown token is 190/467", func() (*http.Response, []byte) { return w.get(t, "not-a-token", posts) }, 401, 190, 467},
		{"an app key on me/pages is 2069001", func() (*http.Response, []byte) {
			return w.get(t, w.c.App.APIKey, url.Values{"node": {"me/pages"}})
		}, 403, 200, 2069001},
		{"an app key writing a post is 2069001", func() (*http.Response, []byte) { return w.post(t, w.c.App.APIKey, write, nil) }, 403, 200, 2069001},
		{"a token without pages:manage is 2069002", func() (*http.Response, []byte) { return w.post(t, w.reader, write, nil) }, 403, 10, 2069002},
		{"a user who does not administer the Page is 2069003", func() (*http.Response, []byte) { return w.post(t, w.stranger, write, nil) }, 403, 200, 2069003},
		{"an unknown node is 2500", func() (*http.Response, []byte) {
			return w.get(t, w.owner, url.Values{"node": {"page/" + page + "/nothing"}})
		}, 404, 2500, 0},
		{"a missing post is 100/33", func() (*http.Response, []byte) { return w.get(t, w.owner, url.Values{"node": {"post/424242424242"}}) }, 404, 100, 33},
		{"limit over 100 is refused", func() (*http.Response, []byte) {
			return w.get(t, w.owner, url.Values{"node": {"page/" + page + "/posts"}, "limit": {"101"}})
		}, 400, 100, 0},
		{"an unknown query parameter is refused", func() (*http.Response, []byte) {
			return w.get(t, w.owner, url.Values{"node": {"page/" + page + "/posts"}, "colour": {"red"}})
		}, 400, 100, 0},
		{"an unknown body field is refused", func() (*http.Response, []byte) {
			return w.post(t, w.owner, map[string]any{"node": "page/" + page + "/posts", "content": "x", "colour": "red"}, nil)
		}, 400, 100, 0},
		{"a wrong type is refused", func() (*http.Response, []byte) {
			return w.post(t, w.owner, map[string]any{"node": "page/" + page + "/posts", "content": 5}, nil)
		}, 400, 100, 0},
		{"an unknown audience is refused", func() (*http.Response, []byte) {
			return w.post(t, w.owner, map[string]any{"node": "page/" + page + "/posts", "content": "x", "audience": "friends"}, nil)
		}, 400, 100, 0},
		{"empty content is refused", func() (*http.Response, []byte) {
			return w.post(t, w.owner, map[string]any{"node": "page/" + page + "/posts", "content": ""}, nil)
		}, 400, 100, 0},
		{"malformed JSON is refused", func() (*http.Response, []byte) {
			return do(t, "POST", w.g.URL+"/api/v1/graph", strings.NewReader(`{"node":`),
				map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + w.owner})
		}, 400, 100, 0},
		{"a form body is refused", func() (*http.Response, []byte) {
			return do(t, "POST", w.g.URL+"/api/v1/graph", strings.NewReader(`node=me`),
				map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": "Bearer " + w.owner})
		}, 400, 100, 0},
		{"v2 is 2635", func() (*http.Response, []byte) {
			return do(t, "GET", w.g.URL+"/api/v2/graph?node=me", nil, map[string]string{"Authorization": "Bearer " + w.owner})
		}, 404, 2635, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, body := tc.res()
			wantGraphError(t, res, body, tc.status, tc.code, tc.subcode)
		})
	}
	if n := countPosts(t, w.db, "x"); n != 0 {
		t.Fatalf("refused writes created %d posts", n)
	}
}
