package sdk

// BusinessOf is the id of the business portfolio that holds a user's Pages
// and business assets: "bp_" and the user's id, as me/business_portfolios
// and me/assigned_assets name it. Plugins that keep business assets (ad
// accounts, messaging accounts) own them by this id.
func BusinessOf(userID string) string { return "bp_" + userID }
