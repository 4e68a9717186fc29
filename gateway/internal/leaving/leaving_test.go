package leaving

import (
	"testing"
	"time"
)

// A job is retried without end: the wait doubles from 2 s and stays at 10
// minutes.
func TestTheWaitDoublesUpToTenMinutes(t *testing.T) {
	for attempt, want := range map[int]time.Duration{0: 2 * time.Second, 1: 4 * time.Second, 5: 64 * time.Second,
		8: 512 * time.Second, 9: maxDelay, 1000: maxDelay} {
		if got := Delay(attempt); got != want {
			t.Errorf("Delay(%d) = %v, want %v", attempt, got, want)
		}
	}
}
