package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/observe"
)

// slogAccessLine is the access line as slog wrote it before accessLine
// encoded it itself: the reference the line must still match.
func slogAccessLine(ctx context.Context, log *slog.Logger, r *http.Request, sw *statusWriter, app func(context.Context) string, d time.Duration) {
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path)}
	if sw.access.Node != "" {
		attrs = append(attrs, slog.String("node", sw.access.Node))
	}
	attrs = append(attrs, slog.Int("status", sw.status()))
	if g := sw.Header().Get(http.TrailerPrefix + "Grpc-Status"); g != "" {
		attrs = append(attrs, slog.String("grpc_status", g))
	}
	if sw.access.Code != 0 {
		attrs = append(attrs, slog.Int("code", sw.access.Code))
	}
	attrs = append(attrs, slog.Float64("duration_ms", float64(d.Microseconds())/1000))
	if app != nil {
		if id := app(ctx); id != "" {
			attrs = append(attrs, slog.String("app_id", id))
		}
	}
	log.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
}

// slogJSON is the gateway's logger as it was built for the access log.
func slogJSON(w io.Writer) *slog.Logger {
	return slog.New(observe.LogHandler{Handler: slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo})})
}

// withoutTime drops the line's time after checking it is RFC 3339.
func withoutTime(t *testing.T, line string) string {
	t.Helper()
	const prefix = `{"time":"`
	rest, ok := strings.CutPrefix(line, prefix)
	end := strings.IndexByte(rest, '"')
	if !ok || end < 0 {
		t.Fatalf("line without a time: %q", line)
	}
	if _, err := time.Parse(time.RFC3339Nano, rest[:end]); err != nil {
		t.Fatalf("time %q: %v", rest[:end], err)
	}
	return rest[end:]
}

func TestTheAccessLineIsTheLineSlogWrites(t *testing.T) {
	cases := []struct {
		name     string
		method   string
		path     string
		node     string
		status   int
		grpc     string
		code     int
		d        time.Duration
		app      string
		traceID  string
		withApp  bool
		noStatus bool
	}{
		{name: "graph read", method: "GET", path: "/api/v1/graph", node: "page/{id}/posts", status: 200, d: 1234567 * time.Nanosecond, app: "1234", traceID: "abc_-DEF", withApp: true},
		{name: "no status written", method: "GET", path: "/healthz", d: 0, noStatus: true},
		{name: "graph error", method: "POST", path: "/api/v1/graph", node: "page/{id}/feed", status: 403, code: 10, d: 2 * time.Second, traceID: "t"},
		{name: "grpc", method: "POST", path: "/svc.book.v1.BookService/ListPosts", status: 200, grpc: "7", d: 1500 * time.Microsecond, withApp: true},
		{name: "whole and tenth milliseconds", method: "GET", path: "/", status: 200, d: 3*time.Millisecond + 100*time.Microsecond},
		{name: "long duration", method: "GET", path: "/", status: 200, d: 90*time.Minute + 7*time.Microsecond},
		{name: "under a microsecond", method: "GET", path: "/", status: 200, d: 999 * time.Nanosecond},
		{name: "odd path", method: "GET", path: "/a\"b\\c\n\r\t\x01\x1f\x7f<>&é\xff\xfe\u2028\u2029😀/x", status: 404, traceID: "id\x00"},
		{name: "odd method", method: "G\tET", path: "/", status: 405},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.Method, r.URL.Path = c.method, c.path
			ctx := context.Background()
			if c.traceID != "" {
				ctx = observe.WithTraceID(ctx, c.traceID)
			}
			sw := &statusWriter{ResponseWriter: httptest.NewRecorder()}
			if !c.noStatus {
				sw.WriteHeader(c.status)
			}
			if c.grpc != "" {
				sw.Header().Set(http.TrailerPrefix+"Grpc-Status", c.grpc)
			}
			sw.access.Node, sw.access.Code = c.node, c.code
			var app func(context.Context) string
			if c.withApp {
				app = func(context.Context) string { return c.app }
			}
			var got, want bytes.Buffer
			accessLine(ctx, &got, r, sw, app, c.d)
			slogAccessLine(ctx, slogJSON(&want), r, sw, app, c.d)
			if g, w := withoutTime(t, got.String()), withoutTime(t, want.String()); g != w {
				t.Errorf("access line\n got %s\nwant %s", g, w)
			}
		})
	}
}

func TestAnAccessLineIsOneWrite(t *testing.T) {
	var w countingWriter
	r := httptest.NewRequest("GET", "/api/v1/graph", nil)
	sw := &statusWriter{ResponseWriter: httptest.NewRecorder()}
	accessLine(context.Background(), &w, r, sw, nil, time.Millisecond)
	if w.writes != 1 || !bytes.HasSuffix(w.last, []byte("}\n")) {
		t.Fatalf("%d writes, last %q; want one line in one write", w.writes, w.last)
	}
}

type countingWriter struct {
	writes int
	last   []byte
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	w.last = append(w.last[:0], p...)
	return len(p), nil
}

func BenchmarkAccessLine(b *testing.B) {
	r := httptest.NewRequest("GET", "/api/v1/graph?node=page/100000000000003/posts&limit=10", nil)
	ctx := observe.WithTraceID(context.Background(), observe.NewTraceID())
	sw := &statusWriter{ResponseWriter: httptest.NewRecorder()}
	sw.access.Node = "page/{id}/posts"
	app := func(context.Context) string { return "1234567890" }
	b.Run("encoded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			accessLine(ctx, io.Discard, r, sw, app, 1234567*time.Nanosecond)
		}
	})
	b.Run("slog", func(b *testing.B) {
		log := slogJSON(io.Discard)
		b.ReportAllocs()
		for b.Loop() {
			slogAccessLine(ctx, log, r, sw, app, 1234567*time.Nanosecond)
		}
	})
}
