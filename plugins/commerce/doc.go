// Command commerce is the commerce product plugin (CONTRACT §12): shops
// ("maisons"), their catalogs, and checkout, which turns a cart into an
// order waiting for payment. It owns the commerce schema (migrated at
// start) and serves svc.commerce.v1.CommerceService to the gateway.
//
// # Catalogs and shops
//
// A business's catalogs (business/<id>/catalogs) hold products uploaded one
// by one or by items_batch (upserts by retailer_id, a bad item refused
// alone); product sets are saved filters evaluated when read. A shop is
// opened on a Page (page/<id>/maisons) and sells from one catalog.
// A catalog belongs to a business of the core (business/<id>): its admins
// create catalogs (the method declares business_role, so the gateway
// decides), and anyone with a role on it works on them, which the plugin
// asks the gateway (Host BusinessAccess); the plugin never compares roles.
// docs/DECISIONS.md (2026-11-27) gives the choices.
//
// # Checkout and orders
//
// maison/<id>/checkout prices each line from the shop's catalog in the
// transaction that stores the order, in the shop's currency and its minor
// units, and answers {order_id, status:"pending_payment", total}. An order
// then moves by the transition table of orders.go (sandbox payment,
// shipment, cancellation, refund); placing it and each move emit
// commerce.order.updated about the shop's Page in the same transaction.
// No money moves here. Idempotency is the
// gateway's: a Graph write with an Idempotency-Key already used by the same
// caller answers the first response without calling the plugin again
// (CONTRACT §1), so a retried checkout never orders twice.
//
// # Development shop
//
// In a development installation (SVC_DEV_SEED=1) the plugin seeds one shop,
// Maison Demo (id 7000000001, EUR), with three products that can be ordered
// (7100000001 to 7100000003) and one that is sold out (7100000004). Their
// ids are fixed so that guides and tests can name them; shops made later
// take ids from 7000000101.
//
// It is started by the gateway, never by hand; it reads the database URL
// from SVC_DATABASE_URL, which the gateway passes on.
package main
