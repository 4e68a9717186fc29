// Command ads is the ads product plugin (CONTRACT §12): sandbox ad
// accounts of business portfolios, their lead campaigns and lead forms, and
// the leads people submit to the forms. It owns the ads schema (migrated at
// start) and serves svc.ads.v1.AdsService to the gateway.
//
// # Ownership
//
// An ad account is held by the person who made it, under the key
// business.Of(user) ("bp_<user id>"), and that person manages it. The
// business portfolio holding it, if any, is the gateway's record
// (business/<id>/assets, me/assigned_assets), not this plugin's; that
// business's admins use it too, which the plugin asks the gateway (Host
// BusinessAccess on the AD_ACCOUNT asset, mayUse) and never decides.
// Everything under an ad account (campaigns, ads, audiences, forms,
// leads) is reached as the account is: to any other caller it does not
// exist (404, code 100, subcode 33), the answer Meta gives for an object
// the caller may not load. A lead form's questions are public to
// signed-in people, who submit leads to it; its leads are the owner's.
//
// # Sandbox only
//
// Every ad account is a sandbox account (is_sandbox, checked by the
// schema): nothing is billed and no money moves; spend is impressions at
// the sandbox price (SandboxCPM). A business holds at most 5.
//
// # Delivery
//
// Campaigns with a daily budget hold ads; the chat plugin's chats list
// asks ServeSponsoredAd (through the host, as the person) for its
// sponsored item, which picks the least-served eligible ad of the day and
// counts the impression in one statement. Clicks, custom audiences and
// conversions name a person only by the SHA-256 of an identifier (hash.go);
// conversions are deduplicated and attributed in conversions.go, and
// counted on the ad's daily row; clicks and conversions are pruned after
// their use (prune.go). In a development installation
// (SVC_DEV_SEED=1) me/adaccounts gives a business with none its sandbox
// account the first time its user lists them, which is how the development
// world's business gets one without the gateway knowing this schema.
//
// It is started by the gateway, never by hand; it reads the database URL
// from SVC_DATABASE_URL, which the gateway passes on.
package main
