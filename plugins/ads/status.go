package main

// The statuses of campaigns and ads, as Meta names them.
const (
	statusActive   = "ACTIVE"
	statusPaused   = "PAUSED"
	statusArchived = "ARCHIVED"
	statusDeleted  = "DELETED"
)

// statusMoves is the transition table of a campaign's or an ad's status:
// the statuses each may move to. ACTIVE and PAUSED move to each other;
// either may be archived; anything but DELETED may be deleted. An archived
// object stays archived (or is deleted); a deleted one never changes.
// Setting the status it has is no move and always allowed.
var statusMoves = map[string][]string{
	statusActive:   {statusPaused, statusArchived, statusDeleted},
	statusPaused:   {statusActive, statusArchived, statusDeleted},
	statusArchived: {statusDeleted},
	statusDeleted:  {},
}

// canMove reports whether status from may become to.
func canMove(from, to string) bool {
	if from == to {
		_, known := statusMoves[from]
		return known
	}
	for _, s := range statusMoves[from] {
		if s == to {
			return true
		}
	}
	return false
}
