// Package event writes platform events into the transactional outbox
// (core.outbox). Call Emit with the same transaction that makes the change
// the event reports: the event then exists exactly when the change
// committed, and the gateway's webhook dispatcher delivers it. The gateway
// and every plugin, ours and partners', emit events only through here.
package event
