package main

import (
	"encoding/json"
	"strings"
	"testing"

	socialv1 "github.com/svcplatform/svc/gen/svc/social/v1"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func (b *bundle) thread(t *testing.T, text string) string {
	t.Helper()
	res, err := call[*socialv1.CreateThreadResponse](t, b, procCreateThread, user(author), &socialv1.CreateThreadRequest{Text: text})
	if err != nil || res.GetId() == "" {
		t.Fatalf("create thread: %v %v", res, err)
	}
	return res.GetId()
}

func (b *bundle) insights(t *testing.T, id, metric string) map[string]float64 {
	t.Helper()
	res, err := call[*socialv1.InsightsResponse](t, b, procThreadInsights, user(author), &socialv1.GetThreadInsightsRequest{ThreadId: id, Metric: metric})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, d := range res.GetData() {
		if d.GetPeriod() != "lifetime" || len(d.GetValues()) != 1 {
			t.Fatalf("insight %v", d)
		}
		out[d.GetName()] = d.GetValues()[0].GetValue()
	}
	return out
}

func TestAThreadIsStoredAndEmitsThreadCreatedInTheSameTransaction(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	id := b.thread(t, "Hello, threads 👋")
	got, err := call[*socialv1.Thread](t, b, procGetThread, user(reader), &socialv1.GetThreadRequest{ThreadId: id})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetId() != id || got.GetText() != "Hello, threads 👋" || got.GetAuthorId() != author || got.GetReplyTo() != "" || got.GetCreatedTime() == "" {
		t.Fatalf("thread %v", got)
	}
	var data []byte
	var app string
	if err := b.pool.QueryRow(ctxFor(t), `SELECT data, app_id FROM core.outbox WHERE type = $1`, EventThreadCreated).Scan(&data, &app); err != nil {
		t.Fatal(err)
	}
	var ev map[string]string
	_ = json.Unmarshal(data, &ev)
	if app != appID || ev["id"] != id || ev["author_id"] != author || ev["reply_to"] != "" {
		t.Fatalf("event app %s data %s", app, data)
	}
}

func TestRepliesAreThreadsListedOldestFirstWithCursors(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	root := b.thread(t, "root")
	var want []string
	for i := range 5 {
		res, err := call[*socialv1.CreateThreadResponse](t, b, procCreateReply, user(reader),
			&socialv1.CreateReplyRequest{ThreadId: root, Text: strings.Repeat("r", i+1)})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, res.GetId())
	}
	reply, err := call[*socialv1.Thread](t, b, procGetThread, user(author), &socialv1.GetThreadRequest{ThreadId: want[0]})
	if err != nil || reply.GetReplyTo() != root || reply.GetAuthorId() != reader {
		t.Fatalf("reply %v %v", reply, err)
	}
	var got []string
	after, lastBefore := "", ""
	for range 3 {
		page, err := call[*socialv1.ListRepliesResponse](t, b, procListReplies, user(author),
			&socialv1.ListRepliesRequest{ThreadId: root, Limit: 2, After: after})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.GetData() {
			got = append(got, r.GetId())
		}
		lastBefore = page.GetPaging().GetBefore()
		if !page.GetPaging().GetHasNext() {
			break
		}
		after = page.GetPaging().GetAfter()
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("pages %v, want %v", got, want)
	}
	// Paging back from the last page (the fifth reply) gives the two
	// before it, in list order.
	back, err := call[*socialv1.ListRepliesResponse](t, b, procListReplies, user(author),
		&socialv1.ListRepliesRequest{ThreadId: root, Limit: 2, Before: lastBefore})
	if err != nil || len(back.GetData()) != 2 || back.GetData()[0].GetId() != want[2] || back.GetData()[1].GetId() != want[3] {
		t.Fatalf("before page %v %v", back, err)
	}
	if n := plugintest.Count(t, b.pool, `SELECT count(*) FROM core.outbox WHERE type = $1 AND data->>'reply_to' = $2`, EventThreadCreated, root); n != 5 {
		t.Fatalf("%d reply events, want 5", n)
	}
}

