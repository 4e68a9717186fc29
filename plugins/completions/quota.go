package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/svcplatform/svc/plugins/completions/internal/completionsdb"
)

// Budgets and rate limits that hold across gateways.
//
// Every gateway runs its own completions plugin on the same database. The
// limit of a window (a calendar month of tokens, a minute of requests) is
// a counter row in completions.quota_leases; a plugin leases a slice of it
// (a twentieth of the limit) and spends the slice in memory, so that a
// request pays a database round trip only when its gateway's slice runs
// out, and the rows never grant more than the limit.
//
// Requests per minute: a request takes one unit of its gateway's slice.
// Worst case: none over the limit; under it, the slices other gateways
// leased and did not use (at most a twentieth of the limit each) are
// refused to this one until the minute ends.
//
// Monthly tokens: a request's tokens are known only when it ends, so a
// request is admitted while its gateway's slice is not spent, and its
// tokens are charged at the end, possibly below zero (a debt the next lease
// pays first). Worst-case overshoot: the tokens of the requests that were
// in flight, on every gateway, when the budget ran out (each was admitted
// with some budget left); sequential requests overshoot by less than one
// request per gateway. Undershoot: as for requests, the unspent slices of
// other gateways.
//
// A database error while leasing admits the request (logged): the
// platform keeps answering when PostgreSQL hiccups, and usage, written in
// batches, still records what was used.
const (
	kindTokens   = "tokens"
	kindRequests = "requests"
	// slicesPerLimit: a lease is a twentieth of the limit (at least 1).
	slicesPerLimit = 20
	// settingsTTL: a budget set through another gateway takes effect here
	// within this time.
	settingsTTL = 2 * time.Second
	// recheckEvery: a window found used up is asked again at most this
	// often (the limit may have been raised elsewhere).
	recheckEvery = time.Second
)

// limits are an app's budget and rate limit; 0 means none. The operator's
// (config) are ceilings over an app's own.
type limits struct {
	monthlyTokens     int64
	requestsPerMinute int64
	source            string // "config" or "app"
}

// quota enforces limits.
type quota struct {
	db       completionsdb.DBTX
	log      *slog.Logger
	defaults limits
	now      func() time.Time

	mu       sync.Mutex
	settings map[string]cachedLimits
	buckets  map[bucketKey]*bucket
}

type cachedLimits struct {
	l  limits
	at time.Time
}

type bucketKey struct{ app, kind string }

// bucket is this process's slice of one app's current window.
type bucket struct {
	mu        sync.Mutex
	window    time.Time
	balance   int64     // leased and not spent; negative: a debt
	exhausted time.Time // when the window was last found used up
	started   bool      // the token window's counter was started from usage
	refilling bool      // a lease is being taken in the background
}

func newQuota(db completionsdb.DBTX, log *slog.Logger, defaults limits) *quota {
	defaults.source = "config"
	return &quota{db: db, log: log, defaults: defaults, now: time.Now,
		settings: map[string]cachedLimits{}, buckets: map[bucketKey]*bucket{}}
}

// monthStart is the start of t's calendar month (UTC), the budget's window.
func monthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// limitsOf returns an app's limits, cached for settingsTTL.
func (q *quota) limitsOf(ctx context.Context, app string, fresh bool) (limits, error) {
	now := q.now()
	q.mu.Lock()
	c, ok := q.settings[app]
	q.mu.Unlock()
	if ok && !fresh && now.Sub(c.at) < settingsTTL {
		return c.l, nil
	}
	l := q.defaults
	row, err := completionsdb.New(q.db).GetBudget(ctx, app)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return l, err
	default:
		// Rows written before the operator's values were ceilings (or
		// before the operator lowered them) are capped here too.
		if own, ok := underCeiling(row.MonthlyTokens, q.defaults.monthlyTokens); ok {
			l.monthlyTokens, l.source = own, "app"
		}
		if own, ok := underCeiling(row.RequestsPerMinute, q.defaults.requestsPerMinute); ok {
			l.requestsPerMinute, l.source = own, "app"
		}
	}
	q.mu.Lock()
	q.settings[app] = cachedLimits{l: l, at: now}
	q.mu.Unlock()
	return l, nil
}

// underCeiling reports whether an app's own limit is in force over the
// operator's: the operator's value is a ceiling (CONTRACT §15), so the
// app's counts only when it is set, not 0 (which means "the operator's
// value") and not above a configured operator value (0 there is none).
func underCeiling(own *int64, operator int64) (int64, bool) {
	if own == nil || *own == 0 || (operator > 0 && *own > operator) {
		return 0, false
	}
	return *own, true
}

// forget drops what this process knows of an app's limits, after a change.
func (q *quota) forget(app string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.settings, app)
	for _, kind := range []string{kindTokens, kindRequests} {
		if b := q.buckets[bucketKey{app, kind}]; b != nil {
			b.mu.Lock()
			b.exhausted, b.started = time.Time{}, false
			b.mu.Unlock()
		}
	}
}

