package chatapp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

// The page and its assets come with a policy that lets the page run its own
// module and talk to its own origin, and nothing else.
func TestThePageAndItsAssetsAreServedUnderAStrictPolicy(t *testing.T) {
	for path, want := range map[string]string{"/chat": "text/html", "/chat/": "text/html", "/chat/chat.js": "text/javascript", "/chat/chat.css": "text/css"} {
		rec := get(path)
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), want) {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Header().Get("Content-Type"))
		}
		csp := rec.Header().Get("Content-Security-Policy")
		for _, d := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, d) {
				t.Errorf("GET %s: policy %q lacks %q", path, csp, d)
			}
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", path)
		}
	}
	if body := get("/chat").Body.String(); strings.Contains(body, "<script>") || !strings.Contains(body, `src="/chat/chat.js"`) {
		t.Fatalf("the page must load its module from a file, never inline:\n%s", body)
	}
}

func TestAnythingElseUnderChatIsNotFound(t *testing.T) {
	for _, path := range []string{"/chat/nope.js", "/chat/../chatapp.go", "/chat/static/chat.js"} {
		if rec := get(path); rec.Code != 404 {
			t.Errorf("GET %s: %d, want 404", path, rec.Code)
		}
	}
}
