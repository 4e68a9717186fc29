package gateway

import (
	"testing"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
)

// A declared scope is a Page scope (granular consent) exactly when a method
// of its plugin that acts on a Page, by a page_role or a product, needs it,
// among its scopes or its any_scopes.
func TestADeclaredScopeIsAPageScopeWhenAPageMethodNeedsIt(t *testing.T) {
	declared := []manifestcheck.Scope{{Name: "x:send"}, {Name: "x:read"}, {Name: "x:profile"}, {Name: "x:any"}}
	methods := []*manifestcheck.Method{
		{Access: &pluginv1.Access{Scopes: []string{"x:send"}, PageRole: pluginv1.PageRole_PAGE_ROLE_LINKED}},
		{Access: &pluginv1.Access{Scopes: []string{"x:read"}, Product: "x"}},
		{Access: &pluginv1.Access{AnyScopes: []string{"x:any"}, PageRole: pluginv1.PageRole_PAGE_ROLE_EDITOR}},
		{Access: &pluginv1.Access{Scopes: []string{"x:profile"}}},
		{}, // no access option: closed by default, names nothing
	}
	want := map[string]bool{"x:send": true, "x:read": true, "x:any": true, "x:profile": false}
	for _, sc := range catalogScopes(declared, methods) {
		if sc.Pages != want[sc.Name] {
			t.Errorf("%s: Pages = %v, want %v", sc.Name, sc.Pages, want[sc.Name])
		}
	}
}
