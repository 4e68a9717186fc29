package replica

// Decision is where one read goes, and why.
type Decision int

// The decisions, in the order decide checks them.
const (
	// ReplicaServes: the replica is up, within its lag bounds, and holds
	// the caller's last write.
	ReplicaServes Decision = iota
	// PrimaryReplicaDown: the last probe found no standby.
	PrimaryReplicaDown
	// PrimaryReplicaLags: the replica is behind past a bound.
	PrimaryReplicaLags
	// PrimaryOwnWrite: the caller wrote, and the replica may not hold it yet.
	PrimaryOwnWrite
)

var decisions = []Decision{ReplicaServes, PrimaryReplicaDown, PrimaryReplicaLags, PrimaryOwnWrite}

// String is the decision's label in metrics.
func (d Decision) String() string {
	switch d {
	case ReplicaServes:
		return "replica"
	case PrimaryReplicaDown:
		return "primary_replica_down"
	case PrimaryReplicaLags:
		return "primary_replica_lags"
	case PrimaryOwnWrite:
		return "primary_own_write"
	}
	return "unknown"
}

// decide is the one rule for a read: the replica serves it only when it is
// up, within its bounds, and the caller has no write it may lack.
func decide(h Health, ownWritePending bool) Decision {
	switch {
	case !h.Up:
		return PrimaryReplicaDown
	case !h.Within:
		return PrimaryReplicaLags
	case ownWritePending:
		return PrimaryOwnWrite
	default:
		return ReplicaServes
	}
}
