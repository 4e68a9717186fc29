package identity

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Sign-in limits count failures, never successes: many honest users share
// one address behind carrier NAT, and a correct password is never refused
// for its address. Per account, failures lock the account before any
// hashing (a guesser's cost); per address, failures past the limit are
// answered 429 instead of 401, so a client spraying wrong passwords is told
// to back off. What bounds a flood of either kind is the hashing slots
// (passwordSlots): argon2id runs in a fixed number of slots at once.
//
// The counts live in this gateway's memory: with N gateways an account gets
// N times the allowance, which still makes guessing useless.
const (
	// accountFailures failed sign-ins of one username within
	// failureWindow lock it until the oldest leaves the window.
	accountFailures = 10
	// addressFailures failed sign-ins from one client address within
	// failureWindow make its further failures 429s.
	addressFailures = 100
	failureWindow   = 15 * time.Minute
	// addressSignUps sign-ups from one client address within
	// signUpWindow are allowed; more are refused (429) until the oldest
	// leaves the window. Sign-ups count whether they succeed or not (a
	// taken username costs as much as a new account: one hashing), but
	// only once the username and password passed their rules.
	addressSignUps = 30
	signUpWindow   = time.Hour
	// maxTracked bounds each table; beyond it, expired entries are swept.
	// A key holds at most its limit of times, and the failures that fill
	// them are bounded by the hashing slots' throughput.
	maxTracked = 50_000
)

// ThrottledError refuses a sign-in (or an account creation, for "server")
// that is over a limit. Scope is "account" (the account is locked),
// "address" (too many failures from the client's address) or "server"
// (every hashing slot is busy) or "signup" (too many sign-ups from the
// client's address).
type ThrottledError struct {
	Scope      string
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("sign-in throttled (%s): retry after %s", e.Scope, e.RetryAfter.Round(time.Second))
}

// signInGuard holds the failure counts behind the limits.
type signInGuard struct {
	now func() time.Time

	mu        sync.Mutex
	accounts  map[string][]time.Time // username → failure times, oldest first
	addresses map[string][]time.Time // client address → failure times, oldest first
	signUps   map[string][]time.Time // client address → sign-up times, oldest first
	// signUpLimit is addressSignUps, lowered by tests.
	signUpLimit int
}

func newSignInGuard() *signInGuard {
	return &signInGuard{now: time.Now, accounts: map[string][]time.Time{}, addresses: map[string][]time.Time{},
		signUps: map[string][]time.Time{}, signUpLimit: addressSignUps}
}

// signUp counts a sign-up from address, or refuses it (scope "signup")
// when the address made signUpLimit of them within signUpWindow.
func (g *signInGuard) signUp(address string) error {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	times := recentWithin(g.signUps[address], now, signUpWindow)
	if len(times) >= g.signUpLimit {
		g.signUps[address] = times
		return &ThrottledError{Scope: "signup", RetryAfter: times[0].Add(signUpWindow).Sub(now)}
	}
	g.signUps[address] = append(times, now)
	sweepWithin(g.signUps, now, signUpWindow)
	return nil
}

// admit refuses a sign-in of a locked account, before its password is
// checked.
func (g *signInGuard) admit(username string) error {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if f := recent(g.accounts[username], now); len(f) >= accountFailures {
		g.accounts[username] = f
		return &ThrottledError{Scope: "account", RetryAfter: f[0].Add(failureWindow).Sub(now)}
	}
	return nil
}

// failed records a wrong password for username from address. It answers a
// *ThrottledError when the address was already over its limit: the caller
// answers that instead of "wrong password".
func (g *signInGuard) failed(address, username string) error {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	record(g.accounts, username, now, accountFailures)
	before := recent(g.addresses[address], now)
	record(g.addresses, address, now, addressFailures)
	if len(before) >= addressFailures {
		return &ThrottledError{Scope: "address", RetryAfter: before[0].Add(failureWindow).Sub(now)}
	}
	return nil
}

// succeeded clears the account's failures; the address's stay, since they
// may be another user's behind the same address.
func (g *signInGuard) succeeded(username string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.accounts, username)
}

// record appends a failure at now to table[key], keeping the last limit
// times within the window (older ones decide nothing).
func record(table map[string][]time.Time, key string, now time.Time, limit int) {
	times := append(recent(table[key], now), now)
	if len(times) > limit {
		times = times[len(times)-limit:]
	}
	table[key] = times
	sweep(table, now)
}

// recent drops the times older than the failure window.
func recent(times []time.Time, now time.Time) []time.Time {
	return recentWithin(times, now, failureWindow)
}

// recentWithin drops the times older than window.
func recentWithin(times []time.Time, now time.Time, window time.Duration) []time.Time {
	i := 0
	for i < len(times) && now.Sub(times[i]) >= window {
		i++
	}
	return times[i:]
}

// sweep keeps a table of failures bounded: past maxTracked keys, expired
// ones go.
func sweep(table map[string][]time.Time, now time.Time) { sweepWithin(table, now, failureWindow) }

// sweepWithin is sweep for a table whose times count for window.
func sweepWithin(table map[string][]time.Time, now time.Time, window time.Duration) {
	if len(table) <= maxTracked {
		return
	}
	for k, v := range table {
		if len(recentWithin(v, now, window)) == 0 {
			delete(table, k)
		}
	}
	if len(table) > maxTracked {
		// A flood of distinct keys: start over rather than grow.
		clear(table)
	}
}

// normalUsername is the account key of a username.
func normalUsername(username string) string { return strings.ToLower(strings.TrimSpace(username)) }
