package openai

import (
	"net/http"
	"net/http/httptest"
	"testing"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

func page() *pluginv1.HttpResponse {
	return &pluginv1.HttpResponse{Status: 200, Body: []byte("<p>hi</p>"), Headers: map[string]string{
		"content-type": "text/html; charset=utf-8", "ETag": `"abc"`, "Cache-Control": "public, max-age=60",
		"Set-Cookie": "session=stolen", "X-Powered-By": "plugin", "X-Frame-Options": "DENY",
	}}
}

func TestAPluginsAnswerCarriesOnlyAllowlistedHeadersAndNeverACookie(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	writeWithHeaders(rec, httptest.NewRequest("GET", "/posts/1", nil), page())
	h := rec.Result().Header
	if rec.Code != 200 || rec.Body.String() != "<p>hi</p>" {
		t.Fatalf("answer %d %q", rec.Code, rec.Body.String())
	}
	if h.Get("Set-Cookie") != "" || h.Get("X-Powered-By") != "" {
		t.Errorf("headers outside the allowlist were written: %v", h)
	}
	for k, v := range map[string]string{"Content-Type": "text/html; charset=utf-8", "ETag": `"abc"`,
		"Cache-Control": "public, max-age=60", "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff"} {
		if h.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, h.Get(k), v)
		}
	}
}

func TestAnAnswerWhoseETagTheClientHoldsIs304WithoutABody(t *testing.T) {
	t.Parallel()
	req := httptest.NewRequest("GET", "/posts/1", nil)
	req.Header.Set("If-None-Match", `"abc"`)
	rec := httptest.NewRecorder()
	writeWithHeaders(rec, req, page())
	if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("revalidation: %d %q", rec.Code, rec.Body.String())
	}
	req.Header.Set("If-None-Match", `"old"`)
	rec = httptest.NewRecorder()
	writeWithHeaders(rec, req, page())
	if rec.Code != http.StatusOK {
		t.Errorf("a stale ETag: %d", rec.Code)
	}
}
