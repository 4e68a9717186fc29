package identity

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Sign-in limits. Each password check costs an argon2id evaluation (19 MiB
// for about 30 ms), so both guessing and flooding are bounded here, before
// any hashing: per account (failures), per client address (attempts), and
// in all (evaluations at once, so that memory stays bounded whatever the
// flood). The counts live in this gateway's memory: with N gateways an
// account gets N times the allowance, which still makes guessing useless.
const (
	// accountFailures failed sign-ins of one username within
	// accountWindow lock it until the oldest leaves the window.
	accountFailures = 10
	accountWindow   = 15 * time.Minute
	// addressAttempts sign-ins from one client address within
	// addressWindow, successful or not.
	addressAttempts = 30
	addressWindow   = time.Minute
	// hashWait is how long a sign-in waits for a free hashing slot before
	// it is told to come back.
	hashWait = 3 * time.Second
	// maxTracked bounds each table; beyond it, expired entries are swept.
	maxTracked = 50_000
)

// ThrottledError refuses a sign-in that is over a limit. Scope is
// "account", "address" or "server" (every hashing slot is busy).
type ThrottledError struct {
	Scope      string
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("sign-in throttled (%s): retry after %s", e.Scope, e.RetryAfter.Round(time.Second))
}

// signInGuard holds the counts behind the limits.
type signInGuard struct {
	hashing  chan struct{}
	hashWait time.Duration
	now      func() time.Time

	mu       sync.Mutex
	failures map[string][]time.Time // username → failure times, oldest first
	attempts map[string][]time.Time // client address → attempt times
}

func newSignInGuard() *signInGuard {
	return &signInGuard{
		hashing:  make(chan struct{}, max(2, 2*runtime.GOMAXPROCS(0))),
		hashWait: hashWait,
		now:      time.Now,
		failures: map[string][]time.Time{},
		attempts: map[string][]time.Time{},
	}
}

// admit counts an attempt from address for username, or refuses it.
func (g *signInGuard) admit(address, username string) error {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if f := recent(g.failures[username], now, accountWindow); len(f) >= accountFailures {
		g.failures[username] = f
		return &ThrottledError{Scope: "account", RetryAfter: f[0].Add(accountWindow).Sub(now)}
	}
	a := recent(g.attempts[address], now, addressWindow)
	if len(a) >= addressAttempts {
		g.attempts[address] = a
		return &ThrottledError{Scope: "address", RetryAfter: a[0].Add(addressWindow).Sub(now)}
	}
	g.attempts[address] = append(a, now)
	sweep(g.attempts, now, addressWindow)
	return nil
}

// result records the outcome of a checked password.
func (g *signInGuard) result(username string, ok bool) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if ok {
		delete(g.failures, username)
		return
	}
	g.failures[username] = append(recent(g.failures[username], now, accountWindow), now)
	sweep(g.failures, now, accountWindow)
}

// hash runs fn in one of the bounded hashing slots.
func (g *signInGuard) hash(ctx context.Context, fn func()) error {
	wait, cancel := context.WithTimeout(ctx, g.hashWait)
	defer cancel()
	select {
	case g.hashing <- struct{}{}:
	case <-wait.Done():
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &ThrottledError{Scope: "server", RetryAfter: time.Second}
	}
	defer func() { <-g.hashing }()
	fn()
	return nil
}

// recent drops the times older than window.
func recent(times []time.Time, now time.Time, window time.Duration) []time.Time {
	i := 0
	for i < len(times) && now.Sub(times[i]) >= window {
		i++
	}
	return times[i:]
}

// sweep keeps a table bounded: past maxTracked keys, expired ones go.
func sweep(table map[string][]time.Time, now time.Time, window time.Duration) {
	if len(table) <= maxTracked {
		return
	}
	for k, v := range table {
		if len(recent(v, now, window)) == 0 {
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
