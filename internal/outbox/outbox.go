package outbox

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
)

// Row is one event as core.outbox stores it. An empty PageID, AppID,
// OrderingKey or UserID is NULL in its column (a statement that takes them as
// parameters maps the empty string to NULL with NULLIF).
type Row struct {
	// ID is the event id, "evt_" and 22 base-62 characters.
	ID string
	// Type is the event type, e.g. "book.post.created".
	Type string
	// PageID is the Page the event belongs to; "" for an app's event.
	PageID string
	// AppID is the app an app's event belongs to; "" for a Page's.
	AppID string
	// Data is the event's data object, JSON.
	Data []byte
	// OrderingKey groups events delivered in order; "" for none.
	OrderingKey string
	// UserID is the person the event is about (its subject), whose
	// leaving erases it and its deliveries; "" for none. New leaves it
	// empty: the caller sets it.
	UserID string
}

// New makes the row of a new event: a fresh id, and data marshalled to
// JSON.
func New(typ, pageID, appID, orderingKey string, data any) (Row, error) {
	if typ == "" {
		return Row{}, errors.New("event: type is required")
	}
	b, err := json.Marshal(data)
	if err != nil {
		return Row{}, fmt.Errorf("event %s: marshal data: %w", typ, err)
	}
	return Row{ID: NewID(), Type: typ, PageID: pageID, AppID: appID, Data: b, OrderingKey: orderingKey}, nil
}

const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewID returns a fresh event id: "evt_" and 22 random base-62 characters.
func NewID() string {
	var b [4 + 22]byte
	copy(b[:], "evt_")
	r := b[4:]
	_, _ = rand.Read(r) // crypto/rand never fails on Linux
	for i := range r {
		// 256 is not a multiple of 62; the bias is negligible for ids.
		r[i] = idAlphabet[int(r[i])%len(idAlphabet)]
	}
	return string(b[:])
}
