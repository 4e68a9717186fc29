package identity

import "time"

// HoldHashingSlots takes every password-hashing slot of s, as a flood of
// sign-ins would, and sets how long a caller waits for one. Calling release
// frees them.
func HoldHashingSlots(s *Service, wait time.Duration) (release func()) {
	s.slots.wait = wait
	for range cap(s.slots.slots) {
		s.slots.slots <- struct{}{}
	}
	return func() {
		for range cap(s.slots.slots) {
			<-s.slots.slots
		}
	}
}
