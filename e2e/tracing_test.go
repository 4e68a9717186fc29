package e2e

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/pgtest"
)

// otlpSpan is one span an OTLP/HTTP receiver got, with its service.
type otlpSpan struct {
	service string
	span    *tracepb.Span
}

// otlpReceiver is an OTLP/HTTP trace receiver on loopback, as a collector
// would be: it decodes the exporters' protobuf requests.
type otlpReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	spans []otlpSpan
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want protobuf on /v1/traces", http.StatusUnsupportedMediaType)
			return
		}
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			gz, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = gz
		}
		b, err := io.ReadAll(body)
		var msg coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(b, &msg)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range msg.GetResourceSpans() {
			service := ""
			for _, a := range rs.GetResource().GetAttributes() {
				if a.GetKey() == "service.name" {
					service = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					r.spans = append(r.spans, otlpSpan{service: service, span: s})
				}
			}
		}
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// trace returns the spans of one trace id (hex).
func (r *otlpReceiver) trace(id string) []otlpSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []otlpSpan
	for _, s := range r.spans {
		if hex.EncodeToString(s.span.GetTraceId()) == id {
			out = append(out, s)
		}
	}
	return out
}

// waitTrace waits until the trace has a span matching each of wants
// (service and name prefix) and returns its spans.
func (r *otlpReceiver) waitTrace(t *testing.T, id string, wants ...[2]string) []otlpSpan {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		spans := r.trace(id)
		missing := ""
		for _, w := range wants {
			if findSpan(spans, w[0], w[1]) == nil {
				missing = w[0] + " " + w[1]
				break
			}
		}
		if missing == "" {
			return spans
		}
		if time.Now().After(deadline) {
			var got []string
			for _, s := range spans {
				got = append(got, s.service+": "+s.span.GetName())
			}
			t.Fatalf("trace %s has no span %q after 30 s; it has %q", id, missing, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func findSpan(spans []otlpSpan, service, prefix string) *tracepb.Span {
	for _, s := range spans {
		if s.service == service && strings.HasPrefix(s.span.GetName(), prefix) {
			return s.span
		}
	}
	return nil
}

func TestATraceFollowsAGraphReadFromTheGatewayThroughThePluginToPostgreSQL(t *testing.T) {
	t.Parallel()
	rcv := newOTLPReceiver(t)
	g := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: pgtest.NewDatabase(t), Env: []string{"SVC_TRACING_ENDPOINT=" + rcv.srv.URL}})
	c := g.Credentials(t)
	token := g.UserToken(t, "owner", "pages:read")

	q := url.Values{"node": {"page/" + c.Page.ID + "/posts"}, "limit": {"5"}}
	res, body := do(t, "GET", g.URL+"/api/v1/graph?"+q.Encode(), nil, map[string]string{"Authorization": "Bearer " + token})
	if res.StatusCode != 200 {
		t.Fatalf("graph read: %d %s", res.StatusCode, body)
	}
	id := res.Header.Get("X-Svc-Trace-Id")
	if len(id) != 32 {
		t.Fatalf("X-Svc-Trace-Id %q is not a 32-digit OpenTelemetry trace id while tracing is on", id)
	}
	spans := rcv.waitTrace(t, id, [2]string{"gateway", "GET "}, [2]string{"gateway", "plugin book "},
		[2]string{"book", "svc.book.v1.BookService/ListPosts"}, [2]string{"book", "SQL ListPosts"})
	server := findSpan(spans, "gateway", "GET ")
	client := findSpan(spans, "gateway", "plugin book ")
	handler := findSpan(spans, "book", "svc.book.v1.BookService/ListPosts")
	query := findSpan(spans, "book", "SQL ListPosts")
	if string(client.GetParentSpanId()) != string(server.GetSpanId()) {
		t.Error("the plugin call's span is not a child of the request's span")
	}
	if string(handler.GetParentSpanId()) != string(client.GetSpanId()) {
		t.Error("the plugin's span is not a child of the gateway's call span")
	}
	if string(query.GetParentSpanId()) != string(handler.GetSpanId()) {
		t.Error("the SQL span is not a child of the plugin's span")
	}
	if server.GetKind() != tracepb.Span_SPAN_KIND_SERVER || client.GetKind() != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("span kinds: request %v, plugin call %v", server.GetKind(), client.GetKind())
	}

	// A client's own traceparent is joined: its trace id is the answer's.
	clientTrace := "4bf92f3577b34da6a3ce929d0e0e4736"
	res, body = do(t, "GET", g.URL+"/api/v1/graph?"+q.Encode(), nil, map[string]string{"Authorization": "Bearer " + token,
		"Traceparent": "00-" + clientTrace + "-00f067aa0ba902b7-01"})
	if res.StatusCode != 200 {
		t.Fatalf("graph read with traceparent: %d %s", res.StatusCode, body)
	}
	if got := res.Header.Get("X-Svc-Trace-Id"); got != clientTrace {
		t.Fatalf("X-Svc-Trace-Id %q, want the client's trace %s", got, clientTrace)
	}
	joined := findSpan(rcv.waitTrace(t, clientTrace, [2]string{"gateway", "GET "}), "gateway", "GET ")
	if hex.EncodeToString(joined.GetParentSpanId()) != "00f067aa0ba902b7" {
		t.Errorf("the request's span has parent %x, want the client's span", joined.GetParentSpanId())
	}

	// An error's fbtrace_id names the same trace.
	res, body = do(t, "GET", g.URL+"/api/v1/graph?node=page/"+c.Page.ID+"/posts&limit=abc", nil, map[string]string{"Authorization": "Bearer " + token})
	if res.StatusCode != 400 || !strings.Contains(string(body), `"fbtrace_id":"`+res.Header.Get("X-Svc-Trace-Id")+`"`) {
		t.Fatalf("refusal: %d %s (X-Svc-Trace-Id %s)", res.StatusCode, body, res.Header.Get("X-Svc-Trace-Id"))
	}
}

func TestTracingIsOffUnlessAnEndpointIsSet(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: pgtest.NewDatabase(t)})
	res, _ := do(t, "GET", g.URL+"/healthz", nil, nil)
	if id := res.Header.Get("X-Svc-Trace-Id"); len(id) != 16 {
		t.Fatalf("X-Svc-Trace-Id %q: with tracing off the id stays the short random one", id)
	}

}
