package server_test

import (
	"bufio"
	"context"
	"errors"
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
	"github.com/svcplatform/svc/gateway/internal/serving"
)

// limitServer answers POST /read with the body's length, or 413 when
// reading it crossed the limit.
func limitServer(t *testing.T) *httptest.Server {
	t.Helper()
	s := server.New(server.Options{Metrics: observe.NewMetrics(), Ready: func(context.Context) error { return nil },
		BodyReadTimeout: 10 * time.Second})
	s.Handle("POST /read", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		case err != nil:
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, strconv.Itoa(len(b)))
	}))
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// TestTheBodyLimitTakesTheLimitAndRefusesOneByteMore: a body of exactly
// MaxBodyBytes is read whole, one a byte longer is refused with 413,
// whether its length is declared or it comes chunked.
func TestTheBodyLimitTakesTheLimitAndRefusesOneByteMore(t *testing.T) {
	t.Parallel()
	ts := limitServer(t)
	for _, c := range []struct {
		size    int
		chunked bool
		want    int
	}{
		{serving.MaxBodyBytes, false, http.StatusOK},
		{serving.MaxBodyBytes + 1, false, http.StatusRequestEntityTooLarge},
		{serving.MaxBodyBytes, true, http.StatusOK},
		{serving.MaxBodyBytes + 1, true, http.StatusRequestEntityTooLarge},
		{0, true, http.StatusOK},
	} {
		var body io.Reader = strings.NewReader(strings.Repeat("x", c.size))
		if c.chunked {
			body = io.MultiReader(body) // no length known: sent chunked
		}
		req, err := http.NewRequest(http.MethodPost, ts.URL+"/read", body)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.want || c.want == http.StatusOK && string(got) != strconv.Itoa(c.size) {
			t.Errorf("%d bytes (chunked %v): %d %q, want %d", c.size, c.chunked, res.StatusCode, got, c.want)
		}
	}
}

// TestAContentLengthThatUnderstatesTheBodyCannotPassTheLimit: the limit
// holds whatever Content-Length claims. A body declared at the limit but
// longer is read to its declared length only; the rest is the next request,
// not part of this body.
func TestAContentLengthThatUnderstatesTheBodyCannotPassTheLimit(t *testing.T) {
	t.Parallel()
	ts := limitServer(t)
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	go func() {
		_, _ = io.WriteString(conn, "POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: "+strconv.Itoa(serving.MaxBodyBytes)+"\r\n\r\n"+
			strings.Repeat("x", serving.MaxBodyBytes+100))
	}()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || string(got) != strconv.Itoa(serving.MaxBodyBytes) {
		t.Fatalf("%d %q, want 200 and the declared length", res.StatusCode, got)
	}
}
