// Command wearables is the wearables product plugin (CONTRACT §8): apps push
// cards to the device a user paired, the device holds a stream open and
// acknowledges each card, and the wearer confirms the card's actions. It
// owns the wearables schema (migrated at start), serves
// svc.wearables.v1.WearablesService and DeviceService to the gateway, and
// emits wearables.card.delivered and wearables.action.confirmed in the
// transaction of the change they report.
//
// # How a card travels
//
//  1. Push. POST /api/v1/platform/wearables/push with the wearer's user
//     token (wearables:push) inserts the card as queued, expiring in 24
//     hours, and answers 202 at once. A user keeps at most 100 waiting
//     cards: a newer card displaces the oldest, which expires (a wearer
//     wants what is current, and the pushing app cannot fix an offline
//     device).
//  2. Delivery, off the request path. The device's open StreamCards call
//     (in whichever plugin process holds it) is woken at once by a push in
//     its process and polls every second for pushes made through other
//     processes; it sends every waiting card it has not sent yet.
//  3. Acknowledgement. AckCard marks the card delivered and emits
//     wearables.card.delivered {cardId,userId,deviceId} in one transaction.
//     A card not acknowledged is sent again on the next connection.
//  4. Action. POST /api/mobile/glasses/partner/action from the wearer's
//     session confirms one of the card's actions and emits
//     wearables.action.confirmed {cardId,actionId,userId}.
//
// Both events are user-level (no Page): they go to the app that pushed the
// card (event app_id), see docs/design/products.md.
//
// # The simulated device
//
// When the gateway runs with the development seed (SVC_DEV_SEED=1), a push
// to a user who has paired no device pairs a simulated one, which the
// plugin acknowledges by itself, so the seeded consumer's cards are
// delivered with no glasses connected. The first real device that connects
// (or acknowledges) for that user replaces the simulated one for good;
// cards then wait for it. Without the seed no device is simulated.
//
// The state of a card is one transition table (cardstate.go).
//
// It is started by the gateway, never by hand; it reads the database URL
// from SVC_DATABASE_URL, which the gateway passes on.
package main
