package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/graph"
	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// answerSizes are the sizes of the fake answers' posts put together, by
// size class: small, the answer buffer's first size, just under the pooled
// buffers' cap (64 KiB, a document rendered from it crosses it) and over it.
var answerSizes = [...]int{200, 4 << 10, 60 << 10, 96 << 10}

// sizeClass spreads reads over the size classes, the large ones less
// often, since each costs its size many times over under the race
// detector: of 16, 11 small, 3 of 4 KiB, one of each large class.
func sizeClass(n int) int {
	return [16]int{0, 1, 0, 0, 2, 0, 1, 0, 0, 3, 0, 0, 1, 0, 0, 0}[n%16]
}

// echoedRead is one Graph read whose whole answer follows from its own
// parameters: the fake book service writes the read's token into every
// post's id and content and into the paging cursors, and sizes the posts
// by the token's size class.
type echoedRead struct {
	token  string
	limit  int
	class  int
	cursor string // "", "after" or "before": the query parameter carrying the token
	fields bool   // fields=content,id: the decoding path instead of the wire renderer
}

// echoedReadAt is the i-th read of the test: every size class, with and
// without fields, with and without cursors, and limits from 1 to 40.
func echoedReadAt(i int) echoedRead {
	r := echoedRead{limit: 1 + i*7%40, fields: i/2%2 == 1}
	switch i % 3 {
	case 0: // a first page: the token is the limit, which sets the size class
		r.token, r.class = "L"+strconv.Itoa(r.limit), sizeClass(r.limit)
	case 1:
		r.cursor = "after"
	case 2:
		r.cursor = "before"
	}
	if r.cursor != "" {
		r.class = sizeClass(i / 3)
		r.token = fmt.Sprintf("r%dc%d", i, r.class)
	}
	return r
}

// query is the read's query string.
func (r echoedRead) query(pageID string) url.Values {
	q := url.Values{"node": {"page/" + pageID + "/posts"}, "limit": {strconv.Itoa(r.limit)}}
	if r.cursor != "" {
		q.Set(r.cursor, r.token)
	}
	if r.fields {
		q.Set("fields", "content,id")
	}
	return q
}

// echoPosts is the fake book service: it reads the token and its size
// class from the request alone.
func echoPosts(pageID string) listPosts {
	return func(req *bookv1.ListPostsRequest) *bookv1.ListPostsResponse {
		r := echoedRead{token: req.GetAfter(), limit: int(req.GetLimit())}
		if r.token == "" {
			r.token = req.GetBefore()
		}
		if r.token == "" {
			r.token, r.class = "L"+strconv.Itoa(r.limit), sizeClass(r.limit)
		} else {
			_, class, _ := strings.Cut(r.token, "c")
			r.class, _ = strconv.Atoi(class)
		}
		out := &bookv1.ListPostsResponse{Paging: &pluginv1.Paging{Before: r.token + ".b", After: r.token + ".a",
			HasNext: true, HasPrevious: req.GetAfter() != "" || req.GetBefore() != ""}}
		for j := range r.limit {
			out.Data = append(out.Data, &bookv1.Post{Id: r.postID(j), PageId: pageID, Content: r.content(j),
				Audience: "everyone", CreatedTime: "2026-11-24T04:05:39Z"})
		}
		return out
	}
}

func (r echoedRead) postID(j int) string { return r.token + "-" + strconv.Itoa(j) }

// content is post j's text: its id, then the token repeated to the post's
// share of the answer's size, so that bytes of another read's answer
// anywhere in it show.
func (r echoedRead) content(j int) string {
	head := r.postID(j) + " ☕ "
	size := max(answerSizes[r.class]/r.limit, len(head))
	return head + strings.Repeat(r.token+" ", size/(len(r.token)+1))
}

// document is the Graph document the read must get, as decoded JSON.
func (r echoedRead) document(pageID string) any {
	data := make([]any, r.limit)
	for j := range data {
		post := map[string]any{"id": r.postID(j), "content": r.content(j)}
		if !r.fields {
			post["page_id"], post["audience"], post["created_time"] = pageID, "everyone", "2026-11-24T04:05:39Z"
		}
		data[j] = post
	}
	link := func(set, drop, cursor string) string {
		q := r.query(pageID)
		q.Del(drop)
		q.Set(set, cursor)
		return graphPublicURL + graph.Path + "?" + q.Encode()
	}
	paging := map[string]any{"cursors": map[string]any{"after": r.token + ".a", "before": r.token + ".b"},
		"next": link("after", "before", r.token+".a")}
	if r.cursor != "" {
		paging["previous"] = link("before", "after", r.token+".b")
	}
	return map[string]any{"data": data, "paging": paging}
}

// TestConcurrentGraphReadsEachGetTheirOwnAnswer: Graph reads served at once
// through the gateway's handler, with their answers over a fast lane, each
// get the document of their own answer, whole, although the gateway renders
// into pooled buffers, reads the plugin's answer into a pooled buffer, and
// recycles request messages, and the plugin's lane reuses a request
// message per connection. The answers' sizes cross the pooled buffers' cap,
// and the reads go through both the wire renderer and the decoding path
// (fields=). (The fixture's lane has no Release, so the SDK's free list of
// answer buffers is left to TestAnswersOnTheFastLaneStayIntactWhileTheirBuffersAreReused.)
func TestConcurrentGraphReadsEachGetTheirOwnAnswer(t *testing.T) {
	const readers, reads = 16, 2400
	w, book, authn := graphReadWorld(t, echoPosts)
	g := fastLaneGateway(t, book, authn)
	token := serveGraph(t, w, g)
	srv := g.srv

	read := func(r echoedRead) error {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, graph.Path+"?"+r.query(w.Page.ID).Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := slowClient{httptest.NewRecorder()}
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return fmt.Errorf("%+v: status %d: %s", r, rec.Code, rec.Body)
		}
		var got any
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			return fmt.Errorf("%+v: %v: %.300s", r, err, rec.Body)
		}
		if want := r.document(w.Page.ID); !reflect.DeepEqual(got, want) {
			return fmt.Errorf("%+v: got another document than its own:\n%.600s", r, rec.Body)
		}
		return nil
	}
	// The first reads, every kind and size class among them, one at a
	// time first, so that a mismatch in the fixture shows as such rather
	// than as a race.
	for i := range 48 {
		if err := read(echoedReadAt(i)); err != nil {
			t.Fatal(err)
		}
	}

	if failed := inParallel(readers, reads, func(i int) error { return read(echoedReadAt(i)) }); len(failed) > 0 {
		for _, err := range failed[:min(len(failed), 3)] {
			t.Error(err)
		}
		t.Fatalf("%d of %d reads did not get their own document", len(failed), reads)
	}
}

// inParallel runs one(0) … one(n-1) on g goroutines at once and returns
// the errors.
func inParallel(g, n int, one func(i int) error) []error {
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed []error
	)
	for start := range g {
		wg.Go(func() {
			for i := start; i < n; i += g {
				if err := one(i); err != nil {
					mu.Lock()
					failed = append(failed, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return failed
}

// slowClient is a ResponseRecorder whose Write waits a little before it
// takes the bytes, as net/http's Write of a large body does when the
// client reads slowly (the bytes go to the socket as it drains): a buffer
// released before its document is written is another read's by then.
type slowClient struct{ *httptest.ResponseRecorder }

func (c slowClient) Write(b []byte) (int, error) {
	time.Sleep(100 * time.Microsecond)
	return c.ResponseRecorder.Write(b)
}
