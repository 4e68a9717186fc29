package gateway

import (
	"context"
	"runtime/debug"
	"time"
)

// trimDelay is how long the trimmer waits after the last trigger: building a
// route table is followed by the docs index refresh and the OpenAPI
// document, which make garbage of their own for a moment after the swap.
const trimDelay = 3 * time.Second

// memoryTrimmer hands the memory of a burst of one-off work back to the
// operating system once the burst is over. Start-up and each plugin
// (re)load decode every plugin's descriptors, hash the development world's
// passwords (argon2id takes 19 MiB a hash) and index the docs: about 100 MiB
// allocated in a second, nearly all of it garbage right after. Go's
// background scavenger gives such a peak back only slowly, so an idle
// gateway would keep twice what it uses for minutes; one forced collection
// and scavenge after the burst costs a few milliseconds of CPU per reload and
// nothing on the request path.
type memoryTrimmer struct {
	wake  chan struct{}
	delay time.Duration
}

func newMemoryTrimmer() *memoryTrimmer {
	return &memoryTrimmer{wake: make(chan struct{}, 1), delay: trimDelay}
}

// Trigger asks for a trim once things have been quiet for the delay.
func (m *memoryTrimmer) Trigger() {
	select {
	case m.wake <- struct{}{}:
	default: // one is pending: it is pushed back by the timer reset below
	}
}

// Run trims after each quiet period that follows a trigger, until ctx ends.
func (m *memoryTrimmer) Run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-m.wake:
			timer.Reset(m.delay) // a new trigger restarts the wait
		case <-timer.C:
			debug.FreeOSMemory()
		}
	}
}
