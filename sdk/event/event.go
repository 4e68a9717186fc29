package event

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/svcplatform/svc/internal/outbox"
	"github.com/svcplatform/svc/sdk/event/internal/eventdb"
)

// Event is one thing that happened, as apps will receive it in the data
// field of a webhook.
type Event struct {
	// Type is the event type, e.g. "book.post.created".
	Type string
	// PageID is the Page the event belongs to; apps linked to it receive it.
	PageID string
	// AppID is set for events that belong to one app rather than a Page.
	AppID string
	// Data is the event's data object, marshalled to JSON.
	Data any
	// OrderingKey groups events that subscribers may ask to receive in
	// order (subscription ordering "conversation"): the events of one key
	// are delivered to such an app one at a time, in the order they were
	// emitted. The producer must serialise the transactions that emit
	// events of one key (svcchat emits under the conversation's row lock),
	// so that emit order is commit order. Empty: no ordering.
	OrderingKey string
	// UserID is the person the event is about, if any (the sender of a
	// message, the author of a thread): when they leave the platform, the
	// event and its deliveries are erased with their data (CONTRACT §16).
	// An event names one person at most; empty: it is about no one.
	UserID string
}

// Tx is what Emit writes with: a pgx.Tx (or a pool or connection, for an
// event that reports no change of its own).
type Tx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Emit inserts e into the outbox using tx, which should be the transaction
// that makes the change e reports. It returns the event id ("evt_…").
func Emit(ctx context.Context, tx Tx, e Event) (string, error) {
	r, err := outbox.New(e.Type, e.PageID, e.AppID, e.OrderingKey, e.Data)
	if err != nil {
		return "", err
	}
	err = eventdb.New(tx).InsertEvent(ctx, eventdb.InsertEventParams{
		ID: r.ID, Type: r.Type, PageID: optional(r.PageID), AppID: optional(r.AppID), Data: r.Data,
		OrderingKey: optional(r.OrderingKey), UserID: optional(e.UserID),
	})
	if err != nil {
		return "", fmt.Errorf("event %s: insert into outbox: %w", e.Type, err)
	}
	return r.ID, nil
}

// optional is s as a nullable column; only a value costs an allocation.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	p := new(string)
	*p = s
	return p
}

// NewID returns a fresh event id: "evt_" and 22 random base-62 characters.
func NewID() string { return outbox.NewID() }
