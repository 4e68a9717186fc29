package sdk

import (
	"encoding/base64"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// The page sizes of Graph list reads (CONTRACT §2): DefaultPageSize when a
// read asks for none, at most MaxPageSize.
const (
	DefaultPageSize = 25
	MaxPageSize     = 100
)

// Window is one page of a Graph list read keyed by a growing int64 (an id
// or a sequence number): at most Limit rows after or before a cursor. Fetch
// Limit+1 rows in the list's order (or, with Before, in reverse order from
// the cursor) and hand them to Page.
type Window struct {
	// Limit is the page size (DefaultPageSize when the request gave none).
	Limit int32
	// After and Before are the decoded cursors; 0 when absent.
	After, Before int64
}

// ParseWindow reads a list request's limit, after and before. A cursor that
// this list did not hand out, or both cursors at once, is refused naming the
// parameter.
func ParseWindow(limit int32, after, before string) (Window, error) {
	w := Window{Limit: limit}
	if w.Limit <= 0 {
		w.Limit = DefaultPageSize
	}
	if after != "" && before != "" {
		return w, Invalid("after", "Invalid parameter: give after or before, not both.")
	}
	var err error
	if after != "" {
		if w.After, err = decodeCursor("after", after); err != nil {
			return w, err
		}
	}
	if before != "" {
		if w.Before, err = decodeCursor("before", before); err != nil {
			return w, err
		}
	}
	return w, nil
}

// ParseForwardWindow is ParseWindow for a list that pages forward only
// (its order has no cheap reverse): a before cursor is refused naming it.
func ParseForwardWindow(limit int32, after, before string) (Window, error) {
	w, err := ParseWindow(limit, after, "")
	if err == nil && before != "" {
		err = Invalid("before", "Invalid parameter: this list pages forward only; use after.")
	}
	return w, err
}

// Fetch is how many rows to read: one more than the page, to tell whether
// there is another.
func (w Window) Fetch() int32 { return w.Limit + 1 }

// Paging is where a page of a list read stands in the list: the cursors of
// its first and last rows and whether rows lie before and after it.
type Paging struct {
	Before, After        string
	HasPrevious, HasNext bool
}

// Set puts p in the list response res: its field paging, of type
// svc.plugin.v1.Paging (import svc/plugin/v1/options.proto), which the Graph
// renders as the "paging" object. It panics when res has no such field: a
// list response without one is a mistake in the plugin's proto.
func (p Paging) Set(res proto.Message) {
	m := res.ProtoReflect()
	fd := m.Descriptor().Fields().ByName("paging")
	if fd == nil || fd.IsList() || fd.Message() == nil || fd.Message().FullName() != pagingName {
		panic(fmt.Sprintf("sdk: %s has no field paging of type %s", m.Descriptor().FullName(), pagingName))
	}
	pp := &pluginv1.Paging{Before: p.Before, After: p.After, HasPrevious: p.HasPrevious, HasNext: p.HasNext}
	m.Set(fd, protoreflect.ValueOfMessage(pp.ProtoReflect()))
}

// pagingName is the message type of a list response's paging field.
var pagingName = (*pluginv1.Paging)(nil).ProtoReflect().Descriptor().FullName()

// Page trims rows read for w to the page, puts them in list order and
// returns their paging, which Set puts in the list response. key gives a
// row's cursor value.
func Page[T any](w Window, rows []T, key func(T) int64) ([]T, Paging) {
	more := len(rows) > int(w.Limit)
	if more {
		rows = rows[:w.Limit]
	}
	var paging Paging
	if w.Before != 0 {
		// Read away from the cursor in reverse: put them back in list order.
		for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
			rows[i], rows[j] = rows[j], rows[i]
		}
		paging.HasPrevious, paging.HasNext = more, true
	} else {
		paging.HasNext, paging.HasPrevious = more, w.After != 0
	}
	if len(rows) == 0 {
		paging.HasNext, paging.HasPrevious = false, false
		return rows, paging
	}
	paging.Before = encodeCursor(key(rows[0]))
	paging.After = encodeCursor(key(rows[len(rows)-1]))
	return rows, paging
}

// encodeCursor makes an opaque cursor of a row key: base64url of its
// decimal form.
func encodeCursor(key int64) string {
	var digits [20]byte
	return base64.RawURLEncoding.EncodeToString(strconv.AppendInt(digits[:0], key, 10))
}

// decodeCursor reads a cursor made by encodeCursor; anything else (a key
// encodeCursor would not have written, such as "+7" or "007", too) is
// refused naming field.
func decodeCursor(field, s string) (int64, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err == nil {
		if key, ok := ParseID(string(b)); ok {
			return key, nil
		}
	}
	return 0, Invalid(field, "Invalid parameter: %s is not a cursor from this list.", field)
}
