package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// countingServer is an upstream on loopback that counts the connections
// opened to it.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func target(t *testing.T, raw string) directTarget {
	t.Helper()
	tg, ok := directTargetOf(raw)
	if !ok {
		t.Fatalf("%s is not served by the direct client", raw)
	}
	return tg
}

func TestTheDirectClientServesPlainHTTPOnlyAndKeepsTheRestForNetHTTP(t *testing.T) {
	for raw, want := range map[string]bool{
		"http://127.0.0.1:11434/v1/chat/completions":                true,
		"http://gpu-box/v1/chat/completions?api-version=1":          true,
		"https://api.openai.com/v1/chat/completions":                false,
		"http://user:secret@127.0.0.1:8000/v1/chat/completions":     false,
		"ftp://127.0.0.1/v1/chat/completions":                       false,
		"http:///v1/chat/completions":                               false,
		"http://[::1]:8000/v1/chat/completions":                     true,
		"http://127.0.0.1:8000/v1/chat/completions#not-sent-at-all": true,
	} {
		if _, got := directTargetOf(raw); got != want {
			t.Errorf("%s: direct %v, want %v", raw, got, want)
		}
	}
	tg := target(t, "http://gpu-box/v1/chat/completions?api-version=1")
	if tg.addr != "gpu-box:80" || tg.host != "gpu-box" || tg.uri != "/v1/chat/completions?api-version=1" {
		t.Errorf("target %+v", tg)
	}
	u := &upstream{url: "http://127.0.0.1:1/v1/chat/completions", key: "sk-a\r\nX-Injected: 1"}
	u.useDirect()
	if u.direct != nil {
		t.Error("a key with a line break would be written as headers; it must go to net/http, which refuses it")
	}
}

func TestTheDirectClientSendsTheRequestAsNetHTTPWould(t *testing.T) {
	var got *http.Request
	var gotBody string
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got, gotBody = r, string(b)
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	u := &upstream{name: "u", url: srv.URL + "/v1/chat/completions?x=1", key: "sk-test"}
	u.useDirect()
	d := newDirectClient()
	defer d.closeIdle()
	res, err := d.do(context.Background(), *u.direct, u.streamHeaders, []byte(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if string(b) != `{"ok":true}` || res.StatusCode != 200 {
		t.Fatalf("answer %d %q", res.StatusCode, b)
	}
	if got.Method != "POST" || got.URL.RequestURI() != "/v1/chat/completions?x=1" || gotBody != `{"model":"m"}` ||
		got.Header.Get("Authorization") != "Bearer sk-test" || got.Header.Get("Accept") != "text/event-stream" ||
		got.Header.Get("Content-Type") != "application/json" || got.ContentLength != int64(len(`{"model":"m"}`)) {
		t.Errorf("request %s %s %v body %q", got.Method, got.URL, got.Header, gotBody)
	}
}

func TestKeptAliveConnectionsCarryTheNextRequestsStreamedOrNot(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") == "text/event-stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: {\"choices\":[]}\n\n")
			w.(http.Flusher).Flush() // chunked, as upstreams stream
			_, _ = io.WriteString(w, "data: [DONE]\n\n")
			return
		}
		_, _ = io.WriteString(w, benchAnswer)
	})
	u := &upstream{name: "u", url: srv.URL + "/v1/chat/completions"}
	u.useDirect()
	d := newDirectClient()
	defer d.closeIdle()
	for i := range 20 {
		stream := i%2 == 1
		h := u.headers
		if stream {
			h = u.streamHeaders
		}
		res, err := d.do(context.Background(), *u.direct, h, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if stream {
			// As the router does: read events up to [DONE], then close
			// without asking for the end of the body.
			sse := newSSEReader(res.Body)
			for {
				ev, err := sse.Next()
				if err != nil {
					t.Fatal(err)
				}
				if string(ev) == "[DONE]" {
					break
				}
			}
		} else if _, err := io.ReadAll(res.Body); err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("20 requests one after another opened %d connections, want 1", n)
	}
}

func TestAKeptAliveConnectionWaitsWithoutAReadBufferAndItsClosedBodyReadsNothing(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, benchAnswer)
	})
	u := &upstream{name: "u", url: srv.URL + "/v1/chat/completions"}
	u.useDirect()
	d := newDirectClient()
	defer d.closeIdle()
	var first io.ReadCloser
	for i := range 3 {
		res, err := d.do(context.Background(), *u.direct, u.headers, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		if err != nil || string(body) != benchAnswer {
			t.Fatalf("answer %d: %q, %v", i, body, err)
		}
		_ = res.Body.Close()
		if i == 0 {
			first = res.Body
		}
		d.mu.Lock()
		for _, dc := range d.idle[u.direct.addr] {
			if dc.br != nil {
				t.Errorf("after answer %d a kept-alive connection holds a %d-byte read buffer", i, dc.br.Size())
			}
		}
		d.mu.Unlock()
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("3 requests one after another opened %d connections, want 1", n)
	}
	// The first answer's connection, and maybe its buffer, carried the
	// others since: its body must not read what they brought.
	if n, err := first.Read(make([]byte, 64)); n != 0 || err == nil {
		t.Errorf("a closed body read %d bytes, %v; want nothing and an error", n, err)
	}
}

