package identity

import (
	"fmt"
	"slices"
	"strings"
)

// Scopes the platform knows (CONTRACT §4, plus openid for OIDC).
const (
	ScopeOpenID        = "openid"
	ScopePublicProfile = "public_profile"
	ScopePagesRead     = "pages:read"
	ScopePagesManage   = "pages:manage"
	ScopeChatSend      = "svcchat:send"
	ScopeChatRead      = "svcchat:read"
	ScopeWearablesPush = "wearables:push"
	// Threads scopes carry the names Meta's Threads API gives the same
	// grants, so that a Threads client's scope list works unchanged.
	ScopeThreadsBasic          = "threads_basic"
	ScopeThreadsContentPublish = "threads_content_publish"
	ScopeThreadsManageInsights = "threads_manage_insights"
	// Ads, commerce and business-messaging scopes carry the names Meta's
	// Marketing, Commerce and WhatsApp Business APIs give the same grants
	// (docs/design/products.md).
	ScopeAdsRead        = "ads_read"
	ScopeAdsManagement  = "ads_management"
	ScopeLeadsRetrieval = "leads_retrieval"
	// ScopeLeadsSubmission lets an app submit lead forms in its user's
	// name (CONTRACT §15); the user's own session needs none.
	ScopeLeadsSubmission          = "leads_submission"
	ScopeCommerceCheckout         = "commerce_checkout"
	ScopeExtmsgBusinessManagement = "extmsg_business_management"
)

// scopeInfo describes each scope: its plain-words description on the consent
// page, and how App Review treats it.
var scopeInfo = map[string]struct {
	Description string
	// Basic scopes pass App Review automatically at score AutoReviewMinScore.
	Basic bool
	// Protocol scopes need no review at all.
	Protocol bool
}{
	ScopeOpenID:                   {Description: "Confirm who you are (your account id)", Protocol: true},
	ScopePublicProfile:            {Description: "See your name", Basic: true},
	ScopePagesRead:                {Description: "See the Pages you manage and their posts", Basic: true},
	ScopePagesManage:              {Description: "Publish posts and change settings on the Pages you manage"},
	ScopeChatSend:                 {Description: "Send messages as your Pages to people who wrote to them"},
	ScopeChatRead:                 {Description: "Read your Pages' conversations"},
	ScopeWearablesPush:            {Description: "Show cards on your paired wearable devices"},
	ScopeThreadsBasic:             {Description: "See threads and their replies", Basic: true},
	ScopeThreadsContentPublish:    {Description: "Publish threads, replies and likes as you"},
	ScopeThreadsManageInsights:    {Description: "See the views, likes and replies of your threads"},
	ScopeAdsRead:                  {Description: "See your business's ad accounts, campaigns and lead forms"},
	ScopeAdsManagement:            {Description: "Create sandbox ad accounts, campaigns and lead forms in your business"},
	ScopeLeadsRetrieval:           {Description: "See the leads people submit to your business's lead forms"},
	ScopeLeadsSubmission:          {Description: "Send your answers to lead forms in your name"},
	ScopeCommerceCheckout:         {Description: "Place orders in shops for you (you pay later, outside the app)"},
	ScopeExtmsgBusinessManagement: {Description: "Connect your business's messaging accounts to the app and manage their message templates"},
}

// AllScopes lists every scope, in a fixed order (for discovery).
func AllScopes() []string {
	return []string{ScopeOpenID, ScopePublicProfile, ScopePagesRead, ScopePagesManage,
		ScopeChatSend, ScopeChatRead, ScopeWearablesPush,
		ScopeThreadsBasic, ScopeThreadsContentPublish, ScopeThreadsManageInsights,
		ScopeAdsRead, ScopeAdsManagement, ScopeLeadsRetrieval, ScopeLeadsSubmission, ScopeCommerceCheckout, ScopeExtmsgBusinessManagement}
}

// KnownScope reports whether scope exists.
func KnownScope(scope string) bool { _, ok := scopeInfo[scope]; return ok }

// ScopeDescription is the scope in plain words, for the consent page.
func ScopeDescription(scope string) string { return scopeInfo[scope].Description }

// BasicScope reports whether App Review approves scope automatically (at
// score AutoReviewMinScore or more) rather than by staff.
func BasicScope(scope string) bool { return scopeInfo[scope].Basic }

// ParseScopes splits a space-separated scope parameter (RFC 6749 §3.3),
// dropping duplicates and sorting, and refuses unknown scopes.
func ParseScopes(param string) ([]string, error) {
	var out []string
	for _, s := range strings.Fields(param) {
		if !KnownScope(s) {
			return nil, fmt.Errorf("unknown scope %q: %w", s, ErrInvalid)
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// ContainsAll reports whether have holds every scope of want.
func ContainsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
