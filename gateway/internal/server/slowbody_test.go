package server_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/server"
)

// slowServer answers POST /echo with the body's length, then (for
// ?stream=1) keeps writing for longer than the body read timeout.
func slowServer(t *testing.T) *httptest.Server {
	t.Helper()
	s := server.New(server.Options{Metrics: observe.NewMetrics(), Ready: func(context.Context) error { return nil },
		BodyReadTimeout: 300 * time.Millisecond})
	s.Handle("POST /echo", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestTimeout)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, strconv.Itoa(len(b))+"\n")
		if r.URL.Query().Get("stream") == "1" {
			for range 3 {
				w.(http.Flusher).Flush()
				time.Sleep(250 * time.Millisecond)
				_, _ = io.WriteString(w, "tick\n")
			}
		}
	}))
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

func TestASlowRequestBodyIsCutOffAtTheReadTimeout(t *testing.T) {
	t.Parallel()
	ts := slowServer(t)
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Promise 100 bytes, send 10, then nothing: a slowloris body.
	if _, err := io.WriteString(conn, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789"); err != nil {
		t.Fatal(err)
	}
	// Far beyond the 300 ms limit: without it the server would wait forever.
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the server still holds the connection of a body that stopped arriving")
	}
	if err == nil && res.StatusCode < 400 {
		t.Fatalf("an incomplete body was accepted: %d", res.StatusCode)
	}
}

func TestAStreamedAnswerOutlivesTheBodyReadTimeout(t *testing.T) {
	t.Parallel()
	ts := slowServer(t)
	res, err := http.Post(ts.URL+"/echo?stream=1", "text/plain", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("stream cut after %q: %v", b, err)
	}
	if want := "5\ntick\ntick\ntick\n"; string(b) != want {
		t.Fatalf("body %q, want %q", b, want)
	}
}

func TestHealthzIsLivenessAndReadyzFollowsTheDependencies(t *testing.T) {
	t.Parallel()
	var down error
	s := server.New(server.Options{Metrics: observe.NewMetrics(), Ready: func(context.Context) error { return down }})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	status := func(path string) int {
		res, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if status("/healthz") != 200 || status("/readyz") != 200 {
		t.Fatal("a serving gateway with its dependencies up is live and ready")
	}
	down = io.ErrUnexpectedEOF // PostgreSQL briefly away, or a plugin restarting
	if got := status("/healthz"); got != 200 {
		t.Fatalf("/healthz = %d while a dependency is away; liveness must not fail", got)
	}
	if got := status("/readyz"); got != 503 {
		t.Fatalf("/readyz = %d while a dependency is away, want 503", got)
	}
}
