package seed

import (
	"context"
	"fmt"

	"github.com/svcplatform/svc/gateway/internal/auth"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// lenses are the development world's camera lenses; icons are small
// inline SVGs, so no file server is needed.
var lenses = []struct{ name, icon string }{
	{"Sunny", "data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 viewBox=%220 0 24 24%22%3E%3Ccircle cx=%2212%22 cy=%2212%22 r=%226%22 fill=%22%23f5b400%22/%3E%3C/svg%3E"},
	{"Ocean", "data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 viewBox=%220 0 24 24%22%3E%3Crect width=%2224%22 height=%2212%22 y=%2212%22 fill=%22%231a73e8%22/%3E%3C/svg%3E"},
	{"Mono", "data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 viewBox=%220 0 24 24%22%3E%3Ccircle cx=%2212%22 cy=%2212%22 r=%229%22 fill=%22%23555%22/%3E%3C/svg%3E"},
}

const lensesService = "/svc.lenses.v1.LensesService/"

// Lenses makes the development world's lenses as a partner does: the
// seeded app's owner creates and submits each, and the seeded staff member
// approves it from the review queue, all through the route table with the
// same access checks as any caller. It runs once, after the first start's
// seed, when the plugins serve; without the lenses plugin it does nothing.
func Lenses(ctx context.Context, api API, c *Credentials) error {
	owner := &auth.Principal{Kind: pluginv1.TokenKind_TOKEN_KIND_SESSION, UserID: c.Users["owner"].ID}
	staff := &auth.Principal{Kind: pluginv1.TokenKind_TOKEN_KIND_SESSION, UserID: c.Users["staff"].ID, Staff: true}
	for _, l := range lenses {
		var made struct {
			ID string `json:"id"`
		}
		ok, err := callAs(ctx, api, owner, lensesService+"CreateLens", map[string]string{"app_id": c.App.ID, "name": l.name, "icon_url": l.icon}, &made)
		if !ok || err != nil {
			if err != nil {
				err = fmt.Errorf("seed lenses: %w", err)
			}
			return err
		}
		steps := []struct {
			who    *auth.Principal
			method string
			req    map[string]string
		}{
			{owner, "UpdateLens", map[string]string{"app_id": c.App.ID, "lens_id": made.ID, "action": "submit"}},
			{staff, "DecideLens", map[string]string{"id": made.ID, "decision": "approve"}},
		}
		for _, s := range steps {
			if _, err := callAs(ctx, api, s.who, lensesService+s.method, s.req, nil); err != nil {
				return fmt.Errorf("seed lenses: %w", err)
			}
		}
	}
	return nil
}
