package memtrim

import (
	"context"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"
)

const slack = 4 << 20

func TestATickDecidesWhetherToTrim(t *testing.T) {
	for _, row := range []struct {
		rule   string
		before watch
		calls  uint64
		spare  uint64
		trim   bool
		busy   bool
	}{
		{"calls during the tick mark the process busy and never trim", watch{seen: 5}, 9, 90 << 20, false, true},
		{"calls during the tick keep a busy process busy", watch{seen: 5, busy: true}, 9, 90 << 20, false, true},
		{"the first quiet tick after a busy one trims a heap with more than the slack spare", watch{seen: 9, busy: true}, 9, 30 << 20, true, false},
		{"a busy spell that left no more than the slack spare is left alone", watch{seen: 9, busy: true}, 9, slack, false, false},
		{"a quiet process is never trimmed however much it holds", watch{seen: 9}, 9, 90 << 20, false, false},
	} {
		t.Run(row.rule, func(t *testing.T) {
			after, trim := row.before.tick(row.calls, row.spare, slack)
			if trim != row.trim || after.busy != row.busy || after.seen != row.calls {
				t.Fatalf("tick(%d, %d) on %+v = %+v, trim %v; want busy %v, seen %d, trim %v",
					row.calls, row.spare, row.before, after, trim, row.busy, row.calls, row.trim)
			}
		})
	}
}

// fakeProcess is a process whose spare heap the test sets and whose trims
// it counts: a trim gives all of it back.
type fakeProcess struct {
	spare atomic.Uint64
	trims chan struct{}
}

func newTrimmer(p *fakeProcess) *Trimmer {
	t := New()
	t.tick, t.settle = 5*time.Millisecond, 20*time.Millisecond
	t.spare = p.spare.Load
	t.free = func() {
		p.spare.Store(0)
		p.trims <- struct{}{}
	}
	return t
}

func TestARunningTrimmerTrimsOnceWhenABurstOfCallsEnds(t *testing.T) {
	p := &fakeProcess{trims: make(chan struct{}, 10)}
	tr := newTrimmer(p)
	// A tick well beyond the burst's pauses: a busy machine that stalls
	// the burst for a whole tick would end it early, and trim twice.
	tr.tick = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tr.Run(ctx)

	// The burst: calls while the heap grows.
	for range 8 {
		tr.Touch()
		p.spare.Add(5 << 20)
		time.Sleep(2 * time.Millisecond)
	}
	select {
	case <-p.trims:
	case <-time.After(10 * time.Second):
		t.Fatal("no trim after the burst ended")
	}
	// Quiet again, with nothing spare: no second trim.
	select {
	case <-p.trims:
		t.Fatal("a second trim with no calls since the first")
	case <-time.After(3 * tr.tick):
	}
}

func TestOwnersLetGoOfWhatTheyKeepJustBeforeEachTrim(t *testing.T) {
	p := &fakeProcess{trims: make(chan struct{}, 10)}
	tr := newTrimmer(p)
	var released atomic.Int64
	tr.OnTrim(func() {
		if len(p.trims) != 0 {
			t.Error("a hook ran after the trim it precedes")
		}
		released.Add(1)
	})
	triggerAndWait(t, tr, p)
	if n := released.Load(); n != 1 {
		t.Errorf("the hook ran %d times for one trim, want 1", n)
	}
}

func TestATriggerTrimsAfterTheSettleDelayWhateverTheProcessHolds(t *testing.T) {
	p := &fakeProcess{trims: make(chan struct{}, 10)}
	triggerAndWait(t, newTrimmer(p), p)
}

// triggerAndWait runs tr, triggers it and waits for p's trim.
func triggerAndWait(t *testing.T, tr *Trimmer, p *fakeProcess) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tr.Run(ctx)
	tr.Trigger()
	select {
	case <-p.trims:
	case <-time.After(10 * time.Second):
		t.Fatal("no trim after a trigger")
	}
}

func TestSpareHeapBytesCountsGarbageAndGoesOnceItIsCollected(t *testing.T) {
	debug.FreeOSMemory()
	before := spareHeapBytes()
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no collection meanwhile
	for range 16 {
		sink = make([]byte, 1<<20) // 15 MiB of garbage, one live MiB at the end
	}
	if got := spareHeapBytes(); got < before+14<<20 {
		t.Fatalf("spare after 15 MiB of garbage = %d, before %d", got, before)
	}
	sink = nil
	debug.FreeOSMemory()
	if got := spareHeapBytes(); got > before+2<<20 {
		t.Fatalf("spare after a trim = %d, before the garbage %d", got, before)
	}
}

var sink []byte
