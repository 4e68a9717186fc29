package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	socialv1 "github.com/svcplatform/svc/gen/svc/social/v1"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

// videoServer is a real HTTP server answering every request with status,
// Content-Type and Content-Length as given (length < 0: none, chunked).
func videoServer(t *testing.T, status int, contentType string, length int64) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		if length >= 0 {
			w.Header().Set("Content-Length", strconv.FormatInt(length, 10))
		} else {
			w.Header().Set("Transfer-Encoding", "chunked")
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func (b *bundle) reel(t *testing.T, videoURL string) string {
	t.Helper()
	res, err := call[*socialv1.CreateReelResponse](t, b, procCreateReel, user(author),
		&socialv1.CreateReelRequest{PageId: pageID, VideoUrl: videoURL, Caption: "Behind the counter"})
	if err != nil {
		t.Fatalf("create reel: %v", err)
	}
	if res.GetId() == "" || res.GetStatus() != "processing" {
		t.Fatalf("create reel answered %v", res)
	}
	return res.GetId()
}

func (b *bundle) getReel(t *testing.T, id string) *socialv1.Reel {
	t.Helper()
	r, err := call[*socialv1.Reel](t, b, procGetReel, user(author), &socialv1.GetReelRequest{ReelId: id})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// check runs the checker until no reel is due.
func (b *bundle) check(t *testing.T) {
	t.Helper()
	for {
		did, err := b.svc.checkOne(ctxFor(t))
		if err != nil {
			t.Fatal(err)
		}
		if !did {
			return
		}
	}
}

func TestAReelWithAVideoWithinOneGiBBecomesReadyAndEmitsReelReady(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{Development: true})
	srv, hits := videoServer(t, 200, "video/mp4", MaxVideoBytes)
	id := b.reel(t, srv.URL+"/clip.mp4")
	if r := b.getReel(t, id); r.GetStatus() != "processing" || r.GetAuthorId() != author || r.GetPageId() != pageID {
		t.Fatalf("before the check %v", r)
	}
	b.check(t)
	if r := b.getReel(t, id); r.GetStatus() != "ready" || r.GetErrorReason() != "" {
		t.Fatalf("after the check %v", r)
	}
	if hits.Load() != 1 {
		t.Fatalf("the video was asked %d times, want once", hits.Load())
	}
	var data []byte
	var page string
	if err := b.pool.QueryRow(ctxFor(t), `SELECT data, page_id FROM core.outbox WHERE type = $1`, EventReelReady).Scan(&data, &page); err != nil {
		t.Fatal(err)
	}
	var ev map[string]string
	_ = json.Unmarshal(data, &ev)
	if page != pageID || ev["id"] != id || ev["page_id"] != pageID {
		t.Fatalf("event page %s data %s", page, data)
	}
	// A checked reel is not checked again.
	b.check(t)
	if hits.Load() != 1 {
		t.Fatalf("a ready reel was checked again")
	}
}

func TestAReelWhoseVideoIsRefusedBecomesErrorWithTheReason(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name        string
		status      int
		contentType string
		length      int64
		reason      string
	}{
		{"a video over 1 GiB", 200, "video/mp4", MaxVideoBytes + 1, "more than 1 GiB"},
		{"a page, not a video", 200, "text/html; charset=utf-8", 100, `"text/html; charset=utf-8" is not video/*`},
		{"no Content-Type", 200, "", 100, "is not video/*"},
		{"no Content-Length", 200, "video/mp4", -1, "no Content-Length"},
		{"an empty video", 200, "video/mp4", 0, "empty"},
		{"not found", 404, "video/mp4", 10, "HTTP 404"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Options{Development: true})
			srv, _ := videoServer(t, c.status, c.contentType, c.length)
			id := b.reel(t, srv.URL+"/v")
			b.check(t)
			r := b.getReel(t, id)
			if r.GetStatus() != "error" || !strings.Contains(r.GetErrorReason(), c.reason) {
				t.Fatalf("reel %v, want error with %q", r, c.reason)
			}
			if n := plugintest.Count(t, b.pool, `SELECT count(*) FROM core.outbox`); n != 0 {
				t.Fatalf("%d events for a refused reel", n)
			}
		})
	}
}

