package console

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The Business page loads its script, which calls only the public API:
// the business nodes, partner/<id> and POST /api/v1/partners for the
// partner program; its link to the partner docs is the console's docs
// search (the reference page), as the console links the docs.
func TestTheBusinessPageCallsOnlyThePublicAPIAndLinksThePartnerDocsThroughTheDocsSearch(t *testing.T) {
	t.Parallel()
	pg, _, ok := route("/business")
	if !ok || pg.Name != "business" {
		t.Fatalf("route(/business) = %q, %v", pg.Name, ok)
	}
	rec := httptest.NewRecorder()
	New(Options{}).render(rec, httptest.NewRequest("GET", Path+"/business", nil), http.StatusOK, view{page: pg})
	if body := rec.Body.String(); !strings.Contains(body, `src="/developers/console/static/business.js"`) || !strings.Contains(body, `id="businesses"`) {
		t.Errorf("the Business page lacks its script or its list: %s", body)
	}

	src, err := staticFiles.ReadFile("static/business.js")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"graph.get('me/business_portfolios'", "graph.get(`business/${p.id}`)", "graph.get(`business/${p.id}/assets`)",
		"graph.post(`business/${id}/assets`", "graph.post(`business/${id}/verification`", "graph.post('me/business_portfolios'",
		"graph.get(`partner/${b.partner_id}`)", "call('POST', '/api/v1/partners'"}
	calls := regexp.MustCompile("graph\\.(?:get|post|del)\\((?:'[^']*'|`[^`]*`)\\)?|call\\('[A-Z]+', '[^']*'")
	got := calls.FindAllString(string(src), -1)
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("business.js calls %s, not one of %v", g, want)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("business.js does not call %s (it calls %v)", w, got)
		}
	}

	link := regexp.MustCompile(`const partnerDocs = '([^']+)'`).FindStringSubmatch(string(src))
	if link == nil {
		t.Fatal("business.js has no partner docs link")
	}
	u, err := url.Parse(link[1])
	if err != nil || !strings.HasPrefix(u.Path, Path+"/") || !strings.Contains(u.Query().Get("q"), "partner") {
		t.Fatalf("the partner docs link %q is not a docs search for partners", link[1])
	}
	if p, _, ok := route(strings.TrimPrefix(u.Path, Path)); !ok || p.Name != "reference" {
		t.Errorf("the partner docs link %q leads to %q, not the reference's docs search", link[1], p.Name)
	}
}
