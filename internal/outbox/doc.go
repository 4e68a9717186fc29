// Package outbox makes the rows of the transactional outbox (core.outbox):
// the one place where an event becomes what the outbox stores, its id
// ("evt_…"), type, Page or app, JSON data and ordering key.
//
// sdk/event.Emit inserts such a row with a statement of its own. A plugin
// that writes its change and its events in one statement, to pay one round
// trip (book's post, svcchat's message with the events announcing it),
// passes the same row as that statement's parameters: the event is made
// here in both cases, never restated in SQL.
//
// It must not know any event type or any plugin, and it writes nothing: the
// caller's statement runs in the caller's transaction.
package outbox
