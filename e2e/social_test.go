package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// socialWorld is a running gateway whose app subscribed to the social
// events, with user tokens of the seeded Page owner (author) and the
// consumer (reader), and a token with no social scope.
type socialWorld struct {
	*graphWorld
	rcv     *hookReceiver
	author  string
	reader  string
	noScope string
}

func newSocialWorld(t *testing.T) *socialWorld {
	t.Helper()
	gw := newGraphWorld(t)
	w := &socialWorld{graphWorld: gw,
		author:  gw.g.UserToken(t, "owner", "threads_basic", "threads_content_publish", "threads_manage_insights", "pages:read", "pages:manage"),
		reader:  gw.g.UserToken(t, "consumer", "threads_basic", "threads_content_publish", "threads_manage_insights", "pages:read", "pages:manage"),
		noScope: gw.g.UserToken(t, "consumer", "public_profile"),
	}
	w.rcv = newHookReceiver(t, w.c.App.ClientSecret)
	res, body := w.post(t, w.c.App.APIKey, map[string]any{"node": "app/" + w.c.App.ID + "/subscriptions",
		"callback_url": w.rcv.srv.URL + "/hook", "verify_token": hookVerifyToken,
		"events": []string{"social.thread.created", "social.reel.ready"}}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, body)
	}
	return w
}

// graph sends one Graph call: GET with query parameters, or POST with a
// JSON body (node included).
func (w *socialWorld) graph(t *testing.T, method, token, node string, params map[string]any) (*http.Response, []byte) {
	t.Helper()
	if method == "POST" {
		body := map[string]any{"node": node}
		for k, v := range params {
			body[k] = v
		}
		return w.post(t, token, body, nil)
	}
	q := url.Values{"node": {node}}
	for k, v := range params {
		q.Set(k, v.(string))
	}
	return w.get(t, token, q)
}

func (w *socialWorld) ok(t *testing.T, method, token, node string, params map[string]any) map[string]any {
	t.Helper()
	res, body := w.graph(t, method, token, node, params)
	if res.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", method, node, res.StatusCode, body)
	}
	return decode[map[string]any](t, body)
}

func insightValues(t *testing.T, out map[string]any) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	for _, d := range out["data"].([]any) {
		m := d.(map[string]any)
		if m["period"] != "lifetime" {
			t.Fatalf("insight %v", m)
		}
		got[m["name"].(string)] = m["values"].([]any)[0].(map[string]any)["value"].(float64)
	}
	return got
}