func TestAnUnreachableVideoIsTriedThreeTimesThenTheReelFails(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{Development: true})
	srv, hits := videoServer(t, 503, "", 0)
	id := b.reel(t, srv.URL+"/v")
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		b.check(t)
		if hits.Load() != int32(attempt) {
			t.Fatalf("attempt %d: %d requests", attempt, hits.Load())
		}
		want := "processing"
		if attempt == maxAttempts {
			want = "error"
		}
		if r := b.getReel(t, id); r.GetStatus() != want {
			t.Fatalf("after attempt %d: %v, want %s", attempt, r, want)
		}
		// Make the retry due now rather than wait for it.
		if _, err := b.pool.Exec(ctxFor(t), `UPDATE social.reels SET check_after = now()`); err != nil {
			t.Fatal(err)
		}
	}
	if r := b.getReel(t, id); !strings.Contains(r.GetErrorReason(), "HTTP 503") {
		t.Fatalf("reason %q", r.GetErrorReason())
	}
}

func TestOutsideDevelopmentTheCheckerConnectsToPublicAddressesOnly(t *testing.T) {
	t.Parallel()
	srv, hits := videoServer(t, 200, "video/mp4", 10)
	trigger, reason := checkMedia(ctxFor(t), newMediaClient(false), srv.URL)
	if trigger != Rejected || !strings.Contains(reason, "not a public address") || hits.Load() != 0 {
		t.Fatalf("got %s %q (%d requests), want rejected before connecting", trigger, reason, hits.Load())
	}
}

func TestARedirectToPlainHTTPOutsideLoopbackIsNotFollowed(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.RedirectHandler("http://example.com/clip.mp4", http.StatusFound))
	t.Cleanup(srv.Close)
	trigger, reason := checkMedia(ctxFor(t), newMediaClient(true), srv.URL)
	if trigger != Rejected || !strings.Contains(reason, "not https") {
		t.Fatalf("got %s %q", trigger, reason)
	}
}

func TestHEADNotAllowedFallsBackToGET(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var methods []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods = append(methods, r.Method)
		mu.Unlock()
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "video/webm")
		w.Header().Set("Content-Length", "4")
		_, _ = w.Write([]byte("webm"))
	}))
	t.Cleanup(srv.Close)
	trigger, reason := checkMedia(ctxFor(t), newMediaClient(true), srv.URL)
	mu.Lock()
	defer mu.Unlock()
	if trigger != Accepted || strings.Join(methods, ",") != "HEAD,GET" {
		t.Fatalf("got %s %q after %v", trigger, reason, methods)
	}
}

func TestReelViewsCountReadsByOthersAndInsightsAreThePageAdminsOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{Development: true})
	srv, _ := videoServer(t, 200, "video/mp4", 10)
	id := b.reel(t, srv.URL)
	// The author reads it (no view); a reader with no role on the Page
	// cannot see it at all (no view either).
	b.getReel(t, id)
	_, err := call[*socialv1.Reel](t, b, procGetReel, user(reader), &socialv1.GetReelRequest{ReelId: id})
	plugintest.WantRefusal(t, err, 404, 100, 33)
	_, err = call[*socialv1.InsightsResponse](t, b, procReelInsights, user(reader), &socialv1.GetReelInsightsRequest{ReelId: id})
	plugintest.WantRefusal(t, err, 404, 100, 33)
	// Another admin's reads count: make the author's reads count by
	// changing who published it.
	if _, err := b.pool.Exec(ctxFor(t), `UPDATE social.reels SET author_id = 'someone else'`); err != nil {
		t.Fatal(err)
	}
	b.getReel(t, id)
	b.getReel(t, id)
	res, err := call[*socialv1.InsightsResponse](t, b, procReelInsights, user(author), &socialv1.GetReelInsightsRequest{ReelId: id, Metric: "views,likes"})
	if err != nil || len(res.GetData()) != 2 || res.GetData()[0].GetValues()[0].GetValue() != 2 || res.GetData()[1].GetValues()[0].GetValue() != 0 {
		t.Fatalf("insights %v %v", res, err)
	}
	_, err = call[*socialv1.InsightsResponse](t, b, procReelInsights, user(author), &socialv1.GetReelInsightsRequest{ReelId: id, Metric: "plays"})
	if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "metric" {
		t.Fatalf("refusal %+v", e)
	}
	for _, unknown := range []string{"1", "x", "6000000001 "} {
		_, err := call[*socialv1.Reel](t, b, procGetReel, user(author), &socialv1.GetReelRequest{ReelId: unknown})
		plugintest.WantRefusal(t, err, 404, 100, 33)
	}
}