// admit decides whether an app may make one more request: nil, or the 429
// to answer. The monthly budget is checked first, so that a refused
// request takes nothing of the minute's limit.
func (q *quota) admit(ctx context.Context, app string) *apiError {
	if app == "" {
		return nil // a plugin's own background work
	}
	l, err := q.limitsOf(ctx, app, false)
	if err != nil {
		q.log.WarnContext(ctx, "budget not read; admitting the request", "app", app, "error", err)
		return nil
	}
	now := q.now()
	if l.monthlyTokens > 0 {
		win := monthStart(now)
		if !q.take(ctx, app, kindTokens, win, l.monthlyTokens, false, now) {
			return budgetExceeded(app, l.monthlyTokens, win.AddDate(0, 1, 0), now)
		}
	}
	if l.requestsPerMinute > 0 {
		win := now.UTC().Truncate(time.Minute)
		if !q.take(ctx, app, kindRequests, win, l.requestsPerMinute, true, now) {
			return rateLimited(app, l.requestsPerMinute, win.Add(time.Minute), now)
		}
	}
	return nil
}

// charge spends a finished request's tokens from the app's monthly slice.
func (q *quota) charge(app string, tokens int) {
	if app == "" || tokens == 0 {
		return
	}
	q.mu.Lock()
	b := q.buckets[bucketKey{app, kindTokens}]
	q.mu.Unlock()
	if b == nil {
		return // no budget when the request was admitted
	}
	win := monthStart(q.now())
	b.mu.Lock()
	if b.window.Equal(win) {
		b.balance -= int64(tokens)
	}
	b.mu.Unlock()
}

func (q *quota) bucket(app, kind string) *bucket {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := bucketKey{app, kind}
	b := q.buckets[k]
	if b == nil {
		b = &bucket{}
		q.buckets[k] = b
	}
	return b
}

// take admits one request against a window: with a positive balance, or
// after leasing a slice. For requests (spend) it takes one unit. When the
// balance runs low, the next slice is leased in the background, so that
// steady traffic never waits for the database.
func (q *quota) take(ctx context.Context, app, kind string, win time.Time, limit int64, spend bool, now time.Time) bool {
	b := q.bucket(app, kind)
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.window.Equal(win) {
		// A new window: the old slice is over.
		b.window, b.balance, b.exhausted, b.started = win, 0, time.Time{}, false
	}
	slice := max(1, (limit+slicesPerLimit-1)/slicesPerLimit)
	if b.balance < 1 {
		if !b.exhausted.IsZero() && now.Sub(b.exhausted) < recheckEvery {
			return false
		}
		want := slice + max(0, -b.balance)
		got, err := q.lease(ctx, app, kind, win, limit, want, !b.started)
		if err != nil {
			q.log.WarnContext(ctx, "quota not leased; admitting the request", "app", app, "kind", kind, "error", err)
			return true
		}
		b.started = true
		b.balance += got
		b.exhausted = time.Time{}
		if got < want {
			b.exhausted = now
		}
		if b.balance < 1 {
			return false
		}
	}
	if spend {
		b.balance--
	}
	if b.balance*2 < slice && !b.refilling && b.exhausted.IsZero() && b.started {
		b.refilling = true
		go q.refill(b, app, kind, win, limit, slice)
	}
	return true
}

// refill leases the next slice of a window in the background.
func (q *quota) refill(b *bucket, app, kind string, win time.Time, limit, want int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := q.lease(ctx, app, kind, win, limit, want, false)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refilling = false
	if err != nil {
		q.log.Warn("quota not leased in the background", "app", app, "kind", kind, "error", err)
		return
	}
	if !b.window.Equal(win) {
		return // the window ended meanwhile; its slice is of no use
	}
	b.balance += got
	if got < want {
		b.exhausted = q.now()
	}
}

// lease takes up to want units of a window from its counter row; start
// first starts a month's token counter from the usage recorded so far.
func (q *quota) lease(ctx context.Context, app, kind string, win time.Time, limit, want int64, start bool) (int64, error) {
	db := completionsdb.New(q.db)
	if start && kind == kindTokens {
		if err := db.StartTokenWindow(ctx, completionsdb.StartTokenWindowParams{AppID: app,
			WindowStart: pgtype.Timestamptz{Time: win, Valid: true}, Since: pgtype.Date{Time: win, Valid: true}}); err != nil {
			return 0, err
		}
	}
	return db.LeaseQuota(ctx, completionsdb.LeaseQuotaParams{
		AppID: app, Kind: kind, WindowStart: pgtype.Timestamptz{Time: win, Valid: true}, Want: want, QuotaLimit: limit,
	})
}

// budgetExceeded is the refusal of a request over the app's monthly token
// budget.
func budgetExceeded(app string, limit int64, resets, now time.Time) *apiError {
	return &apiError{Status: http.StatusTooManyRequests, Type: "insufficient_quota", Code: strp("budget_exceeded"),
		RetryAfter: secondsUntil(resets, now),
		Message: fmt.Sprintf("The monthly token budget of app %s (%d tokens per calendar month, UTC) is used up; it resets at %s.",
			app, limit, resets.Format(time.RFC3339))}
}

// rateLimited is the refusal of a request over the app's requests per
// minute.
func rateLimited(app string, limit int64, resets, now time.Time) *apiError {
	return &apiError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: strp("rate_limited"),
		RetryAfter: secondsUntil(resets, now),
		Message: fmt.Sprintf("App %s may make %d chat completion requests per minute; the limit resets at %s.",
			app, limit, resets.Format(time.RFC3339))}
}

func secondsUntil(t, now time.Time) int {
	return max(1, int((t.Sub(now)+time.Second-1)/time.Second))
}