func TestSocialThreadsAndReelsOverTheGraphWithInsightsFromRealReads(t *testing.T) {
	t.Parallel()
	w := newSocialWorld(t)
	owner := w.c.Users["owner"].ID

	// A thread, read twice by the consumer and once by its author.
	id := w.ok(t, "POST", w.author, "me/threads", map[string]any{"text": "First thread 🧵"})["id"].(string)
	for range 2 {
		got := w.ok(t, "GET", w.reader, "thread/"+id, nil)
		if got["text"] != "First thread 🧵" || got["author_id"] != owner || got["created_time"] == "" {
			t.Fatalf("thread %v", got)
		}
	}
	w.ok(t, "GET", w.author, "thread/"+id, nil)
	if got := w.ok(t, "POST", w.reader, "thread/"+id+"/likes", nil); got["success"] != true {
		t.Fatalf("like %v", got)
	}
	w.ok(t, "POST", w.reader, "thread/"+id+"/likes", nil) // once per user
	reply := w.ok(t, "POST", w.reader, "thread/"+id+"/replies", map[string]any{"text": "Nice"})["id"].(string)
	list := w.ok(t, "GET", w.author, "thread/"+id+"/replies", map[string]any{"limit": "10"})
	items := list["data"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["id"] != reply || items[0].(map[string]any)["reply_to"] != id {
		t.Fatalf("replies %v", list)
	}
	got := insightValues(t, w.ok(t, "GET", w.author, "thread/"+id+"/insights", map[string]any{"metric": "views,likes,replies"}))
	if got["views"] != 2 || got["likes"] != 1 || got["replies"] != 1 {
		t.Fatalf("thread insights %v, want views 2, likes 1, replies 1", got)
	}
	created := w.rcv.waitForData("social.thread.created", "id", id)
	if created.body.AppID != w.c.App.ID || created.body.Data["author_id"] != owner {
		t.Fatalf("thread.created %+v", created.body)
	}

	// A reel whose video a real HTTP server describes: processing, then
	// ready, then the linked app hears of it.
	video := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "video/mp4")
		rw.Header().Set("Content-Length", "1048576")
	}))
	t.Cleanup(video.Close)
	out := w.ok(t, "POST", w.author, "page/"+w.c.Page.ID+"/reels", map[string]any{"video_url": video.URL + "/clip.mp4", "caption": "Our kitchen"})
	reel, _ := out["id"].(string)
	if reel == "" || out["status"] != "processing" {
		t.Fatalf("reel %v", out)
	}
	ready := w.rcv.waitForData("social.reel.ready", "id", reel)
	if ready.body.PageID == nil || *ready.body.PageID != w.c.Page.ID {
		t.Fatalf("reel.ready %+v", ready.body)
	}
	r := w.ok(t, "GET", w.author, "reel/"+reel, nil)
	if r["status"] != "ready" || r["caption"] != "Our kitchen" || r["page_id"] != w.c.Page.ID {
		t.Fatalf("reel %v", r)
	}
	// The app, linked to the Page, reads it with its system token: a view.
	w.ok(t, "GET", appToken(t, w.graphWorld, "pages:read"), "reel/"+reel, nil)
	if got := insightValues(t, w.ok(t, "GET", w.author, "reel/"+reel+"/insights", map[string]any{"metric": "views"})); got["views"] != 1 {
		t.Fatalf("reel insights %v, want views 1", got)
	}

	// A reel whose video is a web page ends in error with the reason.
	page := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "text/html")
		rw.Header().Set("Content-Length", "10")
	}))
	t.Cleanup(page.Close)
	bad := w.ok(t, "POST", w.author, "page/"+w.c.Page.ID+"/reels", map[string]any{"video_url": page.URL})["id"].(string)
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := w.ok(t, "GET", w.author, "reel/"+bad, nil)
		if r["status"] == "error" {
			if !strings.Contains(r["error_reason"].(string), "not video/*") {
				t.Fatalf("reason %v", r)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the bad reel stayed %v", r)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSocialOperationsAnswerTheirShapeAndTheirDocumentedRefusals is the
// table over every social operation: a correct call's shape, then no token,
// a token without the scope, and an id that names nothing.
func TestSocialOperationsAnswerTheirShapeAndTheirDocumentedRefusals(t *testing.T) {
	t.Parallel()
	w := newSocialWorld(t)
	thread := w.ok(t, "POST", w.author, "me/threads", map[string]any{"text": "table"})["id"].(string)
	video := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "video/mp4")
		rw.Header().Set("Content-Length", "10")
	}))
	t.Cleanup(video.Close)
	reel := w.ok(t, "POST", w.author, "page/"+w.c.Page.ID+"/reels", map[string]any{"video_url": video.URL})["id"].(string)
	const unknown = "no-such-object"

	ops := []struct {
		method, node string
		params       map[string]any
		keys         []string // the success answer's keys
		unknownNode  string   // the node with an id that names nothing; "" when none
	}{
		{"POST", "me/threads", map[string]any{"text": "hello"}, []string{"id"}, ""},
		{"GET", "thread/" + thread, nil, []string{"author_id", "created_time", "id", "text"}, "thread/" + unknown},
		{"POST", "thread/" + thread + "/replies", map[string]any{"text": "re"}, []string{"id"}, "thread/" + unknown + "/replies"},
		{"GET", "thread/" + thread + "/replies", nil, []string{"data", "paging"}, "thread/" + unknown + "/replies"},
		{"POST", "thread/" + thread + "/likes", nil, []string{"success"}, "thread/" + unknown + "/likes"},
		{"GET", "thread/" + thread + "/insights", map[string]any{"metric": "views"}, []string{"data"}, "thread/" + unknown + "/insights"},
		{"POST", "page/" + w.c.Page.ID + "/reels", map[string]any{"video_url": video.URL}, []string{"id", "status"}, ""},
		{"GET", "reel/" + reel, nil, []string{"author_id", "caption", "created_time", "id", "page_id", "status", "video_url"}, "reel/" + unknown},
		{"GET", "reel/" + reel + "/insights", nil, []string{"data"}, "reel/" + unknown + "/insights"},
	}
	for _, op := range ops {
		t.Run(op.method+" "+op.node, func(t *testing.T) {
			out := w.ok(t, op.method, w.author, op.node, op.params)
			for _, k := range op.keys {
				if _, ok := out[k]; !ok {
					t.Fatalf("answer %v lacks %q", out, k)
				}
			}
			res, body := w.graph(t, op.method, "", op.node, op.params)
			wantGraphError(t, res, body, 401, 104, 0)
			res, body = w.graph(t, op.method, w.noScope, op.node, op.params)
			wantGraphError(t, res, body, 403, 10, 2069002)
			if op.unknownNode != "" {
				res, body = w.graph(t, op.method, w.author, op.unknownNode, op.params)
				wantGraphError(t, res, body, 404, 100, 33)
			}
		})
	}

	t.Run("a reel on a Page the user does not administer is refused with 2069003", func(t *testing.T) {
		res, body := w.graph(t, "POST", w.reader, "page/"+w.c.Page.ID+"/reels", map[string]any{"video_url": video.URL})
		wantGraphError(t, res, body, 403, 200, 2069003)
	})
	for _, text := range []string{"", strings.Repeat("é", 501)} {
		t.Run(fmt.Sprintf("text of %d code points is refused naming text", len([]rune(text))), func(t *testing.T) {
			for _, node := range []string{"me/threads", "thread/" + thread + "/replies"} {
				res, body := w.graph(t, "POST", w.author, node, map[string]any{"text": text})
				if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "text") {
					t.Fatalf("message does not name text: %s", body)
				}
			}
		})
	}
	t.Run("500 code points of text are accepted", func(t *testing.T) {
		w.ok(t, "POST", w.author, "me/threads", map[string]any{"text": strings.Repeat("é", 500)})
	})
	t.Run("an unknown metric is refused naming metric", func(t *testing.T) {
		for _, node := range []string{"thread/" + thread + "/insights", "reel/" + reel + "/insights"} {
			res, body := w.graph(t, "GET", w.author, node, map[string]any{"metric": "views,reach"})
			if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "metric") {
				t.Fatalf("message does not name metric: %s", body)
			}
		}
	})
	t.Run("a plain http video URL is refused naming video_url", func(t *testing.T) {
		res, body := w.graph(t, "POST", w.author, "page/"+w.c.Page.ID+"/reels", map[string]any{"video_url": "http://cdn.example.com/v.mp4"})
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "video_url") {
			t.Fatalf("message does not name video_url: %s", body)
		}
	})
	t.Run("another user's thread insights are refused with code 10", func(t *testing.T) {
		res, body := w.graph(t, "GET", w.reader, "thread/"+thread+"/insights", nil)
		wantGraphError(t, res, body, 403, 10, 0)
	})
	t.Run("a reel's insights are not found for a user with no role on its Page", func(t *testing.T) {
		res, body := w.graph(t, "GET", w.reader, "reel/"+reel+"/insights", nil)
		wantGraphError(t, res, body, 404, 100, 33)
	})
	// Nothing refused was stored: the table wrote 4 threads (its own, the
	// me/threads and replies rows, the 500-code-point one) and 2 reels.
	if n := dbCount(t, w.db, `SELECT count(*) FROM social.threads`); n != 4 {
		t.Fatalf("%d threads stored, want 4", n)
	}
	if n := dbCount(t, w.db, `SELECT count(*) FROM social.reels`); n != 2 {
		t.Fatalf("%d reels stored, want 2", n)
	}
}

