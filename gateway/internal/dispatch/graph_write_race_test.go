package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/graph"
	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
)

// echoPostID is the fake book service's CreatePost: the new post's id
// repeats the whole request, so an answer shows which request it got.
func echoPostID(req *bookv1.CreatePostRequest) *bookv1.CreatePostResponse {
	return &bookv1.CreatePostResponse{Id: req.GetPageId() + "|" + req.GetAudience() + "|" + req.GetContent()}
}

// echoedWrite is one Graph write of the test; its answer follows from it.
type echoedWrite struct {
	content, audience string
	nodeInBody        bool
}

// writeSizes are the sizes of the writes' contents: small, the answer
// buffer's first size, just under the pooled buffers' cap (64 KiB) and,
// in two-byte characters, a body and an answer over it.
var writeSizes = [...]int{40, 4 << 10, 60 << 10, 40000}

// echoedWriteAt is the i-th write of the test: every size, plain, escaped
// and general-path strings, the node in the query or the body.
func echoedWriteAt(i int) echoedWrite {
	token := "w" + strconv.Itoa(i) + " "
	w := echoedWrite{audience: []string{"everyone", "followers", "only_me"}[i%3], nodeInBody: i%4 == 1}
	size := writeSizes[sizeClass(i)]
	repeat := token
	if sizeClass(i) == 3 {
		repeat = token + "é"
	}
	w.content = strings.Repeat(repeat, max(1, size/len(repeat)))
	switch i % 5 {
	case 1: // escapes the flat reader decodes
		w.content += " \"quoted\"\n\ttabbed ☕"
	case 2: // an escape it leaves to the general path
		w.content += " 🚀"
	}
	return w
}

// body is the write's JSON body for the Page pageID. A rocket in the
// content is sent as an escaped surrogate pair, which the flat reader
// leaves to the general path.
func (w echoedWrite) body(pageID string) string {
	fields := map[string]string{"content": w.content, "audience": w.audience}
	if w.nodeInBody {
		fields["node"] = "page/" + pageID + "/posts"
	}
	b, _ := json.Marshal(fields)
	return strings.ReplaceAll(string(b), "🚀", `\ud83d\ude80`)
}

// TestConcurrentGraphWritesEachGetTheirOwnAnswer: Graph writes served at
// once through the gateway's handler, with their answers over a fast lane,
// each get the answer to their own request, whole, although the gateway
// reads each body into a pooled buffer and binds its strings from it,
// renders into pooled buffers, reads the plugin's answer into a pooled
// buffer and recycles request messages. The bodies and answers cross the
// pooled buffers' cap, and the writes go through the flat and the general
// binding.
func TestConcurrentGraphWritesEachGetTheirOwnAnswer(t *testing.T) {
	const writers, writes = 16, 1200
	w, book, authn := graphWorld(t, tenPosts, echoPostID)
	g := fastLaneGateway(t, book, authn)
	token := serveGraph(t, w, g, "pages:manage")
	srv := g.srv

	write := func(i int) error {
		ew := echoedWriteAt(i)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		target := graph.Path
		if !ew.nodeInBody {
			target += "?" + url.Values{"node": {"page/" + w.Page.ID + "/posts"}}.Encode()
		}
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(ew.body(w.Page.ID)))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		rec := slowClient{httptest.NewRecorder()}
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return fmt.Errorf("write %d: status %d: %.300s", i, rec.Code, rec.Body)
		}
		var got struct{ ID string }
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			return fmt.Errorf("write %d: %v: %.300s", i, err, rec.Body)
		}
		if want := w.Page.ID + "|" + ew.audience + "|" + ew.content; got.ID != want {
			return fmt.Errorf("write %d: got another answer than its own: %.200s", i, rec.Body)
		}
		return nil
	}
	// The first writes, every kind and size among them, one at a time, so
	// that a mismatch in the fixture shows as such rather than as a race.
	for i := range 40 {
		if err := write(i); err != nil {
			t.Fatal(err)
		}
	}

	if failed := inParallel(writers, writes, write); len(failed) > 0 {
		for _, err := range failed[:min(len(failed), 3)] {
			t.Error(err)
		}
		t.Fatalf("%d of %d writes did not get their own answer", len(failed), writes)
	}
}