// rawUpstream answers the i-th request (from 0) of connection conn with
// answer(conn, i), until answer returns "" (the connection is closed then,
// the request unanswered); an answer ending in closeAfter is written
// without it, and the connection closed after it.
func rawUpstream(t *testing.T, answer func(conn, i int) string) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	var conns atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := int(conns.Add(1)) - 1
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for i := 0; ; i++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					a := answer(n, i)
					if a == "" {
						return
					}
					a, last := strings.CutSuffix(a, closeAfter)
					if _, err := io.WriteString(c, a); err != nil || last {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/v1/chat/completions", &conns
}

// closeAfter ends an answer of rawUpstream's after which it closes.
const closeAfter = "\x00close"

const okAnswer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"

func TestAKeptAliveConnectionThatFailsBeforeAnyAnswerIsReplacedOnce(t *testing.T) {
	url, conns := rawUpstream(t, func(conn, i int) string {
		if conn == 0 && i == 1 {
			return "" // closes on the second request, having read it, answering nothing
		}
		return okAnswer
	})
	d := newDirectClient()
	defer d.closeIdle()
	tg := target(t, url)
	for range 2 {
		res, err := d.do(context.Background(), tg, nil, []byte(`{}`))
		if err != nil {
			t.Fatalf("the request failed instead of going on a new connection: %v", err)
		}
		_, _ = io.ReadAll(res.Body)
		_ = res.Body.Close()
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

func TestInformationalAnswersBeforeTheAnswerAreSkipped(t *testing.T) {
	url, _ := rawUpstream(t, func(_, _ int) string {
		return "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n" + okAnswer
	})
	d := newDirectClient()
	defer d.closeIdle()
	res, err := d.do(context.Background(), target(t, url), nil, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode != 200 || string(b) != "{}" {
		t.Errorf("answer %d %q", res.StatusCode, b)
	}
}

func TestAConnectionWithBytesAfterTheAnswerIsNotKept(t *testing.T) {
	url, conns := rawUpstream(t, func(_, _ int) string { return okAnswer + "HTTP/1.1 200 OK\r\n" })
	d := newDirectClient()
	defer d.closeIdle()
	tg := target(t, url)
	for range 2 {
		res, err := d.do(context.Background(), tg, nil, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := io.ReadAll(res.Body); string(b) != "{}" {
			t.Fatalf("body %q", b)
		}
		_ = res.Body.Close()
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections: one with unasked-for bytes after its answer was used again", n)
	}
}

func TestAnAnswerWithConnectionCloseIsNotKept(t *testing.T) {
	url, conns := rawUpstream(t, func(_, _ int) string {
		return "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"
	})
	d := newDirectClient()
	defer d.closeIdle()
	tg := target(t, url)
	for range 3 {
		res, err := d.do(context.Background(), tg, nil, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.ReadAll(res.Body)
		_ = res.Body.Close()
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections for 3 answers that each said Connection: close", n)
	}
}

func TestABodyClosedBeforeItsEndClosesTheConnection(t *testing.T) {
	release := make(chan struct{})
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "data: {}\n\n")
		w.(http.Flusher).Flush()
		select { // more would come: the client leaves first
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	d := newDirectClient()
	defer d.closeIdle()
	tg := target(t, srv.URL)
	for range 2 {
		res, err := d.do(context.Background(), tg, nil, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = newSSEReader(res.Body).Next()
		_ = res.Body.Close()
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections: an unfinished answer's connection was used again", n)
	}
}

func TestAContextThatEndsCutsTheReadInProgress(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "data: {}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // stalls until the client leaves
	})
	d := newDirectClient()
	defer d.closeIdle()
	ctx, cancel := context.WithCancel(context.Background())
	res, err := d.do(ctx, target(t, srv.URL), nil, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	sse := newSSEReader(res.Body)
	if _, err := sse.Next(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := sse.Next(); done <- err }()
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the read went on after the context ended")
	}
	_ = res.Body.Close()
	d.mu.Lock()
	kept := len(d.idle)
	d.mu.Unlock()
	if kept != 0 {
		t.Error("a connection cut by its context was kept")
	}
}

func TestAnAnswerWithHeadersOverOneMebibyteIsRefused(t *testing.T) {
	url, _ := rawUpstream(t, func(_, _ int) string {
		return "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", directMaxHeaderBytes) + "\r\nContent-Length: 2\r\n\r\n{}"
	})
	d := newDirectClient()
	defer d.closeIdle()
	_, err := d.do(context.Background(), target(t, url), nil, []byte(`{}`))
	if err == nil {
		t.Fatal("headers over 1 MiB were read")
	}
	if errors.Is(err, context.Canceled) {
		t.Fatalf("unexpected error %v", err)
	}
}
