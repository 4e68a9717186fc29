package identity

import (
	"context"
	"errors"
	"fmt"
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
		if err := g.admit("olivia"); err != nil {
			t.Fatalf("attempt %d refused: %v", i+1, err)
		}
		if err := g.failed(fmt.Sprintf("198.51.100.%d", i), "olivia"); err != nil {
			t.Fatalf("failure %d: %v, want a plain failure", i+1, err)
		}
		clock = clock.Add(time.Second)
	}
	err := g.admit("olivia")
	var te *ThrottledError
	if !errors.As(err, &te) || te.Scope != "account" {
		t.Fatalf("eleventh attempt: %v, want an account throttle", err)
	}
	if want := failureWindow - accountFailures*time.Second; te.RetryAfter != want {
		t.Fatalf("RetryAfter = %s, want %s", te.RetryAfter, want)
	}
	if err := g.admit("someone-else"); err != nil {
		t.Fatalf("another account is not locked: %v", err)
	}
	clock = clock.Add(te.RetryAfter)
	if err := g.admit("olivia"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

func TestASuccessfulSignInClearsTheAccountsFailures(t *testing.T) {
	t.Parallel()
	g := newSignInGuard()
	for range accountFailures - 1 {
		_ = g.failed("192.0.2.7", "olivia")
	}
	g.succeeded("olivia")
	for range accountFailures - 1 {
		_ = g.failed("192.0.2.7", "olivia")
	}
	if err := g.admit("olivia"); err != nil {
		t.Fatalf("failures before the success still count: %v", err)
	}
}

func TestAHundredFailuresFromOneAddressIn15MinutesMakeItsNextFailuresThrottled(t *testing.T) {
	t.Parallel()
	g := newSignInGuard()
	clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	g.now = func() time.Time { return clock }
	for i := range addressFailures {
		// Different accounts, none of them locked: password spraying.
		if err := g.failed("203.0.113.9", fmt.Sprintf("user%d", i)); err != nil {
			t.Fatalf("failure %d: %v, want a plain failure", i+1, err)
		}
		clock = clock.Add(time.Second)
	}
	err := g.failed("203.0.113.9", "fresh")
	var te *ThrottledError
	if !errors.As(err, &te) || te.Scope != "address" {
		t.Fatalf("failure over the limit: %v, want an address throttle", err)
	}
	if want := failureWindow - addressFailures*time.Second; te.RetryAfter != want {
		t.Fatalf("RetryAfter = %s, want %s", te.RetryAfter, want)
	}
	if err := g.admit("fresh"); err != nil {
		t.Fatalf("the address's failures locked an account: %v", err)
	}
	if err := g.failed("203.0.113.10", "fresh"); err != nil {
		t.Fatalf("another address: %v", err)
	}
	clock = clock.Add(failureWindow)
	if err := g.failed("203.0.113.9", "fresh"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

func TestPasswordHashingRunsInBoundedSlots(t *testing.T) {
	t.Parallel()
	p := newPasswordSlots()
	p.wait = 50 * time.Millisecond
	release := make(chan struct{})
	var started sync.WaitGroup
	for range cap(p.slots) {
		started.Add(1)
		go func() {
			_ = p.run(context.Background(), func() { started.Done(); <-release })
		}()
	}
	started.Wait()
	if s := throttleScope(p.run(context.Background(), func() { t.Error("ran beyond the bound") })); s != "server" {
		t.Fatalf("a check beyond the bound: scope %q, want server", s)
	}
	close(release)
	ran := false
	for range 100 {
		if err := p.run(context.Background(), func() { ran = true }); err == nil {
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
		_ = g.failed(fmt.Sprintf("addr%d", i), "u")
	}
	if n := len(g.addresses); n > maxTracked {
		t.Fatalf("%d addresses tracked, bound %d", n, maxTracked)
	}
	for range 3 * addressFailures {
		_ = g.failed("one", "u")
	}
	if n := len(g.addresses["one"]); n > addressFailures {
		t.Fatalf("%d failures kept for one address, bound %d", n, addressFailures)
	}
}
