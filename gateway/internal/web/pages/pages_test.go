package pages_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/web/pages"
)

func TestTheChangelogPageIsRenderedWithThePagesSecurityHeadersAndEscaped(t *testing.T) {
	rec := httptest.NewRecorder()
	err := pages.RenderChangelog(rec, []pages.Release{{Version: "1.2.0", Date: "2026-01-02", Kind: "feature", Summary: "<script>alert(1)</script> handover"}})
	if err != nil {
		t.Fatal(err)
	}
	body := rec.Body.String()
	if !strings.Contains(body, "<td>1.2.0</td>") || strings.Contains(body, "<script>") || !strings.Contains(body, "&lt;script&gt;") {
		t.Fatalf("body:\n%s", body)
	}
	h := rec.Header()
	if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") || h.Get("X-Frame-Options") != "DENY" ||
		h.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Fatalf("headers: %v", h)
	}
}
