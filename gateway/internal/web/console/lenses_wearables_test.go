package console

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The lenses and wearables tabs of an app, and the staff lens queue: each
// path maps to its page, the page names its app for its script, loads its
// own script and links the tabs; the staff queue's link shows to staff
// only. The scripts call only the public API: the Graph nodes the lenses
// and wearables plugins bind, and the staff queue's REST path.
func TestTheLensesAndWearablesPortalPagesAreRoutedAndCallOnlyThePublicAPI(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{"/apps/42/lenses": "lenses", "/apps/42/wearables": "wearables", "/staff/lenses": "staff-lenses"} {
		pg, app, ok := route(path)
		if !ok || pg.Name != want || (want != "staff-lenses" && app != "42") {
			t.Fatalf("route(%q) = %q, app %q, %v", path, pg.Name, app, ok)
		}
		for _, staff := range []bool{false, true} {
			rec := httptest.NewRecorder()
			v := view{page: pg, Staff: staff}
			if want != "staff-lenses" {
				v.AppID = app
			}
			New(Options{}).render(rec, httptest.NewRequest("GET", Path+path, nil), http.StatusOK, v)
			body := rec.Body.String()
			wants := []string{`src="/developers/console/static/` + want + `.js"`}
			if want != "staff-lenses" {
				wants = append(wants, `data-app="42"`, `href="/developers/console/apps/42/lenses"`, `href="/developers/console/apps/42/wearables"`,
					`href="/developers/console/apps/42/`+want+`" aria-current="page"`)
			}
			for _, w := range wants {
				if !strings.Contains(body, w) {
					t.Errorf("%s lacks %s", path, w)
				}
			}
			if link := strings.Contains(body, `href="/developers/console/staff/lenses"`); link != staff {
				t.Errorf("%s (staff=%v) links the staff lens queue: %v", path, staff, link)
			}
		}
	}
	calls := map[string][]string{
		"lenses.js":       {"appNode('lenses')", "appNode(`lenses/${l.id}`)"},
		"wearables.js":    {"appNode('wearables_cards')", "appNode('wearables_devices')"},
		"staff-lenses.js": {"'/api/developers/admin/lenses/review-queue'"},
	}
	api := regexp.MustCompile(`appNode\([^)]*\)|'/api/[^']*'`)
	for file, want := range calls {
		src, err := staticFiles.ReadFile("static/" + file)
		if err != nil {
			t.Fatal(err)
		}
		got := api.FindAllString(string(src), -1)
		for _, g := range got {
			if !slices.Contains(want, g) && g != "appNode()" {
				t.Errorf("%s calls %s, not one of %v", file, g, want)
			}
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%s does not call %s", file, w)
			}
		}
	}
}
