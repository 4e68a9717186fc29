// Package event writes platform events into the transactional outbox
// (core.outbox). Call Emit with the same transaction that makes the change
// the event reports: the event then exists exactly when the change
// committed, and the gateway's webhook dispatcher delivers it. The gateway
// and every plugin, ours and partners', emit events through here; the
// event's row is made by the platform's one outbox writer (internal/outbox),
// which our plugins that write a change and its events in one statement
// use too.
package event
