package main

import (
	"testing"
	"time"
)

// Every row of breakerTable, checked through transition.
func TestBreakerTransitions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule     string
		from     breakerState
		on       breakerEvent
		count    failureCount
		to       breakerState
		cooldown bool
	}{
		{"a success keeps a healthy upstream healthy", closed, success, anyCount, closed, false},
		{"a failure below the threshold keeps it in", closed, failure, belowThreshold, closed, false},
		{"the failure that reaches the threshold takes it out", closed, failure, atThreshold, open, true},
		{"the end of the cooldown lets one probe through", open, cooled, anyCount, halfOpen, false},
		{"a successful probe brings it back", halfOpen, success, anyCount, closed, false},
		{"a failed probe takes it out again", halfOpen, failure, belowThreshold, open, true},
		{"an open breaker ignores outcomes it cannot see", open, success, anyCount, open, false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			to, cd := transition(tc.from, tc.on, tc.count)
			if to != tc.to || cd != tc.cooldown {
				t.Fatalf("got %v %v, want %v %v", to, cd, tc.to, tc.cooldown)
			}
		})
	}
}

func TestBreakerCoolsDownProbesOnceAndRespectsRetryAfter(t *testing.T) {
	t.Parallel()
	b := &breaker{threshold: 2, cooldown: time.Minute}
	now := time.Unix(1000, 0)
	for range 2 {
		if ok, _ := b.admit(now); !ok {
			t.Fatal("a healthy upstream was refused")
		}
		b.record(now, false, "500", 0)
	}
	if ok, at := b.admit(now.Add(time.Second)); ok || !at.Equal(now.Add(time.Minute)) {
		t.Fatalf("open breaker admitted a call (retry at %v)", at)
	}
	later := now.Add(time.Minute)
	if ok, _ := b.admit(later); !ok {
		t.Fatal("no probe after the cooldown")
	}
	if ok, _ := b.admit(later); ok {
		t.Fatal("a second probe while the first is in flight")
	}
	b.record(later, true, "", 0)
	if s := b.snapshot(); s.State != "healthy" {
		t.Fatalf("after a good probe: %+v", s)
	}
	b.record(later, false, "429", 30*time.Second)
	if ok, at := b.admit(later.Add(29 * time.Second)); ok || !at.Equal(later.Add(30*time.Second)) {
		t.Fatal("Retry-After not respected")
	}
}
