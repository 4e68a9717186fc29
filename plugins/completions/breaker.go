package main

import (
	"fmt"
	"sync"
	"time"
)

// breakerState is an upstream's circuit breaker state.
type breakerState int

const (
	// closed: calls go through; failures are counted.
	closed breakerState = iota
	// open: the upstream is out until its cooldown ends.
	open
	// halfOpen: the cooldown ended; one call probes the upstream.
	halfOpen
)

func (s breakerState) String() string {
	switch s {
	case closed:
		return "healthy"
	case open:
		return "cooling_down"
	case halfOpen:
		return "probing"
	}
	return fmt.Sprintf("breakerState(%d)", int(s))
}

// breakerEvent is what happens to an upstream.
type breakerEvent int

const (
	// success: a call got a usable answer.
	success breakerEvent = iota
	// failure: a call failed in a way worth retrying elsewhere (429, 5xx,
	// connection error, time-out).
	failure
	// cooled: a call is about to be made after the cooldown ended.
	cooled
)

// failureCount qualifies a failure event: whether the consecutive failures
// counted so far, this one included, reach the breaker's threshold.
type failureCount int

const (
	anyCount failureCount = iota
	belowThreshold
	atThreshold
)

// breakerRow is one row of the transition table: in state From, on event
// On, with the failure count When, the breaker goes to To; Cooldown says
// whether a new cooldown starts.
type breakerRow struct {
	From     breakerState
	On       breakerEvent
	When     failureCount
	To       breakerState
	Cooldown bool
}

// breakerTable is every transition of the breaker. A pair (state, event)
// absent from it cannot happen (an open breaker admits no call, so sees no
// success or failure) and leaves the state unchanged.
var breakerTable = []breakerRow{
	{From: closed, On: success, To: closed},
	{From: closed, On: failure, When: belowThreshold, To: closed},
	{From: closed, On: failure, When: atThreshold, To: open, Cooldown: true},
	{From: open, On: cooled, To: halfOpen},
	{From: halfOpen, On: success, To: closed},
	{From: halfOpen, On: failure, To: open, Cooldown: true},
}

// transition is the breaker's one transition function: it finds the row of
// breakerTable for (from, on, count).
func transition(from breakerState, on breakerEvent, count failureCount) (to breakerState, cooldown bool) {
	for _, r := range breakerTable {
		if r.From == from && r.On == on && (r.When == anyCount || r.When == count) {
			return r.To, r.Cooldown
		}
	}
	return from, false
}

// breaker guards one upstream. It also keeps Retry-After: an upstream that
// asked to be left alone until some time is not called before it, whatever
// the state.
type breaker struct {
	threshold int           // consecutive failures that open it
	cooldown  time.Duration // how long it stays open

	mu        sync.Mutex
	state     breakerState
	failures  int
	until     time.Time // end of the cooldown (open)
	notBefore time.Time // Retry-After
	lastError string
	probing   bool // a half-open probe is in flight
}

// admit tells whether a call may go to the upstream now; when it may not,
// it returns when it may.
func (b *breaker) admit(now time.Time) (ok bool, retryAt time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Before(b.notBefore) {
		return false, b.notBefore
	}
	switch b.state {
	case open:
		if now.Before(b.until) {
			return false, b.until
		}
		b.state, _ = transition(b.state, cooled, anyCount)
		b.probing = true
		return true, time.Time{}
	case halfOpen:
		if b.probing {
			return false, now.Add(b.cooldown / 4)
		}
		b.probing = true
	}
	return true, time.Time{}
}

// record applies the outcome of an admitted call.
func (b *breaker) record(now time.Time, ok bool, errText string, retryAfter time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ev := success
	if !ok {
		ev = failure
		b.failures++
		b.lastError = errText
	} else {
		b.failures = 0
	}
	if retryAfter > 0 {
		b.notBefore = now.Add(retryAfter)
	}
	count := belowThreshold
	if b.failures >= b.threshold {
		count = atThreshold
	}
	var start bool
	b.state, start = transition(b.state, ev, count)
	b.probing = false
	if start {
		b.until = now.Add(b.cooldown)
	}
}

// release gives back an admitted call that was never made (the client
// left first): a half-open breaker may then admit another probe.
func (b *breaker) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
}

// upstreamState is what operators may see of an upstream (issue 19's
// admin view reads it).
type upstreamState struct {
	State     string
	Until     time.Time
	LastError string
}

func (b *breaker) snapshot() upstreamState {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := upstreamState{State: b.state.String(), LastError: b.lastError}
	if b.state == open {
		s.Until = b.until
	}
	if b.notBefore.After(s.Until) {
		s.Until = b.notBefore
	}
	return s
}
