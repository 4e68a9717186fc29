package webhook

// ParseRetryAfter exposes parseRetryAfter to the external tests.
var ParseRetryAfter = parseRetryAfter
