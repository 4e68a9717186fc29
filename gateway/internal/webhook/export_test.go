package webhook

import "time"

// ParseRetryAfter exposes parseRetryAfter to the external tests.
var ParseRetryAfter = parseRetryAfter

// StopManualClock fixes the clock of s's limit on test events and replays
// at t, so that a test's calls fall in one window however slowly they run.
func StopManualClock(s *Service, t time.Time) { s.manual.now = func() time.Time { return t } }
