package dispatch

import (
	"fmt"
	"sync"
	"time"

	"github.com/svcplatform/svc/gateway/internal/apierr"
)

// UserRates counts, in fixed one-minute windows, the calls each user makes
// of each method that declares user_rate_per_minute (the mobile writes that
// reach other people). The Dispatcher keeps one for its life, not one per
// route table, so a reload does not reset it.
// The counts live in this gateway's memory, as the Graph limiter's do: with
// N gateways a user may make up to N times the count.
type UserRates struct {
	now func() time.Time

	mu     sync.Mutex
	window int64
	counts map[rateKey]int
}

type rateKey struct{ procedure, user string }

// NewUserRates returns an empty counter; now nil means time.Now.
func NewUserRates(now func() time.Time) *UserRates {
	if now == nil {
		now = time.Now
	}
	return &UserRates{now: now, counts: map[rateKey]int{}}
}

// Allow counts one call of procedure by user and refuses it, 429 with code
// 17, when user made perMinute calls of it in this minute already.
func (r *UserRates) Allow(procedure, user string, perMinute int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w := r.now().Unix() / 60; w != r.window {
		r.window = w
		clear(r.counts)
	}
	k := rateKey{procedure, user}
	if r.counts[k] >= perMinute {
		return apierr.RateLimited(17, fmt.Sprintf("User request limit reached: at most %d of these a minute; retry in the next minute.", perMinute))
	}
	r.counts[k]++
	return nil
}
