package webhook

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/svcplatform/svc/sdk"
)

// Test events and replays are sent on a developer's demand, outside the
// events' own pace; each costs a delivery to the app's endpoint. They are
// limited per app so that no one can turn the gateway into a request
// generator or crowd out the delivery workers.
const (
	manualPerWindow = 30
	manualWindow    = time.Minute
)

// manualLimiter counts test events and replays per app in fixed windows.
type manualLimiter struct {
	mu     sync.Mutex
	window int64
	counts map[int64]int
	now    func() time.Time
}

// allow counts one manual delivery of app, or refuses it with 429, code 4.
func (l *manualLimiter) allow(app int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now
	if l.now != nil {
		now = l.now
	}
	if w := now().UnixNano() / int64(manualWindow); w != l.window || l.counts == nil {
		l.window, l.counts = w, map[int64]int{}
	}
	if l.counts[app] >= manualPerWindow {
		return &sdk.Error{HTTPStatus: http.StatusTooManyRequests, Code: 4, Type: sdk.TypeRateLimit, Transient: true,
			Message: fmt.Sprintf("At most %d test events and replays per app per minute; retry in the next minute.", manualPerWindow)}
	}
	l.counts[app]++
	return nil
}
