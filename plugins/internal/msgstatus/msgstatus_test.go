package msgstatus

import (
	"slices"
	"testing"
)

// TestMessageStatusTableRowByRow checks every row of the table and that
// the pairs it leaves out change nothing.
func TestMessageStatusTableRowByRow(t *testing.T) {
	t.Parallel()
	type row struct {
		rule    string
		from    Status
		trigger Trigger
		to      Status
		changed bool
	}
	cases := []row{
		{"a sent message becomes delivered when the recipient's app fetches it", Sent, Fetched, Delivered, true},
		{"a sent message read before any fetch becomes read", Sent, MarkedRead, Read, true},
		{"a delivered message becomes read when the recipient marks it read", Delivered, MarkedRead, Read, true},
		{"a sent message can fail", Sent, Undeliverable, Failed, true},
		{"a delivered message does not fail: it reached the recipient's app", Delivered, Undeliverable, Delivered, false},
		{"a second fetch changes nothing", Delivered, Fetched, Delivered, false},
		{"a fetch never moves a read message back", Read, Fetched, Read, false},
		{"reading twice changes nothing", Read, MarkedRead, Read, false},
		{"a read message does not fail", Read, Undeliverable, Read, false},
		{"a failed message stays failed when fetched", Failed, Fetched, Failed, false},
		{"a failed message stays failed when read", Failed, MarkedRead, Failed, false},
		{"failing twice changes nothing", Failed, Undeliverable, Failed, false},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			if to, changed := Next(c.from, c.trigger); to != c.to || changed != c.changed {
				t.Fatalf("Next(%s, %s) = %s, %v; want %s, %v", c.from, c.trigger, to, changed, c.to, c.changed)
			}
		})
	}
	t.Run("every row of the table is tested", func(t *testing.T) {
		for _, r := range Table {
			if !slices.ContainsFunc(cases, func(c row) bool { return c.from == r.From && c.trigger == r.Trigger && c.changed }) {
				t.Errorf("no case for %s on %s", r.From, r.Trigger)
			}
		}
	})
	t.Run("MovedBy moves exactly the statuses Next moves", func(t *testing.T) {
		for _, trig := range []Trigger{Fetched, MarkedRead, Undeliverable} {
			from, to := MovedBy(trig)
			for _, st := range []Status{Sent, Delivered, Read, Failed} {
				want, changed := Next(st, trig)
				if slices.Contains(from, string(st)) != changed || (changed && want != to) {
					t.Errorf("%s from %s: MovedBy (%v → %s) disagrees with Next (%s, %v)", trig, st, from, to, want, changed)
				}
			}
		}
	})
}
