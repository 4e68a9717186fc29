// Package seed creates the development world of CONTRACT §10 on the first
// start of an empty database: an owner, a consumer and a staff user with
// random passwords; a published Page with chat surfacing on, the inbox
// merge linked and inbox automation off; an app in development mode with
// svcchat enabled, the Page linked, a loopback redirect URI, the owner as
// team Admin and the consumer as Test User; an app API key. It writes them,
// with the admin token, to <data-dir>/dev-credentials.json (mode 0600).
//
// The seed runs once per installation: core.installation.dev_seeded is
// read under a row lock in the transaction that creates the world, so two
// gateways starting together seed once. It never runs with --no-dev-seed.
//
// Once plugins serve, Sponsored gives the world its sponsored item as an
// advertiser makes one: a campaign and an ad made as the owner through the
// ads plugin's methods (the call path the gateway hands it).
//
// seed only calls identity, auth and that call path; it must not be
// imported by anything but the gateway's wiring (and tests).
package seed
