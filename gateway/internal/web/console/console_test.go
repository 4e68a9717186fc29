package console

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func TestRouteMapsConsolePathsToPages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path, page, app string
	}{
		{"", "apps", ""},
		{"/", "apps", ""},
		{"/apps", "apps", ""},
		{"/apps/42", "app", "42"},
		{"/apps/42/", "app", "42"},
		{"/apps/any-form_is.fine/webhooks", "webhooks", "any-form_is.fine"},
		{"/apps/42/review", "review", "42"},
		{"/apps/42/templates", "templates", "42"},
		{"/apps/42/completions", "completions", "42"},
		{"/debugger", "debugger", ""},
		{"/explorer", "explorer", ""},
		{"/explorer/callback", "callback", ""},
		{"/reference", "reference", ""},
		{"/staff/templates", "staff-templates", ""},
		{"/staff/review", "staff-review", ""},
		{"/pages", "pages", ""},
		{"/pages/77", "page", "77"},
		{"/pages/77/", "page", "77"},
		{"/account", "account", ""},
		{"/business", "business", ""},
		{"/staff/business-verification", "staff-business", ""},
	} {
		p, app, ok := route(tc.path)
		if !ok || p.Name != tc.page || app != tc.app {
			t.Errorf("route(%q) = %q, app %q, %v; want %q, app %q", tc.path, p.Name, app, ok, tc.page, tc.app)
		}
	}
	for _, path := range []string{"/nope", "/apps/42/nope", "/apps/42/webhooks/x", "/staff", "/explorer/other", "/apps//review", "/pages/77/roles", "/account/x"} {
		if p, _, ok := route(path); ok {
			t.Errorf("route(%q) = %q, want no page", path, p.Name)
		}
	}
}

func TestEveryPageHasATemplateAndAScript(t *testing.T) {
	t.Parallel()
	if _, err := staticFiles.ReadFile("static/layout.js"); err != nil {
		t.Errorf("the layout's script: %v", err)
	}
	for _, n := range pageNames {
		if templates[n] == nil {
			t.Errorf("page %s has no template", n)
		}
		if n == "notfound" {
			continue
		}
		if _, err := staticFiles.ReadFile("static/" + n + ".js"); err != nil {
			t.Errorf("page %s has no script: %v", n, err)
		}
	}
}

// FuzzRoute: any path maps to a known page or to none, and an app id is
// one path segment.
func FuzzRoute(f *testing.F) {
	for _, s := range []string{"", "/apps/1/webhooks", "/apps//review", "/staff/review", "//", "/apps/%2F/x"} {
		f.Add(s)
	}
	known := map[string]bool{}
	for _, n := range pageNames {
		known[n] = true
	}
	f.Fuzz(func(t *testing.T, path string) {
		p, app, ok := route(path)
		if !ok {
			return
		}
		if !known[p.Name] || p.Name == "notfound" {
			t.Fatalf("route(%q) = unknown page %q", path, p.Name)
		}
		if strings.Contains(app, "/") || ((p.AppTab != "" || p.Name == "page") && app == "") {
			t.Fatalf("route(%q) = app id %q with a slash", path, app)
		}
	})
}

// TestEveryPageLinksTheIconTheConsoleServes checks issue 28 item 8: every
// console page links an icon, and the console serves it as SVG.
func TestEveryPageLinksTheIconTheConsoleServes(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	New(Options{}).Register(mux)
	for _, n := range pageNames {
		rec := httptest.NewRecorder()
		New(Options{}).render(rec, httptest.NewRequest("GET", Path, nil), http.StatusOK, view{page: page{Name: n}, Plain: &plainData{Unavailable: map[string]string{}}})
		m := regexp.MustCompile(`<link rel="icon" href="([^"]+)" type="image/svg\+xml">`).FindStringSubmatch(rec.Body.String())
		if m == nil {
			t.Errorf("page %s links no icon", n)
			continue
		}
		icon := httptest.NewRecorder()
		mux.ServeHTTP(icon, httptest.NewRequest("GET", m[1], nil))
		if icon.Code != http.StatusOK || icon.Header().Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(icon.Body.String(), "<svg ") {
			t.Errorf("page %s: its icon %s: %d %q", n, m[1], icon.Code, icon.Header().Get("Content-Type"))
		}
	}
}

// The Page settings page names its Page for its script (data-page-id), and
// never as an app; every page's side navigation leads to the Pages and the
// account.
func TestThePageSettingsPageCarriesItsPageAndTheNavigationLeadsToPagesAndAccount(t *testing.T) {
	t.Parallel()
	pg, id, ok := route("/pages/77")
	if !ok {
		t.Fatal("no route to a Page's settings")
	}
	rec := httptest.NewRecorder()
	New(Options{}).render(rec, httptest.NewRequest("GET", Path+"/pages/77", nil), http.StatusOK, view{page: pg, PageID: id})
	body := rec.Body.String()
	for _, want := range []string{`data-page-id="77"`, `data-app=""`, `href="/developers/console/pages" aria-current="page"`,
		`href="/developers/console/account"`, `src="/developers/console/static/page.js"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the Page settings page lacks %s", want)
		}
	}
}