func TestInsightsCountReadsByOthersLikesOnceEachAndReplies(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	id := b.thread(t, "count me")
	for range 3 {
		if _, err := call[*socialv1.Thread](t, b, procGetThread, user(reader), &socialv1.GetThreadRequest{ThreadId: id}); err != nil {
			t.Fatal(err)
		}
	}
	// The author's own read is not a view.
	if _, err := call[*socialv1.Thread](t, b, procGetThread, user(author), &socialv1.GetThreadRequest{ThreadId: id}); err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{reader, reader, author} {
		if _, err := call[*socialv1.SuccessResponse](t, b, procLikeThread, user(who), &socialv1.LikeThreadRequest{ThreadId: id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := call[*socialv1.CreateThreadResponse](t, b, procCreateReply, user(reader), &socialv1.CreateReplyRequest{ThreadId: id, Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	got := b.insights(t, id, "")
	if got["views"] != 3 || got["likes"] != 2 || got["replies"] != 1 || len(got) != 3 {
		t.Fatalf("insights %v, want views 3, likes 2, replies 1", got)
	}
	// Asked metrics come in the order asked, repeats once.
	res, err := call[*socialv1.InsightsResponse](t, b, procThreadInsights, user(author), &socialv1.GetThreadInsightsRequest{ThreadId: id, Metric: "replies, views,replies"})
	if err != nil || len(res.GetData()) != 2 || res.GetData()[0].GetName() != "replies" || res.GetData()[1].GetName() != "views" {
		t.Fatalf("ordered insights %v %v", res, err)
	}
}

func TestThreadRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	id := b.thread(t, "mine")
	before := plugintest.Count(t, b.pool, `SELECT count(*) FROM social.threads`)

	t.Run("an unknown metric is refused naming metric", func(t *testing.T) {
		_, err := call[*socialv1.InsightsResponse](t, b, procThreadInsights, user(author), &socialv1.GetThreadInsightsRequest{ThreadId: id, Metric: "views,reach"})
		if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "metric" || !strings.Contains(e.Message, "reach") {
			t.Fatalf("refusal %+v", e)
		}
	})
	t.Run("insights of another user's thread are refused with code 10", func(t *testing.T) {
		_, err := call[*socialv1.InsightsResponse](t, b, procThreadInsights, user(reader), &socialv1.GetThreadInsightsRequest{ThreadId: id})
		plugintest.WantRefusal(t, err, 403, 10, 0)
	})
	t.Run("text with NUL is refused naming text", func(t *testing.T) {
		_, err := call[*socialv1.CreateThreadResponse](t, b, procCreateThread, user(author), &socialv1.CreateThreadRequest{Text: "a\x00b"})
		if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "text" {
			t.Fatalf("refusal %+v", e)
		}
	})
	for _, unknown := range []string{"9999999999", "abc", "-1", "0", "5000000001x"} {
		t.Run("unknown thread "+unknown+" answers 404/100/33 everywhere", func(t *testing.T) {
			_, err := call[*socialv1.Thread](t, b, procGetThread, user(author), &socialv1.GetThreadRequest{ThreadId: unknown})
			plugintest.WantRefusal(t, err, 404, 100, 33)
			_, err = call[*socialv1.CreateThreadResponse](t, b, procCreateReply, user(author), &socialv1.CreateReplyRequest{ThreadId: unknown, Text: "x"})
			plugintest.WantRefusal(t, err, 404, 100, 33)
			_, err = call[*socialv1.ListRepliesResponse](t, b, procListReplies, user(author), &socialv1.ListRepliesRequest{ThreadId: unknown})
			plugintest.WantRefusal(t, err, 404, 100, 33)
			_, err = call[*socialv1.SuccessResponse](t, b, procLikeThread, user(author), &socialv1.LikeThreadRequest{ThreadId: unknown})
			plugintest.WantRefusal(t, err, 404, 100, 33)
			_, err = call[*socialv1.InsightsResponse](t, b, procThreadInsights, user(author), &socialv1.GetThreadInsightsRequest{ThreadId: unknown})
			plugintest.WantRefusal(t, err, 404, 100, 33)
		})
	}
	t.Run("a cursor this list did not hand out is refused naming after", func(t *testing.T) {
		_, err := call[*socialv1.ListRepliesResponse](t, b, procListReplies, user(author), &socialv1.ListRepliesRequest{ThreadId: id, After: "nope"})
		if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "after" {
			t.Fatalf("refusal %+v", e)
		}
	})
	if after := plugintest.Count(t, b.pool, `SELECT count(*) FROM social.threads`); after != before {
		t.Fatalf("refusals changed the threads: %d → %d", before, after)
	}
	if n := plugintest.Count(t, b.pool, `SELECT count(*) FROM social.thread_likes`); n != 0 {
		t.Fatalf("refusals stored %d likes", n)
	}
}

func TestParseMetrics(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		bad  bool
	}{
		{"", "views,likes,replies", false},
		{"  ", "views,likes,replies", false},
		{"likes", "likes", false},
		{"replies,views", "replies,views", false},
		{" views , views ", "views", false},
		{"views,", "", true},
		{"Views", "", true},
		{"reach", "", true},
	} {
		got, err := parseMetrics(c.in)
		if c.bad != (err != nil) || (!c.bad && strings.Join(got, ",") != c.want) {
			t.Errorf("parseMetrics(%q) = %v, %v; want %q (bad %v)", c.in, got, err, c.want, c.bad)
		}
	}
}

func FuzzParseMetrics(f *testing.F) {
	for _, s := range []string{"", "views", "likes,replies", "views,,likes", "\x00", "views, likes ,replies,views"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseMetrics(s)
		if err != nil {
			plugintest.WantRefusal(t, err, 400, 100, 0)
			return
		}
		seen := map[string]bool{}
		for _, m := range got {
			if seen[m] || (m != "views" && m != "likes" && m != "replies") {
				t.Fatalf("parseMetrics(%q) = %v", s, got)
			}
			seen[m] = true
		}
		if len(got) == 0 {
			t.Fatalf("parseMetrics(%q) accepted no metric", s)
		}
	})
}
