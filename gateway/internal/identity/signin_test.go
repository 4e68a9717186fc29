package identity

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func throttleScope(err error) string {
	var te *ThrottledError
	if errors.As(err, &te) {
		return te.Scope
	}
	return ""
}

func TestTenFailedSignInsLockTheAccountUntilTheOldestLeavesTheWindow(t *testing.T) {
	t.Parallel()
	g := newSignInGuard()
	clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	g.now = func() time.Time { return clock }
	for i := range accountFailures {
		if err := g.admit("198.51.100."+string(rune('a'+i)), "olivia"); err != nil {
			t.Fatalf("attempt %d refused: %v", i+1, err)
		}
		g.result("olivia", false)
		clock = clock.Add(time.Second)
	}
	err := g.admit("198.51.100.200", "olivia")
	var te *ThrottledError
	if !errors.As(err, &te) || te.Scope != "account" {
		t.Fatalf("eleventh attempt: %v, want an account throttle", err)
	}
	if want := accountWindow - accountFailures*time.Second; te.RetryAfter != want {
		t.Fatalf("RetryAfter = %s, want %s", te.RetryAfter, want)
	}
	if err := g.admit("198.51.100.200", "someone-else"); err != nil {
		t.Fatalf("another account is not locked: %v", err)
	}
	clock = clock.Add(te.RetryAfter)
	if err := g.admit("198.51.100.201", "olivia"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

func TestASuccessfulSignInClearsTheAccountsFailures(t *testing.T) {
	t.Parallel()
	g := newSignInGuard()
	for range accountFailures - 1 {
		g.result("olivia", false)
	}
	g.result("olivia", true)
	for range accountFailures - 1 {
		g.result("olivia", false)
	}
	if err := g.admit("192.0.2.7", "olivia"); err != nil {
		t.Fatalf("failures before the success still count: %v", err)
	}
}

func TestSignInsFromOneAddressAreLimitedPerMinute(t *testing.T) {
	t.Parallel()
	g := newSignInGuard()
	clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	g.now = func() time.Time { return clock }
	for i := range addressAttempts {
		if err := g.admit("203.0.113.9", "user"+string(rune('a'+i%26))); err != nil {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
	}
	if s := throttleScope(g.admit("203.0.113.9", "fresh")); s != "address" {
		t.Fatalf("attempt over the limit: scope %q, want address", s)
	}
	if err := g.admit("203.0.113.10", "fresh"); err != nil {
		t.Fatalf("another address: %v", err)
	}
	clock = clock.Add(addressWindow)
	if err := g.admit("203.0.113.9", "fresh"); err != nil {
		t.Fatalf("after a minute: %v", err)
	}
}

func TestPasswordChecksRunInBoundedSlots(t *testing.T) {
	t.Parallel()
	g := newSignInGuard()
	g.hashWait = 50 * time.Millisecond
	release := make(chan struct{})
	var started sync.WaitGroup
	for range cap(g.hashing) {
		started.Add(1)
		go func() {
			_ = g.hash(context.Background(), func() { started.Done(); <-release })
		}()
	}
	started.Wait()
	if s := throttleScope(g.hash(context.Background(), func() { t.Error("ran beyond the bound") })); s != "server" {
		t.Fatalf("a check beyond the bound: scope %q, want server", s)
	}
	close(release)
	ran := false
	for range 100 {
		if err := g.hash(context.Background(), func() { ran = true }); err == nil {
			break
		}
	}
	if !ran {
		t.Fatal("a freed slot was not reused")
	}
}

func TestTheTablesStayBoundedUnderAFloodOfAddresses(t *testing.T) {
	t.Parallel()
	g := newSignInGuard()
	for i := range maxTracked + 10 {
		_ = g.admit(string(rune(i))+"addr", "u")
	}
	if n := len(g.attempts); n > maxTracked {
		t.Fatalf("%d addresses tracked, bound %d", n, maxTracked)
	}
}
