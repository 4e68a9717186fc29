// Package business names what a person holds in the ads plugin (ad
// accounts made by a person): "bp_" and the person's id. It is not a business portfolio's
// id: portfolios are stored by the core (CONTRACT §17, core.businesses),
// which also records which portfolio holds each asset
// (business/<id>/assets). It is a product idea the platform shares, not
// part of the partner SDK.
package business

// Of is the key under which the ads plugin keeps the ad accounts a person
// makes: "bp_" and the user's id. The business
// portfolio holding such an asset, if any, is the core's record.
func Of(userID string) string { return "bp_" + userID }
