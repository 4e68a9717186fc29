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
	// halfOpen: the cooldown ended; a probe (a real generation of one
	// token, not a client's call) is in flight. Clients' calls still go
	// elsewhere until it succeeds.
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
	// connection error, time-out, a stream that stalled or broke).
	failure
	// cooled: the cooldown ended; a probe is sent.
	cooled
	// probeSucceeded: the probe generated its token.
	probeSucceeded
	// probeFailed: the probe did not.
	probeFailed
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
// whether a new cooldown starts (and, at its end, a probe).
type breakerRow struct {
	From     breakerState
	On       breakerEvent
	When     failureCount
	To       breakerState
	Cooldown bool
}

// breakerTable is every transition of the breaker. A pair (state, event)
// absent from it leaves the state unchanged: a call admitted before the
// breaker opened may finish after, and its outcome says nothing the probe
// will not.
var breakerTable = []breakerRow{
	{From: closed, On: success, To: closed},
	{From: closed, On: failure, When: belowThreshold, To: closed},
	{From: closed, On: failure, When: atThreshold, To: open, Cooldown: true},
	{From: open, On: cooled, To: halfOpen},
	{From: halfOpen, On: probeSucceeded, To: closed},
	{From: halfOpen, On: probeFailed, To: open, Cooldown: true},
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
	// probe makes the upstream generate one token; nil: the cooldown's end
	// closes the breaker by itself (tests of the table alone).
	probe func() error
	// afterFunc schedules the probe; time.AfterFunc, or a test's clock.
	afterFunc func(time.Duration, func())

	mu        sync.Mutex
	state     breakerState
	failures  int
	until     time.Time // end of the cooldown (open)
	notBefore time.Time // Retry-After
	lastError string
}

// admit tells whether a call may go to the upstream now; when it may not,
// it returns when it may (at the earliest).
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
		return false, now.Add(b.cooldown / 4) // the probe is due
	case halfOpen:
		return false, now.Add(b.cooldown / 4)
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
	b.apply(now, ev)
}

// apply moves the breaker by one event; b.mu is held. A new cooldown
// schedules the probe at its end.
func (b *breaker) apply(now time.Time, ev breakerEvent) {
	count := belowThreshold
	if b.failures >= b.threshold {
		count = atThreshold
	}
	var start bool
	b.state, start = transition(b.state, ev, count)
	if !start {
		return
	}
	b.until = now.Add(b.cooldown)
	after := b.afterFunc
	if after == nil {
		after = func(d time.Duration, f func()) { time.AfterFunc(d, f) }
	}
	after(b.cooldown, b.runProbe)
}

// runProbe ends a cooldown: it sends the probe and applies its outcome.
func (b *breaker) runProbe() {
	b.mu.Lock()
	b.apply(time.Now(), cooled)
	probe := b.probe
	b.mu.Unlock()
	err := error(nil)
	if probe != nil {
		err = probe()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		b.lastError = "probe: " + err.Error()
		b.apply(time.Now(), probeFailed)
		return
	}
	b.failures = 0
	b.apply(time.Now(), probeSucceeded)
}

// upstreamState is what operators see of an upstream.
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
