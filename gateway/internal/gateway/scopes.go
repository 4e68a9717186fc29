package gateway

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/route"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
)

// declaredScopes follows the route table: the scopes each plugin of a new
// table declares go to identity's catalog (core.plugin_scopes), so that
// every gateway of the installation knows them, and keeps knowing them
// while the plugin restarts or is gone. A plugin's scopes are written when
// they differ from what this gateway last wrote for it, so a rebuild that
// changes no declaration costs no write. A failed write is logged and
// tried again at the next table: the table is not refused for it, and this
// gateway's catalog knows the scopes meanwhile.
type declaredScopes struct {
	ids *identity.Service
	log *slog.Logger
	mu  sync.Mutex
	// written are the scopes last written for each plugin.
	written map[string][]identity.Scope
}

func newDeclaredScopes(ids *identity.Service, log *slog.Logger) *declaredScopes {
	return &declaredScopes{ids: ids, log: log, written: map[string][]identity.Scope{}}
}

// Prepare writes the new declarations of t's plugins; its commit does
// nothing (the catalog is identity's).
func (d *declaredScopes) Prepare(t *route.Table) (func(), error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, src := range t.Sources() {
		p := src.Plugin
		scopes := catalogScopes(p.Scopes, p.Methods)
		if len(scopes) == 0 || slices.Equal(d.written[p.Name], scopes) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := d.ids.DeclareScopes(ctx, p.Name, scopes)
		cancel()
		if err != nil {
			d.log.Warn("declare the plugin's scopes", "plugin", p.Name, "err", err)
			continue
		}
		d.written[p.Name] = scopes
	}
	return func() {}, nil
}

// catalogScopes are a plugin's declared scopes as identity's catalog
// holds them. A scope is a Page scope when one of the plugin's methods
// that acts on a Page (a page_role or a product in its access rule) needs
// it: the plugin declares nothing more for granular consent.
func catalogScopes(declared []manifestcheck.Scope, methods []*manifestcheck.Method) []identity.Scope {
	onPages := map[string]bool{}
	for _, m := range methods {
		a := m.Access
		if a.GetPageRole() == pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED && a.GetProduct() == "" {
			continue
		}
		for _, sc := range a.GetScopes() {
			onPages[sc] = true
		}
		for _, sc := range a.GetAnyScopes() {
			onPages[sc] = true
		}
	}
	out := make([]identity.Scope, 0, len(declared))
	for _, sc := range declared {
		tier := identity.TierAdvanced
		if sc.Review == pluginv1.ReviewTier_REVIEW_TIER_BASIC {
			tier = identity.TierBasic
		}
		out = append(out, identity.Scope{Name: sc.Name, Description: sc.Description, Tier: tier, Pages: onPages[sc.Name]})
	}
	return out
}
