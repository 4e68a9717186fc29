package msgwindow

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

func TestTheWindowIsOpenOnlyUntilItEnds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rule    string
		expires pgtype.Timestamptz
		open    bool
	}{
		{"a window that never opened is closed", pgtype.Timestamptz{}, false},
		{"a window ending later is open", pgtype.Timestamptz{Time: time.Now().Add(time.Minute), Valid: true}, true},
		{"a window that ended is closed", pgtype.Timestamptz{Time: time.Now().Add(-time.Second), Valid: true}, false},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			if got := Open(c.expires); got != c.open {
				t.Fatalf("Open(%v) = %v, want %v", c.expires, got, c.open)
			}
		})
	}
}
