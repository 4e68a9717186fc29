package main

import (
	"errors"
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
		{"the end of the cooldown sends a probe", open, cooled, anyCount, halfOpen, false},
		{"a probe that generates its token brings it back", halfOpen, probeSucceeded, anyCount, closed, false},
		{"a failed probe takes it out again", halfOpen, probeFailed, anyCount, open, true},
		{"an open breaker ignores late outcomes of calls made before it opened", open, success, anyCount, open, false},
		{"a probing breaker ignores late failures of clients' calls", halfOpen, failure, atThreshold, halfOpen, false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			to, cd := transition(tc.from, tc.on, tc.count)
			if to != tc.to || cd != tc.cooldown {
				t.Fatalf("got %v %v, want %v %v", to, cd, tc.to, tc.cooldown)
			}
		})
	}
}

func TestBreakerCoolsDownThenProbesWithAGenerationBeforeLettingCallsIn(t *testing.T) {
	t.Parallel()
	var scheduled []func()
	probeErr := errors.New("503 Service Unavailable")
	probes := 0
	b := &breaker{threshold: 2, cooldown: time.Minute,
		afterFunc: func(d time.Duration, f func()) {
			if d != time.Minute {
				t.Errorf("probe scheduled after %v, want the cooldown", d)
			}
			scheduled = append(scheduled, f)
		},
		probe: func() error { probes++; return probeErr }}
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
	if s := b.snapshot(); s.State != "cooling_down" || !s.Until.Equal(now.Add(time.Minute)) || s.LastError != "500" {
		t.Fatalf("open: %+v", s)
	}
	if ok, _ := b.admit(now.Add(2 * time.Minute)); ok {
		t.Fatal("a client's call went through before any probe")
	}
	// The cooldown ends; the probe fails: out again, a new probe scheduled.
	scheduled[0]()
	if s := b.snapshot(); probes != 1 || s.State != "cooling_down" || len(scheduled) != 2 || s.LastError != "probe: 503 Service Unavailable" {
		t.Fatalf("after a failed probe: %+v, %d probes, %d scheduled", s, probes, len(scheduled))
	}
	probeErr = nil
	scheduled[1]()
	if s := b.snapshot(); s.State != "healthy" {
		t.Fatalf("after a good probe: %+v", s)
	}
	if ok, _ := b.admit(time.Now()); !ok {
		t.Fatal("a healthy upstream was refused after its probe")
	}
	later := time.Now()
	b.record(later, false, "429", 30*time.Second)
	if ok, at := b.admit(later.Add(29 * time.Second)); ok || !at.Equal(later.Add(30*time.Second)) {
		t.Fatal("Retry-After not respected")
	}
}
