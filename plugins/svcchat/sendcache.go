package main

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcplatform/svc/plugins/svcchat/internal/svcchatdb"
)

// An app's send decides on the conversation and the opt-in record it locks.
// The state the last send of this process left for a Page and a user is
// kept here, with the versions (xmin) of both rows it saw, so the next send
// can decide on it before BEGIN and go in one round trip: BEGIN, the
// conversation's lock, PostMessageIf guarded by those versions (it takes the
// opt-in record's lock), COMMIT (pipetx.RunOne,
// committed with the other sends made at once: service.oneTrip).
// If anything changed the rows since, or a restriction or a block appeared,
// the guard writes nothing and the send takes the two round trips that
// decide on what it locks. The guard, not this cache, keeps the rules: an
// entry that is stale costs one wasted round trip, never a wrong send.

// sendKey is a Page and a user.
type sendKey struct{ pageID, userID string }

// sendSnapshot is what an app's send left: the conversation as it
// committed it, the opt-in record it saw and their versions.
type sendSnapshot struct {
	conv                      svcchatdb.SvcchatConversation
	opt                       svcchatdb.SvcchatOptIn
	optFound                  bool
	convVersion, optInVersion string
	at                        time.Time // when the send that left it committed
}

// snapshotTTL is how long a snapshot may be decided on. The guard alone
// keeps the rules; the bound keeps an xmin from being compared after the
// transaction ids could have wrapped around (billions of transactions
// later), and keeps a quiet user's copy from being held for nothing.
const snapshotTTL = 10 * time.Minute

// maxSendSnapshots bounds the cache; beyond it, the entries of the users
// no send is in flight to are dropped.
const maxSendSnapshots = 1024

// sendSnapshots are the snapshots of one process, by Page and user. A send
// decides on one only when no other send of this process to the user is in
// flight: two at once would both decide on it, and the second would only
// fail its guard (the hot conversation of many sends at once takes the two
// round trips, as before).
type sendSnapshots struct {
	mu sync.Mutex
	m  map[sendKey]*sendEntry
	// oneTrip counts the sends that went in one round trip.
	oneTrip atomic.Int64
}

type sendEntry struct {
	snap     *sendSnapshot
	inflight int
}

// begin marks a send to k in flight and returns the snapshot to decide on,
// if there is one and no other send to k is in flight: the send's own from
// then on (the cache no longer holds it). end must follow.
func (c *sendSnapshots) begin(k sendKey) (*sendSnapshot, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[sendKey]*sendEntry)
	}
	e := c.m[k]
	if e == nil {
		e = &sendEntry{}
		c.m[k] = e
	}
	e.inflight++
	if e.snap != nil && time.Since(e.snap.at) > snapshotTTL {
		e.snap = nil
	}
	if e.inflight > 1 || e.snap == nil {
		return nil, false
	}
	snap := e.snap
	e.snap = nil // taken: a send that fails leaves none
	return snap, true
}

// end marks the send to k done, keeping left, the state a send that stored
// its message left (nil for none).
func (c *sendSnapshots) end(k sendKey, left *sendSnapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[k]
	e.inflight--
	if left != nil {
		e.snap = left
	}
	if e.inflight == 0 && e.snap == nil {
		delete(c.m, k)
	}
	if len(c.m) > maxSendSnapshots {
		for k, e := range c.m {
			if e.inflight == 0 {
				delete(c.m, k)
			}
		}
	}
}
