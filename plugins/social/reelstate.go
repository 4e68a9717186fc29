package main

import (
	"fmt"

	"github.com/svcplatform/svc/sdk"
)

// ReelStatus is where a reel stands.
type ReelStatus string

// The statuses of a reel.
const (
	Processing ReelStatus = "processing"
	Ready      ReelStatus = "ready"
	Failed     ReelStatus = "error"
)

// ReelTrigger is what the media check found.
type ReelTrigger string

// The outcomes of one media check.
const (
	// Accepted: 2xx, video/* and a Content-Length within the bound.
	Accepted ReelTrigger = "accepted"
	// Rejected: the server answered, and the answer refuses the video
	// (status, type or size).
	Rejected ReelTrigger = "rejected"
	// Unreachable: no answer (network, timeout, 5xx); tried again later.
	Unreachable ReelTrigger = "unreachable"
	// GaveUp: unreachable on the last allowed attempt.
	GaveUp ReelTrigger = "gave_up"
)

// reelRule is one row of the transition table: from a status, on a
// trigger, the reel moves to a status; emit says social.reel.ready is
// emitted in the same transaction.
type reelRule struct {
	from ReelStatus
	on   ReelTrigger
	to   ReelStatus
	emit bool
}

// reelRules is the whole life of a reel. Ready and error are final: a
// checked reel is never checked again.
var reelRules = []reelRule{
	{Processing, Accepted, Ready, true},
	{Processing, Rejected, Failed, false},
	{Processing, Unreachable, Processing, false},
	{Processing, GaveUp, Failed, false},
}

// reelTransition applies the table; a trigger with no row is a conflict.
func reelTransition(from ReelStatus, on ReelTrigger) (ReelStatus, bool, error) {
	for _, r := range reelRules {
		if r.from == from && r.on == on {
			return r.to, r.emit, nil
		}
	}
	return from, false, sdk.Errorf(409, 10, 0, "%s", fmt.Sprintf("A %s reel cannot take %s.", from, on))
}
