package host

import "fmt"

// State is where a plugin is in its lifecycle, as operators see it.
type State string

// The states of a plugin.
const (
	// StateStarting: the first process is being started.
	StateStarting State = "starting"
	// StateServing: a process is taking calls.
	StateServing State = "serving"
	// StateRestarting: no process is taking calls; one is being started
	// again with backoff. Calls answer Unavailable.
	StateRestarting State = "restarting"
	// StateStopped: the host is closed.
	StateStopped State = "stopped"
)

// event is what happens to a plugin.
type event string

const (
	evServing   event = "a process took over the calls"
	evStartFail event = "a process failed to start"
	evCrashed   event = "the serving process exited"
	evStopped   event = "the host closed"
)

// transitions is the plugin state machine. A failed reload of a serving
// plugin leaves it serving: the old process keeps the calls.
var transitions = map[State]map[event]State{
	StateStarting: {
		evServing:   StateServing,
		evStartFail: StateRestarting,
		evStopped:   StateStopped,
	},
	StateServing: {
		evServing:   StateServing,
		evStartFail: StateServing,
		evCrashed:   StateRestarting,
		evStopped:   StateStopped,
	},
	StateRestarting: {
		evServing:   StateServing,
		evStartFail: StateRestarting,
		evStopped:   StateStopped,
	},
	StateStopped: {
		evStopped: StateStopped,
	},
}

// next returns the state after e, or an error when e cannot happen in s.
func (s State) next(e event) (State, error) {
	if to, ok := transitions[s][e]; ok {
		return to, nil
	}
	return s, fmt.Errorf("plugin state %s: %s cannot happen", s, e)
}