func TestBadVideoURLsAreRefusedNamingVideoURLAndStoreNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	for _, u := range []string{
		"http://cdn.example.com/v.mp4", "ftp://cdn.example.com/v.mp4", "/v.mp4", "https://", "https://user:secret@cdn.example.com/v.mp4",
		"http://127.0.0.1:8080/v.mp4", // loopback http outside development
		"mailto:a@b", "https://cdn.example.com/%zz",
	} {
		_, err := call[*socialv1.CreateReelResponse](t, b, procCreateReel, user(author), &socialv1.CreateReelRequest{PageId: pageID, VideoUrl: u})
		if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "video_url" {
			t.Fatalf("%s: refusal %+v", u, e)
		}
	}
	if n := plugintest.Count(t, b.pool, `SELECT count(*) FROM social.reels`); n != 0 {
		t.Fatalf("%d reels stored by refused calls", n)
	}
}

func TestValidateVideoURL(t *testing.T) {
	for _, c := range []struct {
		url string
		dev bool
		ok  bool
	}{
		{"https://cdn.example.com/v.mp4", false, true},
		{"https://cdn.example.com/v.mp4?sig=1", false, true},
		{"http://127.0.0.1:9000/v.mp4", true, true},
		{"http://localhost/v.mp4", true, true},
		{"http://[::1]/v.mp4", true, true},
		{"http://127.0.0.1:9000/v.mp4", false, false},
		{"http://10.0.0.1/v.mp4", true, false},
		{"http://cdn.example.com/v.mp4", true, false},
		{"HTTPS://cdn.example.com/v.mp4", false, true},
		{"javascript:alert(1)", false, false},
	} {
		err := validateVideoURL(c.url, c.dev)
		if (err == nil) != c.ok {
			t.Errorf("validateVideoURL(%q, dev %v) = %v, want ok %v", c.url, c.dev, err, c.ok)
		}
	}
}

func FuzzValidateVideoURL(f *testing.F) {
	for _, s := range []string{"https://cdn.example.com/v.mp4", "http://127.0.0.1/v", "https://u:p@h/", "//h/v", "https://[::1", "\x00"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, dev bool) {
		err := validateVideoURL(s, dev)
		if err != nil {
			if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "video_url" {
				t.Fatalf("refusal names %q", e.Field)
			}
			return
		}
		// Whatever was accepted is https, or loopback http in development.
		lower := strings.ToLower(s)
		if !strings.HasPrefix(lower, "https://") && !(dev && strings.HasPrefix(lower, "http://")) {
			t.Fatalf("accepted %q (dev %v)", s, dev)
		}
	})
}

