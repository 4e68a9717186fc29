package sdk

import (
	"errors"
	"testing"

	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
)

func TestAPageOfRowsCarriesItsCursorsBothWays(t *testing.T) {
	key := func(n int64) int64 { return n }
	w, err := ParseWindow(2, "", "")
	if err != nil {
		t.Fatal(err)
	}
	rows, p := Page(w, []int64{9, 8, 7}, key) // newest first, one extra
	if len(rows) != 2 || rows[0] != 9 || !p.HasNext || p.HasPrevious || p.After != encodeCursor(8) {
		t.Fatalf("first page: %v %v", rows, p)
	}
	w, _ = ParseWindow(2, "", encodeCursor(7)) // before 7: read 8, 9 upwards
	rows, p = Page(w, []int64{8, 9}, key)
	if len(rows) != 2 || rows[0] != 9 || rows[1] != 8 || p.HasPrevious || !p.HasNext {
		t.Fatalf("previous page: %v %v", rows, p)
	}
	if _, err := ParseWindow(0, encodeCursor(1), encodeCursor(2)); err == nil {
		t.Fatal("after and before together were accepted")
	}
	if w, _ := ParseWindow(0, "", ""); w.Limit != DefaultPageSize {
		t.Fatalf("default limit %d", w.Limit)
	}
}

func TestACursorThisListDidNotHandOutIsRefusedNamingItsParameter(t *testing.T) {
	// "+7" and "007" name row 7 but are not what encodeCursor writes.
	for _, c := range []string{"Kzc", "MDA3", "MA", "LTE", "%%%"} {
		if _, err := ParseWindow(0, c, ""); !isInvalid(err, "after") {
			t.Errorf("after=%q: %v", c, err)
		}
		if _, err := ParseWindow(0, "", c); !isInvalid(err, "before") {
			t.Errorf("before=%q: %v", c, err)
		}
	}
}

func TestAForwardOnlyListRefusesABeforeCursorNamingIt(t *testing.T) {
	if _, err := ParseForwardWindow(0, "", encodeCursor(7)); !isInvalid(err, "before") {
		t.Fatalf("before: %v", err)
	}
	w, err := ParseForwardWindow(10, encodeCursor(7), "")
	if err != nil || w.After != 7 || w.Limit != 10 {
		t.Fatalf("after: %+v %v", w, err)
	}
}

// isInvalid reports whether err is the 400 code 100 naming field.
func isInvalid(err error, field string) bool {
	var e *Error
	return errors.As(err, &e) && e.HTTPStatus == 400 && e.Code == 100 && e.Field == field
}

// FuzzDecodeCursor: a cursor decodes to a positive key that encodes to
// exactly it, or is refused as invalid naming its parameter.
func FuzzDecodeCursor(f *testing.F) {
	for _, s := range []string{encodeCursor(1), encodeCursor(1 << 62), "", "MA", "LTE", "%%%", "Kzc", "MDA3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		key, err := decodeCursor("after", s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code != 100 || e.Field != "after" {
				t.Fatalf("decodeCursor(%q) = %v", s, err)
			}
			return
		}
		if key <= 0 {
			t.Fatalf("decodeCursor(%q) = %d", s, key)
		}
		if encodeCursor(key) != s {
			t.Fatalf("decodeCursor(%q) = %d, which is the cursor %q", s, key, encodeCursor(key))
		}
	})
}

// Set fills a list response's paging field, and refuses a message that has
// none: the plugin's proto would be wrong.
func TestPagingSetFillsTheListResponsesPagingField(t *testing.T) {
	t.Parallel()
	res := &bookv1.ListPostsResponse{}
	Paging{Before: "b", After: "a", HasNext: true}.Set(res)
	if p := res.GetPaging(); p.GetBefore() != "b" || p.GetAfter() != "a" || !p.GetHasNext() || p.GetHasPrevious() {
		t.Fatalf("paging = %v", p)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Set on a message without a paging field did not panic")
		}
	}()
	Paging{}.Set(&bookv1.Post{})
}
