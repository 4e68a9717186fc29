// Package claim holds what the gateway's durable job queues share: rows
// in PostgreSQL that any gateway leases with SKIP LOCKED, fenced by a
// random token, and a loop that claims batches until the queue is drained,
// then waits for its poll or a wake-up. The webhook deliveries, the data
// deletion callbacks and the plugins' user-left jobs are such queues.
package claim

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"time"
)

// Token returns a random positive token fencing one lease: a row is
// finished or retried only by the claim that holds its token.
func Token() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return int64(binary.LittleEndian.Uint64(b[:]) >> 1)
}

// Loop runs step until ctx ends. step claims at most batch rows and works
// them, answering how many it claimed; a full batch means more may be due,
// so step runs again at once, else Loop waits for poll or for wake.
func Loop(ctx context.Context, poll time.Duration, wake <-chan struct{}, batch int, step func(context.Context) int) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		for step(ctx) == batch {
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
	}
}
