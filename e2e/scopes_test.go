package e2e

import (
	"testing"
)

// CONTRACT §15, scopes: me/pages, me/assigned_assets and
// me/business_portfolios need pages:read or pages:manage; a token with only
// openid reads none of them.
func TestScopesTheUsersPagesAssetsAndPortfoliosNeedPagesReadOrPagesManage(t *testing.T) {
	t.Parallel()
	w := newSocialWorld(t)
	openid := w.g.UserToken(t, "owner", "openid")
	read := w.g.UserToken(t, "owner", "pages:read")
	manage := w.g.UserToken(t, "owner", "pages:manage")
	session := signIn(t, w.graphWorld, "owner")
	for _, node := range []string{"me/pages", "me/assigned_assets", "me/business_portfolios"} {
		res, body := w.graph(t, "GET", openid, node, nil)
		wantGraphError(t, res, body, 403, 10, 2069002)
		for _, token := range []string{read, manage, session} {
			w.ok(t, "GET", token, node, nil)
		}
	}
}

// CONTRACT §15, scopes: submitting a lead needs leads_submission or the
// person's own session; any other token of the person is refused.
func TestScopesSubmittingALeadNeedsLeadsSubmissionOrAFirstPartySession(t *testing.T) {
	t.Parallel()
	w := newSocialWorld(t)
	owner := w.g.UserToken(t, "owner", "ads_read", "ads_management")
	account := w.ok(t, "GET", owner, "me/adaccounts", nil)["data"].([]any)[0].(map[string]any)["id"].(string)
	form := w.ok(t, "POST", owner, "ad_account/"+account+"/leadgen_forms", map[string]any{"name": "Tastings",
		"privacy_policy_url": "https://demo.example.com/privacy",
		"questions":          []any{map[string]any{"type": "FULL_NAME"}}})["id"].(string)
	lead := map[string]any{"field_data": []any{map[string]any{"name": "full_name", "values": []string{"Ada"}}}}
	node := "leadgen_form/" + form + "/leads"

	other := w.g.UserToken(t, "consumer", "public_profile", "pages:read", "ads_read", "leads_retrieval")
	res, body := w.graph(t, "POST", other, node, lead)
	wantGraphError(t, res, body, 403, 10, 2069002)

	w.ok(t, "POST", w.g.UserToken(t, "consumer", "leads_submission"), node, lead)
	w.ok(t, "POST", signIn(t, w.graphWorld, "staff"), node, lead)
}
