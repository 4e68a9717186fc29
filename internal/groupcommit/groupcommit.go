// Package groupcommit gathers the work that arrives while a batch of it is
// being committed into the next batch.
//
// A write's cost in PostgreSQL is mostly its statement's overhead, its
// commit and the round trip, paid once per transaction whatever it holds.
// When requests arrive faster than one commit ends, the ones that wait are
// committed together: one round trip and one commit for the lot. Work that
// finds fewer than MaxRunning batches running goes at once, alone, so a
// quiet process adds no wait; nothing is answered before its batch has run.
//
// The oauth token exchange (one RedeemCodes statement for a batch of
// codes) and pipetx.Group (the one-round-trip transactions of the post
// write and the Page message send) run on it, and so do piperead's
// pipelines of reads, which commit nothing but share a round trip.
package groupcommit

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Options bound a Batcher.
type Options struct {
	// MaxRunning is how many batches run at once (at least one). More
	// batches at once means smaller ones and more commits; fewer means
	// work waits longer for a turn.
	MaxRunning int
	// MaxBatch bounds the work in one batch (at least one).
	MaxBatch int
	// Timeout bounds one batch: it runs for several requests, so none of
	// their contexts is its own. Zero means ten seconds.
	Timeout time.Duration
}

// Batcher runs work of type T in batches. Its run function settles each
// item of the batch it is given (writes each one's outcome into it) and
// must not keep the slice.
type Batcher[T any] struct {
	run  func(ctx context.Context, batch []T)
	opts Options

	mu      sync.Mutex
	running int
	queue   []waiting[T]

	// together counts the items run in batches of several.
	together atomic.Int64
}

type waiting[T any] struct {
	item T
	done chan struct{}
}

// New returns a Batcher that runs its batches with run.
func New[T any](run func(ctx context.Context, batch []T), opts Options) *Batcher[T] {
	opts.MaxRunning = max(opts.MaxRunning, 1)
	opts.MaxBatch = max(opts.MaxBatch, 1)
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	return &Batcher[T]{run: run, opts: opts}
}

// Do runs item, at once and alone when a batch may start, otherwise with
// the items waiting for the next one, and returns when its batch has run.
// The wait is bounded by the batches' Timeout, not by ctx: a batch that has
// taken an item answers for it.
func (b *Batcher[T]) Do(ctx context.Context, item T) {
	b.mu.Lock()
	if b.running < b.opts.MaxRunning {
		b.running++
		b.mu.Unlock()
		b.runFrom(ctx, []waiting[T]{{item: item}})
		return
	}
	done := make(chan struct{})
	b.queue = append(b.queue, waiting[T]{item: item, done: done})
	b.mu.Unlock()
	<-done
}

// Waiting is how many items wait for a batch.
func (b *Batcher[T]) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// Together is how many items have run in batches of several.
func (b *Batcher[T]) Together() int64 { return b.together.Load() }

// runFrom runs batch, then, while items are waiting, hands the slot to a
// goroutine that runs them, so the caller answers its own client at once.
func (b *Batcher[T]) runFrom(ctx context.Context, batch []waiting[T]) {
	items := make([]T, len(batch))
	for i, w := range batch {
		items[i] = w.item
	}
	if len(items) > 1 {
		b.together.Add(int64(len(items)))
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.opts.Timeout)
	b.run(bctx, items)
	cancel()
	for _, w := range batch {
		if w.done != nil {
			close(w.done)
		}
	}
	if next := b.next(); next != nil {
		go b.runFrom(context.WithoutCancel(ctx), next)
	}
}

// next takes the waiting items, up to MaxBatch, or gives the slot back
// when none wait.
func (b *Batcher[T]) next() []waiting[T] {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) == 0 {
		b.running--
		return nil
	}
	n := min(len(b.queue), b.opts.MaxBatch)
	next := make([]waiting[T], n)
	copy(next, b.queue)
	clear(b.queue[:n])
	b.queue = append(b.queue[:0], b.queue[n:]...)
	return next
}
