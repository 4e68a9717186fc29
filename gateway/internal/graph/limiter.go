package graph

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/svcplatform/svc/gateway/internal/apierr"
)

// Limits are calls allowed per window for each kind of caller; zero means
// unlimited.
type Limits struct {
	App    int           `json:"app"`
	User   int           `json:"user"`
	Page   int           `json:"page"`
	Window time.Duration `json:"-"`
}

// DefaultLimits are generous enough that only a runaway client meets them.
var DefaultLimits = Limits{App: 1_200_000, User: 600_000, Page: 600_000, Window: time.Minute}

// Limiter counts Graph calls in fixed windows per app, user and Page. The
// counts live in this gateway's memory: with N replicas behind a balancer a
// caller gets up to N times the limit. That is the usual trade of edge rate
// limiting for a read path that must not write to the database per call.
type Limiter struct {
	limits Limits
	now    func() time.Time

	mu     sync.Mutex
	window int64
	counts map[limitKey]int
}

// limitKey names one caller's count: an app's, a user's or a Page's. A
// struct, not "app:"+id, so that counting a call allocates nothing.
type limitKey struct {
	kind byte // 'a'pp, 'u'ser, 'p'age
	id   string
}

// NewLimiter returns a limiter enforcing limits.
func NewLimiter(limits Limits) *Limiter {
	if limits.Window <= 0 {
		limits.Window = time.Minute
	}
	return &Limiter{limits: limits, now: time.Now, counts: map[limitKey]int{}}
}

// Allow counts one call and refuses it when any of its callers is over the
// limit: code 4 for the app, 17 for the user, 32 for the Page.
func (l *Limiter) Allow(_ context.Context, app, user, page string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.now().UnixNano() / int64(l.limits.Window)
	if w != l.window {
		l.window = w
		clear(l.counts)
	}
	checks := [...]struct {
		key   limitKey
		limit int
		code  int
		what  string
	}{
		{limitKey{'a', app}, l.limits.App, 4, "Application request limit reached"},
		{limitKey{'u', user}, l.limits.User, 17, "User request limit reached"},
		{limitKey{'p', page}, l.limits.Page, 32, "Page request limit reached"},
	}
	for _, c := range checks {
		if c.limit == 0 || c.key.id == "" {
			continue
		}
		if l.counts[c.key] >= c.limit {
			return apierr.RateLimited(c.code, fmt.Sprintf("%s; retry after the current %s window.", c.what, l.limits.Window))
		}
	}
	for _, c := range checks[:2] { // the Page's count waits for CountPage
		if c.limit != 0 && c.key.id != "" {
			l.counts[c.key]++
		}
	}
	return nil
}

// CountPage spends one call of the Page's limit, once the call was
// authorized to act on the Page (see Allow).
func (l *Limiter) CountPage(page string) {
	if l.limits.Page == 0 || page == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if w := l.now().UnixNano() / int64(l.limits.Window); w != l.window {
		l.window = w
		clear(l.counts)
	}
	l.counts[limitKey{'p', page}]++
}

// authorized reports whether a call's error (nil on success) came after its
// access check passed: anything but a credential or access refusal.
func authorized(err error) bool {
	if err == nil {
		return true
	}
	e, ok := apierr.As(err)
	if !ok {
		return true
	}
	return e.HTTPStatus != http.StatusUnauthorized && e.HTTPStatus != http.StatusForbidden
}

// Usage is the share of the app's limit used in the current window, in
// percent, for the X-App-Usage header.
func (l *Limiter) Usage(app string) int {
	if app == "" || l.limits.App == 0 {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.now().UnixNano()/int64(l.limits.Window) != l.window {
		return 0
	}
	return l.counts[limitKey{'a', app}] * 100 / l.limits.App
}
