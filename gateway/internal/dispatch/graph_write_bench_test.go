package dispatch

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/graph"
	"github.com/svcplatform/svc/gateway/internal/server"
)

// BenchmarkGraphWrite measures the gateway's own work on the Graph write
// that make bench loads, POST page/<id>/posts with the JSON body
// {"content":"Benchmark post N: ☕ 咖啡 🚀","audience":"everyone"} and a
// user token, through the whole HTTP handler as BenchmarkGraphRead does
// the read: trace id, version, body limit, authentication (cached),
// reading and binding the body, the Graph layer, validation,
// authorization (cached Page facts), the call and the answer's document.
// The book service answers CreatePost with a fixed id. net/http's own
// parsing and response buffering are not in it.
//
// "in-process" and "fast-lane" are BenchmarkGraphRead's.
//
//	go test -run '^$' -bench GraphWrite -benchmem ./gateway/internal/dispatch/
func BenchmarkGraphWrite(b *testing.B) {
	b.Run("in-process", func(b *testing.B) {
		w, book, authn := graphReadWorld(b, tenPosts)
		g := inProcessGateway(b, book, authn)
		benchGraphWrites(b, g.srv, serveGraph(b, w, g, "pages:manage"), w.Page.ID, false)
	})
	b.Run("fast-lane", func(b *testing.B) {
		w, book, authn := graphReadWorld(b, tenPosts)
		g := fastLaneGateway(b, book, authn)
		benchGraphWrites(b, g.srv, serveGraph(b, w, g, "pages:manage"), w.Page.ID, true)
	})
}

// benchGraphWrites posts make bench's body, numbered, with token on srv;
// cancellable gives each request a context of its own, as net/http does.
func benchGraphWrites(b *testing.B, srv *server.Server, token, pageID string, cancellable bool) {
	body := &rewindBody{}
	r := httptest.NewRequest(http.MethodPost, graph.Path+"?node=page/"+pageID+"/posts", body)
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("Content-Type", "application/json")
	rw := &benchWriter{header: http.Header{}}
	n := 0
	write := func() {
		n++
		body.b = append(strconv.AppendInt(append(body.b[:0], `{"content":"Benchmark post `...), int64(n), 10),
			`: ☕ 咖啡 🚀","audience":"everyone"}`...)
		body.off = 0
		r.ContentLength = int64(len(body.b))
		req := r
		if cancellable {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req = r.WithContext(ctx)
		}
		rw.reset()
		srv.ServeHTTP(rw, req)
		if rw.status != http.StatusOK {
			b.Fatalf("status %d: %s", rw.status, rw.body)
		}
	}
	write()
	if want := `{"id":"1000002000"}`; string(rw.body) != want {
		b.Fatalf("answer %s, want %s", rw.body, want)
	}
	b.ReportAllocs()
	for b.Loop() {
		write()
	}
}

// rewindBody is a request body read again from its start for each request,
// as net/http's body reader is reused per connection.
type rewindBody struct {
	b   []byte
	off int
}

func (r *rewindBody) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

func (r *rewindBody) Close() error { return nil }
