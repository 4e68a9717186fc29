package protocol

import (
	"sync"
	"sync/atomic"
	"time"
)

// watchTick is the watchdog's period: a call still running at two ticks in
// a row (so for at least watchTick, at most twice that) is overrunning.
const watchTick = 10 * time.Millisecond

// A watchdog finds the lane's calls that run long, so that only those pay
// for being watched for their caller leaving (a goroutine, or a
// context.AfterFunc). A call costs two atomic stores and a swap on its
// connection's watchSlot; no timer is set per call. (The plugin reset and
// stopped a timer per call, which woke an idle thread through the
// runtime's network poller: a futex wake and an epoll wait per call; the
// gateway set and cleared a read deadline, the same timer work.) One
// watchdog serves every connection of the process; it ticks only while
// some call runs, and stops at the first tick that finds none.
type watchdog struct {
	running atomic.Bool

	mu    sync.Mutex
	slots map[*watchSlot]struct{}
	timer *time.Timer
}

// calls is the process's watchdog, for both sides of the lane.
var calls = &watchdog{slots: map[*watchSlot]struct{}{}}

// A watchSlot is one connection's calls as the watchdog sees them. Its
// state is the number of the connection's current or last call shifted
// left by two, with slotBusy while the call runs and slotOverrun once the
// watchdog has claimed it. Only the connection's owner sets slotBusy (in
// begin) and clears it (in end); the watchdog only adds slotOverrun to a
// busy state.
type watchSlot struct {
	state atomic.Uint64
	// seen is the state at the watchdog's previous tick (the watchdog's).
	seen uint64
	// overrun is run by the watchdog for a call claimed as overrunning,
	// once per such call.
	overrun func()
}

const (
	slotBusy    = 1
	slotOverrun = 2
)

// add registers s until remove; a connection registers once.
func (w *watchdog) add(s *watchSlot) {
	w.mu.Lock()
	w.slots[s] = struct{}{}
	w.mu.Unlock()
}

// remove unregisters s (again: nothing).
func (w *watchdog) remove(s *watchSlot) {
	w.mu.Lock()
	delete(w.slots, s)
	w.mu.Unlock()
}

// begin marks a call on s as running. What the overrun function reads of
// the call must be written before.
func (s *watchSlot) begin(w *watchdog) {
	s.state.Store((s.state.Load()>>2+1)<<2 | slotBusy)
	if !w.running.Load() && w.running.CompareAndSwap(false, true) {
		w.start()
	}
}

// end marks the call on s as ended. It reports false when the watchdog
// claimed the call as overrunning: its overrun function has run, is
// running or is about to; the owner then waits for what that function
// hands over (see the two sides' use).
func (s *watchSlot) end() bool {
	st := s.state.Load() &^ slotOverrun
	return s.state.Swap(st&^slotBusy)&slotOverrun == 0
}

// start schedules the first tick (running was just set).
func (w *watchdog) start() {
	w.mu.Lock()
	if w.timer == nil {
		w.timer = time.AfterFunc(watchTick, w.tick)
	} else {
		w.timer.Reset(watchTick)
	}
	w.mu.Unlock()
}

// tick claims the calls running since the last tick, and ticks again
// while any call runs.
func (w *watchdog) tick() {
	var overrun []func()
	w.mu.Lock()
	busy := false
	for s := range w.slots {
		st := s.state.Load()
		if st&(slotBusy|slotOverrun) == slotBusy {
			busy = true
			if st == s.seen && s.state.CompareAndSwap(st, st|slotOverrun) {
				overrun = append(overrun, s.overrun)
			}
		}
		s.seen = st
	}
	if !busy {
		// Stop, unless a call began as the flag was read: begin sets its
		// state before reading running, so one of the two sees the other.
		w.running.Store(false)
		for s := range w.slots {
			if s.state.Load()&slotBusy != 0 {
				busy = w.running.CompareAndSwap(false, true)
				break
			}
		}
	}
	if busy {
		w.timer.Reset(watchTick)
	}
	w.mu.Unlock()
	for _, f := range overrun {
		f()
	}
}
