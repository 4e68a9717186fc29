package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkRoute is the choice of a Graph request's handler among a dozen
// patterns of the kinds the gateway registers: the mux's walk, or the
// exact path's.
func BenchmarkRoute(b *testing.B) {
	s := New(Options{})
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, p := range []string{"GET /api/v1/openapi.json", "GET /webhooks/listen", "POST /webhooks/listen/ack",
		"GET /metrics", "/api/mobile/auth/session", "/api/mobile/auth/signup", "GET /chat", "GET /chat/",
		"GET /oauth/authorize", "POST /oauth/token", "GET /developers/{page...}", "GET /status/{id}", "/api/v1/graph"} {
		s.Handle(p, noop)
	}
	r := httptest.NewRequest(http.MethodGet, "/api/v1/graph?node=page/1/posts&limit=10", nil)
	var w http.ResponseWriter = httptest.NewRecorder()
	b.Run("mux", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.mux.ServeHTTP(w, r)
		}
	})
	b.Run("route", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.route(w, r)
		}
	})
}