func TestReelLikesAndRepliesAreCountedInTheReelsInsights(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{Development: true})
	srv, _ := videoServer(t, 200, "video/mp4", 10)
	id := b.reel(t, srv.URL)
	fan := throughLinkedApp(reader)
	// The author and a reader through a linked app like it; a second like
	// of the same user changes nothing.
	for _, who := range []sdk.Principal{user(author), fan, fan} {
		res, err := call[*socialv1.SuccessResponse](t, b, procLikeReel, who, &socialv1.LikeReelRequest{ReelId: id})
		if err != nil || !res.GetSuccess() {
			t.Fatalf("like: %v %v", res, err)
		}
	}
	var replies []string
	for _, text := range []string{"first", "second", "third"} {
		res, err := call[*socialv1.CreateThreadResponse](t, b, procReplyToReel, fan, &socialv1.CreateReelReplyRequest{ReelId: id, Text: text})
		if err != nil || res.GetId() == "" {
			t.Fatalf("reply: %v %v", res, err)
		}
		replies = append(replies, res.GetId())
	}
	page, err := call[*socialv1.ListReelRepliesResponse](t, b, procReelReplies, user(author), &socialv1.ListReelRepliesRequest{ReelId: id, Limit: 2})
	if err != nil || len(page.GetData()) != 2 || page.GetData()[0].GetText() != "first" || page.GetData()[0].GetId() != replies[0] ||
		page.GetData()[0].GetAuthorId() != fan.UserID || page.GetData()[0].GetReelId() != id || !page.GetPaging().GetHasNext() {
		t.Fatalf("first page %v %v", page, err)
	}
	next, err := call[*socialv1.ListReelRepliesResponse](t, b, procReelReplies, user(author), &socialv1.ListReelRepliesRequest{ReelId: id, Limit: 2, After: page.GetPaging().GetAfter()})
	if err != nil || len(next.GetData()) != 1 || next.GetData()[0].GetText() != "third" || next.GetPaging().GetHasNext() {
		t.Fatalf("second page %v %v", next, err)
	}
	res, err := call[*socialv1.InsightsResponse](t, b, procReelInsights, user(author), &socialv1.GetReelInsightsRequest{ReelId: id, Metric: "likes,replies"})
	if err != nil || len(res.GetData()) != 2 || res.GetData()[0].GetValues()[0].GetValue() != 2 || res.GetData()[1].GetValues()[0].GetValue() != 3 {
		t.Fatalf("insights %v %v", res, err)
	}
	if n := plugintest.Count(t, b.pool, `SELECT count(*) FROM social.reel_likes WHERE page_id = $1`, pageID); n != 2 {
		t.Fatalf("%d likes stored, want 2", n)
	}
}

func TestReelLikesAndRepliesOfAReelTheUserCannotSeeAreNotFoundAndStoreNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{Development: true})
	srv, _ := videoServer(t, 200, "video/mp4", 10)
	id := b.reel(t, srv.URL)
	// A user with no role on the Page, through an app not linked to it.
	for _, reel := range []string{id, "6000009999", "no-such-reel"} {
		_, err := call[*socialv1.SuccessResponse](t, b, procLikeReel, user(reader), &socialv1.LikeReelRequest{ReelId: reel})
		plugintest.WantRefusal(t, err, 404, 100, 33)
		_, err = call[*socialv1.CreateThreadResponse](t, b, procReplyToReel, user(reader), &socialv1.CreateReelReplyRequest{ReelId: reel, Text: "hi"})
		plugintest.WantRefusal(t, err, 404, 100, 33)
		_, err = call[*socialv1.ListReelRepliesResponse](t, b, procReelReplies, user(reader), &socialv1.ListReelRepliesRequest{ReelId: reel})
		plugintest.WantRefusal(t, err, 404, 100, 33)
	}
	_, err := call[*socialv1.CreateThreadResponse](t, b, procReplyToReel, user(author), &socialv1.CreateReelReplyRequest{ReelId: id, Text: "a\x00b"})
	if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "text" {
		t.Fatalf("refusal %+v", e)
	}
	if n := plugintest.Count(t, b.pool, `SELECT (SELECT count(*) FROM social.reel_likes) + (SELECT count(*) FROM social.reel_replies)`); n != 0 {
		t.Fatalf("%d rows stored by refused calls", n)
	}
}

// CONTRACT §15 and issue 26: the media check has the webhooks' guard
// (internal/netguard), so it refuses, before connecting, every address a
// webhook callback may not reach: shared CGNAT space, benchmarking
// networks, Azure's wire server and IPv4 hidden in NAT64, besides
// private and metadata addresses.
func TestTheMediaCheckRefusesEveryAddressTheWebhookGuardRefuses(t *testing.T) {
	t.Parallel()
	client := newMediaClient(true)
	for _, host := range []string{"100.64.0.1", "198.18.0.1", "168.63.129.16", "[64:ff9b::a00:1]", "169.254.169.254", "10.0.0.1"} {
		trigger, reason := checkMedia(ctxFor(t), client, "https://"+host+"/clip.mp4")
		if trigger != Rejected || !strings.Contains(reason, "not a public address") {
			t.Errorf("%s: got %s %q, want rejected before connecting", host, trigger, reason)
		}
	}
}
