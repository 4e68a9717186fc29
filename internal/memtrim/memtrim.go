// Package memtrim hands the memory of a burst of work back to the operating
// system once the burst is over.
//
// Go's background scavenger returns freed heap pages only slowly: after a
// minute of load a process that is idle again keeps its peak heap resident
// for minutes. A Trimmer watches two kinds of burst. Calls counted with
// Touch are traffic: once a tick passes with no call after a busy one, and
// the heap holds more than defaultSlack beyond its live objects (garbage
// not yet collected, free pages not yet returned), it collects and returns
// the free pages to the system. Trigger marks one-off work (start-up, a
// reload): a trim follows once defaultSettle has passed with no further
// trigger, whatever the process holds.
//
// The cost on the request path is one atomic add per call; a trim is two
// collections of the live heap, run only when the process has just gone
// quiet.
package memtrim

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// The settings of a Trimmer made by New.
const (
	// defaultTick is how often the trimmer looks at the call count: a burst
	// of calls is over once one whole tick passes without a call.
	defaultTick = 500 * time.Millisecond
	// defaultSettle is the wait after the last Trigger.
	defaultSettle = 3 * time.Second
	// defaultSlack is how much a heap may hold beyond its live objects
	// before a quiet spell trims it: less is not worth a collection.
	defaultSlack = 2 << 20
)

// A Trimmer returns memory to the operating system after bursts. The zero
// value is not usable; make one with New.
type Trimmer struct {
	calls atomic.Uint64
	wake  chan struct{}

	// tick, settle and slack are the defaults above; spare and free are
	// the process's. Tests replace them.
	tick   time.Duration
	settle time.Duration
	slack  uint64
	spare  func() uint64
	free   func()

	// release are the owners' hooks, run before each trim (OnTrim).
	release []func()
}

// New returns a Trimmer with the default tick, settle delay and slack.
func New() *Trimmer {
	return &Trimmer{
		wake: make(chan struct{}, 1), tick: defaultTick, settle: defaultSettle, slack: defaultSlack,
		spare: spareHeapBytes, free: freeAll,
	}
}

// OnTrim adds f to what runs just before each trim: an owner of memory it
// keeps for speed under load (free lists, buffers) lets go of it there, so
// that the trim's collections can hand it back too. It must be called
// before Run.
func (t *Trimmer) OnTrim(f func()) { t.release = append(t.release, f) }

// trim runs the owners' hooks, then collects and returns free memory.
func (t *Trimmer) trim() {
	for _, f := range t.release {
		f()
	}
	t.free()
}

// Touch counts one call. It is safe from any goroutine and costs one atomic
// add; on a nil Trimmer it does nothing.
func (t *Trimmer) Touch() {
	if t != nil {
		t.calls.Add(1)
	}
}

// Trigger asks for a trim once the settle delay has passed with no other trigger.
func (t *Trimmer) Trigger() {
	select {
	case t.wake <- struct{}{}:
	default: // one is pending; the timer restarts when it is taken
	}
}

// Run trims after bursts until ctx ends.
func (t *Trimmer) Run(ctx context.Context) {
	ticker := time.NewTicker(t.tick)
	defer ticker.Stop()
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	defer settle.Stop()
	w := watch{seen: t.calls.Load()}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.wake:
			settle.Reset(t.settle) // a new trigger restarts the wait
		case <-settle.C:
			t.trim()
		case <-ticker.C:
			var trim bool
			if w, trim = w.tick(t.calls.Load(), t.spare(), t.slack); trim {
				t.trim()
			}
		}
	}
}

// watch is what the trimmer remembers between ticks.
type watch struct {
	seen uint64 // the call count at the last tick
	busy bool   // calls came during the last tick
}

// tick takes the call count and the heap's spare bytes at a tick, and says
// whether to trim now: the tick before had calls, this one had none, and
// the heap holds more than slack beyond its live objects.
func (w watch) tick(calls, spare, slack uint64) (watch, bool) {
	if calls != w.seen {
		w.seen, w.busy = calls, true
		return w, false
	}
	trim := w.busy && spare > slack
	w.busy = false
	return w, trim
}

// freeAll collects twice, so that what sync.Pools held through the first
// collection (their victim caches) is garbage too, and returns every free
// page to the operating system.
func freeAll() {
	runtime.GC()
	debug.FreeOSMemory()
}

// spareHeapBytes is what a collection and a scavenge could give back: the
// heap pages the runtime holds from the operating system (in use, unused
// within spans, free), less the objects the last collection found live.
func spareHeapBytes() uint64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	metrics.Read(s)
	var held uint64
	for _, v := range s[:3] {
		if v.Value.Kind() != metrics.KindUint64 {
			return 0
		}
		held += v.Value.Uint64()
	}
	if s[3].Value.Kind() != metrics.KindUint64 || s[3].Value.Uint64() >= held {
		return 0
	}
	return held - s[3].Value.Uint64()
}
