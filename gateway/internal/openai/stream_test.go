package openai

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
)

// streamingDispatcher binds one streaming path whose method answers parts.
type streamingDispatcher struct{ parts []*pluginv1.HttpStreamPart }

func (d streamingDispatcher) HTTPPath(verb, path string) (*manifestcheck.Method, bool) {
	return &manifestcheck.Method{Procedure: "/p.S/Unary", Edge: &manifestcheck.Edge{
		ErrorStyle: pluginv1.ErrorStyle_ERROR_STYLE_OPENAI, StreamProcedure: "/p.S/Stream", StreamField: "stream"}}, true
}

func (d streamingDispatcher) Call(context.Context, string, proto.Message) ([]byte, error) {
	return proto.Marshal(&pluginv1.HttpResponse{Status: 200, Body: d.parts[0].Events, UpstreamNanos: 1000})
}

func (d streamingDispatcher) Stream(_ context.Context, _ string, _ proto.Message, send func([]byte) error) error {
	for _, p := range d.parts {
		b, _ := proto.Marshal(p)
		if err := send(b); err != nil {
			return err
		}
	}
	return nil
}

// flushLog records what had been written at each flush.
type flushLog struct {
	*httptest.ResponseRecorder
	flushed []string
}

func (f *flushLog) Flush() {
	f.flushed = append(f.flushed, f.Body.String())
	f.ResponseRecorder.Flush()
}

func TestEachEventIsFlushedAsItComesButDONEGoesOutWithTheStreamsEnd(t *testing.T) {
	t.Parallel()
	d := streamingDispatcher{parts: []*pluginv1.HttpStreamPart{
		{Status: 200, Events: []byte("data: {\"a\":1}\n\n")},
		{Data: []byte(`{"b":2}`)},
		{Events: []byte("data: {\"c\":3}\n\ndata: [DONE]\n\n")},
	}}
	w := &flushLog{ResponseRecorder: httptest.NewRecorder()}
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(`{"stream":true}`))
	if !New(d, "http://gw").ServePath(w, r) {
		t.Fatal("path not served")
	}
	want := []string{"data: {\"a\":1}\n\n", "data: {\"a\":1}\n\ndata: {\"b\":2}\n\n"}
	if strings.Join(w.flushed, "|") != strings.Join(want, "|") {
		t.Fatalf("flushed %q, want %q (the last part not flushed by the edge)", w.flushed, want)
	}
	if got := w.Body.String(); !strings.HasSuffix(got, "data: {\"c\":3}\n\ndata: [DONE]\n\n") || w.Code != 200 {
		t.Fatalf("answer %d %q", w.Code, got)
	}
}

// BenchmarkEdge is the edge's own cost of a completion, streamed and not,
// around a dispatcher answering at once (no plugin, no sockets).
func BenchmarkEdge(b *testing.B) {
	chunk := []byte("data: " + strings.Repeat("x", 200) + "\n\n")
	d := streamingDispatcher{parts: []*pluginv1.HttpStreamPart{
		{Status: 200, Events: chunk}, {Events: chunk}, {Events: append(chunk, "data: [DONE]\n\n"...)},
	}}
	e := New(d, "http://gw")
	for _, bc := range []struct{ name, body string }{{"unary", `{"model":"m"}`}, {"stream", `{"model":"m","stream":true}`}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				e.ServePath(w, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(bc.body)))
			}
		})
	}
}
