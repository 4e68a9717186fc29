package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/server"
	"github.com/svcplatform/svc/gateway/internal/serving"
	"github.com/svcplatform/svc/gateway/internal/version"
	platformv1 "github.com/svcplatform/svc/gen/svc/platform/v1"
	"github.com/svcplatform/svc/gen/svc/platform/v1/platformv1connect"
)

func newServer(t testing.TB) *server.Server {
	t.Helper()
	s := server.New(server.Options{Metrics: observe.NewMetrics(), Ready: func(context.Context) error { return nil }})
	_, h := platformv1connect.NewPlatformServiceHandler(version.Service{}, server.HandlerOptions()...)
	err := s.SetServices([]server.Service{{
		Schema:  platformv1.File_svc_platform_v1_platform_proto.Services().ByName("PlatformService"),
		Handler: h,
	}}, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEveryResponseCarriesATraceID(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for _, path := range []string{"/api/v1/platform/changelog", "/api/v9/x", "/nope", "/healthz", "/svc.platform.v1.PlatformService/GetChangelog"} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Header().Get(observe.TraceHeader) == "" {
			t.Errorf("%s: no %s", path, observe.TraceHeader)
		}
	}
}

func TestEveryAnswerOnTheOpenAIPathsCarriesXRequestIDAsOpenAIs(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	big := strings.Repeat("x", serving.MaxBodyBytes+1)
	for _, r := range []*http.Request{
		httptest.NewRequest("GET", "/v1/models", nil),                               // not registered here: a 404
		httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(big)), // refused before any handler
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		if id := rec.Header().Get("x-request-id"); id == "" || id != rec.Header().Get(observe.TraceHeader) {
			t.Errorf("%s %s answered %d with x-request-id %q", r.Method, r.URL.Path, rec.Code, id)
		}
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if _, ok := rec.Header()["X-Request-Id"]; ok {
		t.Error("x-request-id outside the OpenAI paths")
	}
}

// FuzzRequests sends arbitrary methods, paths, content types and bodies
// through the whole middleware chain and transcoder: nothing may panic or
// answer a server error, and REST refusals are always the Graph envelope.
func FuzzRequests(f *testing.F) {
	f.Add("POST", "/api/v1/platform/changelog", "application/json", `{"bogus":1}`)
	f.Add("GET", "/api/v2/platform/changelog", "", "")
	f.Add("POST", "/svc.platform.v1.PlatformService/GetChangelog", "application/json", `{not json`)
	f.Add("POST", "/svc.platform.v1.PlatformService/GetChangelog", "application/proto", "\xff\xff\xff")
	f.Add("POST", "/svc.platform.v1.PlatformService/GetChangelog", "application/grpc", "\x00\x00\x00\x00\x05abc")
	f.Add("PUT", "/api/v1/../admin", "text/plain", "x")
	s := newServer(f)
	f.Fuzz(func(t *testing.T, method, path, ctype, body string) {
		if !validMethod(method) || !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \t\r\n#?") || strings.ContainsAny(ctype, "\r\n") {
			return
		}
		if _, err := url.ParseRequestURI(path); err != nil {
			return // the HTTP server itself refuses such request lines
		}
		req := httptest.NewRequest(method, "http://gateway"+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if strings.HasSuffix(path, "GetChangelog") {
			req.Header.Set("Connect-Protocol-Version", "1")
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		// 505 is gRPC's correct answer to HTTP/1.1, which httptest speaks.
		if rec.Code >= 500 && rec.Code != http.StatusHTTPVersionNotSupported {
			t.Fatalf("%s %s (%s) %q: %d %s", method, path, ctype, body, rec.Code, rec.Body)
		}
		if strings.HasPrefix(path, "/api/") && rec.Code >= 400 {
			var env struct {
				Error *struct {
					Code      *int   `json:"code"`
					FBTraceID string `json:"fbtrace_id"`
				} `json:"error"`
			}
			if json.Unmarshal(rec.Body.Bytes(), &env) != nil || env.Error == nil || env.Error.Code == nil ||
				env.Error.FBTraceID != rec.Header().Get(observe.TraceHeader) {
				t.Fatalf("%s %s: refusal %d is not the envelope: %s", method, path, rec.Code, rec.Body)
			}
		}
	})
}

func validMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodHead, http.MethodOptions:
		return true
	}
	return false
}