func TestMeAssignedAssetsListsThePagesAndAppsTheUserHasARoleOnWithTheirTasks(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	res, body := w.get(t, w.owner, url.Values{"node": {"me/assigned_assets"}})
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	type asset struct {
		ID, Type, Name string
		BusinessID     string `json:"business_id"`
		Tasks          []string
	}
	out := decode[struct{ Data []asset }](t, body)
	byID := map[string]asset{}
	for _, a := range out.Data {
		byID[a.Type+" "+a.ID] = a
	}
	page := byID["PAGE "+w.c.Page.ID]
	if page.Name != w.c.Page.Name || page.BusinessID != w.c.Business.ID || strings.Join(page.Tasks, ",") != "MANAGE,CREATE_CONTENT,MODERATE,ADVERTISE,ANALYZE" {
		t.Fatalf("the seeded Page is %+v in %s", page, body)
	}
	if app, ok := byID["APP "+w.c.App.ID]; !ok || len(app.Tasks) == 0 || app.BusinessID != w.c.Business.ID {
		t.Fatalf("the seeded app is %+v in %s", app, body)
	}
	// w.owner's token may not read ad accounts (no ads_read): none listed.
	for _, a := range out.Data {
		if a.Type == "AD_ACCOUNT" {
			t.Fatalf("a token without ads_read sees ad account %+v", a)
		}
	}
	// With ads_read, the owner's sandbox ad account (the ads plugin's,
	// provisioned on the first list in development) is listed too, in no
	// business until one of the owner's takes it (business/<id>/assets).
	ads := w.g.UserToken(t, "owner", "ads_read", "pages:read")
	res, body = w.get(t, ads, url.Values{"node": {"me/adaccounts"}})
	accounts := decode[struct{ Data []asset }](t, body)
	if res.StatusCode != 200 || len(accounts.Data) == 0 {
		t.Fatalf("me/adaccounts: %d %s", res.StatusCode, body)
	}
	res, body = w.get(t, ads, url.Values{"node": {"me/assigned_assets"}})
	listed := map[string]asset{}
	for _, a := range decode[struct{ Data []asset }](t, body).Data {
		listed[a.Type+" "+a.ID] = a
	}
	acct := listed["AD_ACCOUNT "+accounts.Data[0].ID]
	if res.StatusCode != 200 || acct.Name != accounts.Data[0].Name || acct.BusinessID != "" ||
		strings.Join(acct.Tasks, ",") != "MANAGE,ADVERTISE,ANALYZE" {
		t.Fatalf("with ads_read the ad account is %+v in %d %s", acct, res.StatusCode, body)
	}

	// The consumer has no role on the seeded Page.
	res, body = w.get(t, w.stranger, url.Values{"node": {"me/assigned_assets"}})
	if res.StatusCode != 200 || strings.Contains(string(body), w.c.Page.ID) {
		t.Fatalf("consumer: %d %s", res.StatusCode, body)
	}
	res, body = w.get(t, "", url.Values{"node": {"me/assigned_assets"}})
	wantGraphError(t, res, body, 401, 104, 0)
	res, body = w.get(t, w.c.App.APIKey, url.Values{"node": {"me/assigned_assets"}})
	wantGraphError(t, res, body, 403, 200, 2069001)
}
