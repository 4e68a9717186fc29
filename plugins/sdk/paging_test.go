package sdk

import (
	"errors"
	"testing"
)

func TestAPageOfRowsCarriesItsCursorsBothWays(t *testing.T) {
	key := func(n int64) int64 { return n }
	w, err := ParseWindow(2, "", "")
	if err != nil {
		t.Fatal(err)
	}
	rows, p := Page(w, []int64{9, 8, 7}, key) // newest first, one extra
	if len(rows) != 2 || rows[0] != 9 || !p.GetHasNext() || p.GetHasPrevious() || p.GetAfter() != EncodeCursor(8) {
		t.Fatalf("first page: %v %v", rows, p)
	}
	w, _ = ParseWindow(2, "", EncodeCursor(7)) // before 7: read 8, 9 upwards
	rows, p = Page(w, []int64{8, 9}, key)
	if len(rows) != 2 || rows[0] != 9 || rows[1] != 8 || p.GetHasPrevious() || !p.GetHasNext() {
		t.Fatalf("previous page: %v %v", rows, p)
	}
	if _, err := ParseWindow(0, EncodeCursor(1), EncodeCursor(2)); err == nil {
		t.Fatal("after and before together were accepted")
	}
	if w, _ := ParseWindow(0, "", ""); w.Limit != DefaultPageSize {
		t.Fatalf("default limit %d", w.Limit)
	}
}

// FuzzDecodeCursor: a cursor decodes to a positive key that encodes back to
// it, or is refused as invalid naming its parameter.
func FuzzDecodeCursor(f *testing.F) {
	for _, s := range []string{EncodeCursor(1), EncodeCursor(1 << 62), "", "MA", "LTE", "%%%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		key, err := DecodeCursor("after", s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code != 100 || e.Field != "after" {
				t.Fatalf("DecodeCursor(%q) = %v", s, err)
			}
			return
		}
		if key <= 0 {
			t.Fatalf("DecodeCursor(%q) = %d", s, key)
		}
		if _, err := DecodeCursor("after", EncodeCursor(key)); err != nil {
			t.Fatalf("round trip of %d: %v", key, err)
		}
	})
}
