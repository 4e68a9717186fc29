// Package webhook delivers platform events to apps' HTTPS endpoints
// (CONTRACT §6) and serves the Graph nodes that manage them:
// app/{app_id}/subscriptions, app/{app_id}/deliveries,
// delivery/{delivery_id}/replay and app/{app_id}/test_event
// (svc.webhook.v1.WebhookService, registered on an in-process sdk.Plugin).
//
// # What it owns
//
// The tables core.webhook_subscriptions and core.webhook_deliveries (with
// each delivery's attempt log; migration 0020_webhook.sql),
// core.webhook_listeners (0103), and the dispatch queue core.outbox_pending
// (0267: an entry per undispatched event, made by a trigger on core.outbox,
// deleted by the dispatch). It reads core.apps (mode, and the sealed client
// secrets that sign: see Secrets below), core.page_links, core.app_products and
// core.app_scope_reviews (who is entitled to an event, below). It must not
// write any other table. The products emit events by inserting into
// core.outbox with sdk/event.Emit in the transaction of their
// change; of them it knows only the rule that names an event's product
// (core.event_product, migration 0101).
//
// # How an event travels
//
//  1. Dispatch. The dispatcher polls the queue core.outbox_pending, every 5 ms
//     while events come, backing off to every 100 ms when none do (the
//     outbox sends no NOTIFY: it would serialise every commit that writes an
//     event, see migration 0013); an idle poll only asks whether anything
//     is queued (OutboxQueued). One SQL statement takes up to 500
//     queued events with FOR UPDATE SKIP LOCKED, deletes their queue entries
//     (the outbox rows are only read) and inserts one delivery per (event,
//     app that should get it and subscribed to its type): a crash leaves
//     either all of it or none,
//     and two gateways never take the same event. An event goes to every
//     app entitled to its Page's events (next section) and to its own app
//     (app_id), each once, if subscribed to its type. The deliveries that this gateway's free
//     workers can take are created already leased to it (step 2) and go
//     straight to the workers, so a first attempt costs no claim.
//  2. Claim. A claimer leases due deliveries in batches, again with FOR
//     UPDATE SKIP LOCKED: the claim moves next_attempt_at past the lease and
//     stamps a random lease_token. While the lease holds no other gateway
//     can claim the row, so one attempt is never sent twice at once; when a
//     gateway dies mid-attempt its rows come back once the lease ends (and at
//     once when it stops gracefully: it releases them). A worker never starts
//     an attempt that could outlive its lease.
//  3. Attempt. A bounded pool of workers (32 by default) POSTs the body
//     {"id","type","created","api_version","app_id","page_id","data"} with
//     X-Svc-Signature-256 (sha256=<hex HMAC-SHA256 of the body keyed by the
//     app's client secret>), X-Svc-Event, X-Svc-Delivery (the delivery id,
//     the same on every retry) and X-Svc-Timestamp, and the Standard
//     Webhooks headers webhook-id (the event id), webhook-timestamp and
//     webhook-signature ("v1,<base64 HMAC-SHA256 of id.timestamp.body>",
//     one per signing secret, space-separated: during a client secret
//     rotation's overlap both the new and the previous secret sign, see
//     Secrets below). Any 2xx within the attempt timeout (10 s)
//     succeeds; redirects are not followed. 410 Gone disables the endpoint
//     at once and holds the delivery; 429 or 503 with Retry-After pauses
//     the endpoint (nothing is sent to it, the failed delivery is due again
//     then; bounded to [1 s, 1 h]).
//  4. Record. A recorder writes outcomes in batches, one statement per
//     batch: the attempt log, the delivery's new state (fenced by
//     lease_token, so a result from a lost lease is logged and changes
//     nothing else) and the endpoint's failure streak. Failed attempts are
//     retried after about 10 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h and
//     24 h (±20 % jitter), then the delivery fails. An endpoint whose every attempt failed for 24
//     hours is disabled (active false, disabled_at set); saving the
//     subscription again re-enables it. While it is disabled its
//     deliveries are held (status held, never attempted): after saving
//     the subscription again the app replays the time range it wants with
//     app/{app_id}/deliveries/replay ({"since","until","status"}); a held
//     delivery is then sent as it is, a failed one as a new delivery of the
//     same event.
//
// # Listeners (gateway listen)
//
// While an app has a listener, a developer's machine holding an outbound
// stream to this gateway (listen.go), its deliveries of the types the
// listener takes go there instead of to the endpoint: signed by the same
// code (Service.signed), pushed down the stream, and acknowledged with the
// local receiver's status; the acknowledgement is the attempt's outcome,
// recorded as above. core.webhook_listeners (migration 0103) makes the
// dispatcher create deliveries for a listening app even without a
// subscription.
//
// # Who gets an event
//
// Events reach only apps entitled to them (CONTRACT §15). An event about a
// Page goes to an app linked to the Page only if the link carries the
// event's product and, for a live app, only if App Review approved the
// scope that reads it: svcchat:read for svcchat's events, pages:read for
// any other event about a Page. The dispatcher's statement applies this
// rule (DispatchEvents, its recipient step), so no delivery exists for an
// app that is not entitled. The product comes from the event type, by
// core.event_product: a plugin's name is the product of its events
// (book.post.created is book's) and page.message.* are svcchat's; only the
// products an app can be granted (svcchat, book, wearables,
// commerce; ads and lenses emit no Page events) are checked, so
// the events of a plugin that is no such product (social, partners'
// plugins) need only the link (and pages:read for a live app). An app
// event (app_id, no Page) reaches its own app whatever its links and
// scopes.
//
// Subscribing is refused (400, code 100, naming events) for an event type
// of a product the app does not have: one neither enabled on the app nor
// carried by any of its Page links. docs/design/events.md gives the reasons.
//
// # Ordered delivery
//
// An event may carry an ordering key (event.Event.OrderingKey; svcchat
// sets its conversation). A subscription saved with ordering
// "conversation" gets such events one at a time per key, in outbox order:
// the dispatcher copies key and outbox seq onto the delivery and never
// leases it at once, and the claim takes an ordered delivery only when no
// older delivery of the same app and key is pending (in flight, or waiting
// for a retry) and no older event of the key is still undispatched (a
// dispatch of another gateway not yet committed). A delivery that keeps
// failing so holds back its own key until it succeeds or fails for good;
// other keys flow. The producer must emit the events of one key in
// serialised transactions, so that outbox order is their order.
//
// Delivery is at least once: a gateway stopped or killed mid-attempt sends
// that attempt again, with the same X-Svc-Delivery and event id, and
// receivers deduplicate by id. Without ordering, deliveries run in
// parallel and retries come later, so an app may receive events out of
// order; created (and svcchat's data.sequence) orders them.
//
// # Who may call the Graph nodes
//
// Who may act on an app is the platform's one rule (CONTRACT §4), declared
// on the methods as access.app_role and enforced by the gateway (auth); a
// delivery named only by its id is checked by the same rule through
// Options.Guard. The app's own key may do everything; a user needs a role
// on the app's team: Admin or Developer to manage subscriptions, replay or
// send test events, any role (Tester too) to read the delivery log. Anyone
// else is refused with HTTP 403, code 200, error_subcode 2069004 (CONTRACT
// §3, "the role on the app's team does not allow it"); an unknown app is not
// found (404, code 100, subcode 33).
//
// # Why a table and not River
//
// River (riverqueue/river, InsertTx) would give the same transactional
// enqueue and SKIP LOCKED claiming. We keep our own table because the
// delivery is itself the product here: the console lists it by app with
// status and event filters, shows every attempt, replays it, and the
// dispatcher fans one event out to N apps, and leases what it can send at
// once, in one INSERT … SELECT. With River each of those would read
// River's job rows (args and errors as JSON) or keep a second log beside
// them, a first attempt would cost a separate job fetch, and the project
// would take a dependency with its own schema and migrations for one queue.
// The queue part is small: one partial index on next_attempt_at, one claim
// statement, one batched completion.
//
// # Durability of the bookkeeping
//
// The dispatcher, the claimer and the recorder write on a few connections
// of their own with synchronous_commit off, so no delivery waits for a WAL
// flush. A database crash may lose the last moments of that bookkeeping,
// and that only makes the affected events be dispatched or attempted
// again (duplicates, which at-least-once allows), never lost: the events
// themselves were committed durably by their producers.
//
// # Secrets and the network
//
// The signing key is the app's client secret. Apps are also shown it as
// Standard Webhooks libraries take it, StandardKey ("whsec_" and its
// base64), which they decode back to the same bytes; docs/WEBHOOKS.md tells
// receivers how to verify both signatures. The secret has one home, core.apps,
// where identity keeps it (and the previous one while a rotation's overlap
// lasts) sealed with package secretbox (AES-256-GCM under the master key,
// bound to the app) besides its hash. The dispatch and the claim select the
// sealed values with each delivery they lease, and the attempt opens them
// with identity.SealedSecrets.Open, so signing costs no query of its own. An
// app whose secret was never sealed is not sent to: each attempt fails saying
// to rotate the client secret. Secrets, verify tokens and callback query
// strings are never logged.
//
// Callbacks must use HTTPS, except plain HTTP to loopback for apps in
// development mode. Private (RFC 1918, unique-local, shared 100.64/10) and
// link-local addresses are refused unless Options.AllowPrivateNetworks is
// set; loopback only for development apps; unspecified addresses only when
// both apply (0.0.0.0 reaches the local host); cloud metadata addresses
// (169.254.169.254, fd00:ec2::254, …), multicast and reserved ranges
// always. The rules are checked when a subscription is saved and again on
// every connection, in the dialer's Control hook, on the address actually
// dialled, so a name that later resolves elsewhere (DNS rebinding) is still
// refused. The address rules and the dialer are internal/netguard, the
// platform's one outbound guard, shared with the reels media check.
// Development and live apps use separate connection pools, so a
// connection one may open is never reused for the other. No proxy is used.
package webhook
