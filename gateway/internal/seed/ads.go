package seed

import (
	"context"
	"fmt"

	"github.com/svcplatform/svc/gateway/internal/auth"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// The sponsored item of the development world, as the chats list shows it.
const (
	SponsoredTitle = "Demo Coffee beans, 20% off"
	sponsoredBody  = "Fresh roasts delivered weekly."
	sponsoredLink  = "https://example.com/demo-coffee"
	// sponsoredBudget is the seeded campaign's daily budget in cents: at
	// the sandbox's $5 a thousand impressions, 200,000 serves a day.
	sponsoredBudget = 100_000
)

// Sponsored gives the development world its sponsored item the way an
// advertiser makes one: as the owner, through the ads plugin's public
// methods (the owner's sandbox ad account, an ACTIVE campaign, an ad shown
// to everyone). It runs once plugins serve, after Run seeded the world; ok
// is false when no ads plugin is installed.
func Sponsored(ctx context.Context, api API, c *Credentials) (ok bool, err error) {
	owner := &auth.Principal{Kind: pluginv1.TokenKind_TOKEN_KIND_USER, UserID: c.Users["owner"].ID, AppID: c.App.ID,
		Scopes: []string{"ads_read", "ads_management"}}
	call := func(method string, req, res any) error {
		served, err := callAs(ctx, api, owner, "/svc.ads.v1.AdsService/"+method, req, res)
		switch {
		case !served:
			ok = false
			return fmt.Errorf("no plugin serves %s", method)
		case err != nil:
			return fmt.Errorf("seed the sponsored item: %w", err)
		}
		return nil
	}
	ok = true
	var accounts struct{ Data []struct{ ID string } }
	if err := call("ListMyAdAccounts", map[string]any{}, &accounts); err != nil || len(accounts.Data) == 0 {
		if err == nil {
			err = fmt.Errorf("seed the sponsored item: the owner has no sandbox ad account")
		}
		return ok, err
	}
	var campaign, ad struct{ ID string }
	if err := call("CreateCampaign", map[string]any{"ad_account_id": accounts.Data[0].ID, "name": "Demo Coffee beans",
		"objective": "TRAFFIC", "status": "ACTIVE", "daily_budget": sponsoredBudget}, &campaign); err != nil {
		return ok, err
	}
	err = call("CreateAd", map[string]any{"campaign_id": campaign.ID, "name": "Demo Coffee beans, 20% off",
		"creative": map[string]any{"title": SponsoredTitle, "body": sponsoredBody, "link_url": sponsoredLink, "page_id": c.Page.ID}}, &ad)
	return ok, err
}
