package main

import (
	"errors"
	"testing"

	"github.com/svcplatform/svc/sdk"
)

func TestReelTransitions(t *testing.T) {
	type want struct {
		to   ReelStatus
		emit bool
		bad  bool
	}
	rows := []struct {
		rule string
		from ReelStatus
		on   ReelTrigger
		want want
	}{
		{"a processing reel whose video passes becomes ready and emits social.reel.ready", Processing, Accepted, want{to: Ready, emit: true}},
		{"a processing reel whose video is refused becomes error", Processing, Rejected, want{to: Failed}},
		{"a processing reel whose video cannot be reached stays processing for a retry", Processing, Unreachable, want{to: Processing}},
		{"a processing reel unreachable on the last attempt becomes error", Processing, GaveUp, want{to: Failed}},
		{"a ready reel is never checked again", Ready, Accepted, want{bad: true}},
		{"a ready reel cannot fail afterwards", Ready, Rejected, want{bad: true}},
		{"an error reel cannot become ready", Failed, Accepted, want{bad: true}},
		{"an error reel is not retried", Failed, Unreachable, want{bad: true}},
	}
	for _, r := range rows {
		t.Run(r.rule, func(t *testing.T) {
			to, emit, err := reelTransition(r.from, r.on)
			if r.want.bad {
				var e *sdk.Error
				if !errors.As(err, &e) || e.HTTPStatus != 409 || to != r.from || emit {
					t.Fatalf("got %s emit=%v err=%v, want a 409 and no change", to, emit, err)
				}
				return
			}
			if err != nil || to != r.want.to || emit != r.want.emit {
				t.Fatalf("got %s emit=%v err=%v, want %s emit=%v", to, emit, err, r.want.to, r.want.emit)
			}
		})
	}
	// Every row of the table in code is checked above.
	for _, rule := range reelRules {
		found := false
		for _, r := range rows {
			found = found || (r.from == rule.from && r.on == rule.on && !r.want.bad)
		}
		if !found {
			t.Errorf("rule %s on %s has no test row", rule.from, rule.on)
		}
	}
}
