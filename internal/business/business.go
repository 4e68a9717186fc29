// Package business names the business portfolio that holds a user's Pages
// and business assets, for the core's me/business_portfolios and
// me/assigned_assets and the plugins that keep business assets (ads,
// extmsg). It is a product idea the platform shares, not part of the
// partner SDK; today a user has exactly one portfolio, named after the
// user.
package business

// Of is the id of the business portfolio that holds a user's Pages and
// business assets: "bp_" and the user's id. Plugins that keep business
// assets (ad accounts, messaging accounts) own them by this id.
func Of(userID string) string { return "bp_" + userID }