func TestAPanicResolvingTheCredentialIsAnsweredWithTheErrorEnvelope(t *testing.T) {
	t.Parallel()
	s := server.New(server.Options{Metrics: observe.NewMetrics(), Ready: func(context.Context) error { return nil },
		Authenticate: func(context.Context, *http.Request) context.Context { panic("credential store broke") }})
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/platform/changelog", nil))
	var env struct {
		Error *struct {
			Code      *int   `json:"code"`
			FBTraceID string `json:"fbtrace_id"`
		} `json:"error"`
	}
	if rec.Code != http.StatusInternalServerError || json.Unmarshal(rec.Body.Bytes(), &env) != nil || env.Error == nil ||
		env.Error.FBTraceID != rec.Header().Get(observe.TraceHeader) {
		t.Fatalf("answer = %d %s, want 500 in the envelope with the trace id", rec.Code, rec.Body)
	}
}

func TestAHandlersNotesAndTraceIDReachTheAccessLine(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		var log strings.Builder
		opts := server.Options{Metrics: observe.NewMetrics(), Ready: func(context.Context) error { return nil }}
		if on {
			opts.AccessLog = &log
		}
		s := server.New(opts)
		var seen string
		s.Handle("GET /noted", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = observe.TraceID(r.Context())
			observe.NoteNode(r.Context(), "page/{id}/posts")
			observe.NoteNode(r.Context(), "not/the/first")
			observe.NoteErrorCode(r.Context(), 100)
			w.WriteHeader(http.StatusBadRequest)
		}))
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "/noted", nil))
		id := rec.Header().Get(observe.TraceHeader)
		if id == "" || seen != id {
			t.Fatalf("the handler saw trace id %q, the response says %q", seen, id)
		}
		if !on {
			if log.Len() != 0 {
				t.Fatalf("access log off, but %q was written", log.String())
			}
			continue
		}
		var line struct {
			Node    string `json:"node"`
			Code    int    `json:"code"`
			Status  int    `json:"status"`
			TraceID string `json:"trace_id"`
		}
		if err := json.Unmarshal([]byte(log.String()), &line); err != nil {
			t.Fatalf("access line %q: %v", log.String(), err)
		}
		if line.Node != "page/{id}/posts" || line.Code != 100 || line.Status != 400 || line.TraceID != id {
			t.Errorf("access line %q, want node page/{id}/posts, code 100, status 400, trace_id %s", log.String(), id)
		}
	}
}

func TestARequestGoesToTheHandlerTheMuxWouldChoose(t *testing.T) {
	t.Parallel()
	s := server.New(server.Options{Metrics: observe.NewMetrics(), Ready: func(context.Context) error { return nil }})
	named := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(name)) })
	}
	s.Handle("/exact", named("exact"))
	s.Handle("GET /shadowed", named("GET shadowed"))
	s.Handle("/shadowed", named("shadowed"))
	s.Handle("/late", named("late"))
	s.Handle("POST /late", named("POST late"))
	s.Handle("/hosted", named("hosted"))
	s.Handle("example.com/hosted", named("example.com hosted"))
	s.Handle("/tree/", named("tree"))
	s.Handle("/healthz", named("healthz")) // after New's GET /healthz
	for _, c := range []struct{ method, target, host, want string }{
		{"GET", "/exact", "", "exact"},
		{"POST", "/exact", "", "exact"},
		{"GET", "/ex%61ct", "", "exact"},
		{"GET", "/shadowed", "", "GET shadowed"},
		{"HEAD", "/shadowed", "", "GET shadowed"}, // the recorder keeps a HEAD's body
		{"POST", "/shadowed", "", "shadowed"},
		{"POST", "/late", "", "POST late"},
		{"GET", "/late", "", "late"},
		{"GET", "/hosted", "example.com", "example.com hosted"},
		{"GET", "/hosted", "other.example", "hosted"},
		{"GET", "/tree/x", "", "tree"},
		{"GET", "/tree", "", "<a href=\"/tree/\">Temporary Redirect</a>.\n\n"}, // the mux's redirect
		{"GET", "/healthz", "", `{"status":"ok"}`},
		{"POST", "/healthz", "", "healthz"},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		if c.host != "" {
			r.Host = c.host
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		if got := rec.Body.String(); got != c.want {
			t.Errorf("%s %s (host %q): %d %q, want %q", c.method, c.target, c.host, rec.Code, got, c.want)
		}
	}
}
