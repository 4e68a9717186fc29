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

// A person who signed in or up with nowhere to go next is offered the
// places a person uses: their Pages, the chat app, the console, their
// account.
func TestTheSignedInPageLeadsToPagesChatTheConsoleAndTheAccount(t *testing.T) {
	rec := httptest.NewRecorder()
	if err := pages.RenderSignedIn(rec, pages.SignedIn{Name: "Nia", CSRF: "c"}); err != nil {
		t.Fatal(err)
	}
	body := rec.Body.String()
	for _, href := range []string{`href="/developers/console/pages"`, `href="/chat"`, `href="/developers/console"`, `href="/developers/console/account"`} {
		if !strings.Contains(body, href) {
			t.Errorf("the signed-in page has no link %s:\n%s", href, body)
		}
	}
}
