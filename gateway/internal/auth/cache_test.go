package auth

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// blockingLoad is a load that counts its calls and answers only when
// released, so a test can hold a query under way.
type blockingLoad struct {
	calls   atomic.Int32
	started chan struct{}
	release chan struct{}
	answer  func(call int32) (string, error)
}

func newBlockingLoad(answer func(int32) (string, error)) *blockingLoad {
	return &blockingLoad{started: make(chan struct{}, 64), release: make(chan struct{}), answer: answer}
}

func (b *blockingLoad) load() (string, time.Time, error) {
	n := b.calls.Add(1)
	b.started <- struct{}{}
	<-b.release
	v, err := b.answer(n)
	return v, time.Time{}, err
}

func TestMissesOfOneKeyAtOnceShareOneQuery(t *testing.T) {
	c := newTTLCache[string, string](time.Minute)
	now := time.Now()
	b := newBlockingLoad(func(int32) (string, error) { return "facts", nil })
	const n = 16
	got := make([]string, n)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); got[0], _ = c.fill(context.Background(), "page", now, b.load) }()
	<-b.started
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); got[i], _ = c.fill(context.Background(), "page", now, b.load) }()
	}
	time.Sleep(20 * time.Millisecond) // the others are waiting, or any stray query has started
	close(b.release)
	wg.Wait()
	if calls := b.calls.Load(); calls != 1 {
		t.Fatalf("%d requests missing one key at once made %d queries, want 1", n, calls)
	}
	for i, v := range got {
		if v != "facts" {
			t.Fatalf("request %d got %q, want the shared answer", i, v)
		}
	}
	if v, ok := c.get("page", now); !ok || v != "facts" {
		t.Fatalf("after the query the cache holds %q, %v", v, ok)
	}
}

func TestAQueryUnderWayWhenAForgetComesIsNeitherJoinedNorKept(t *testing.T) {
	c := newTTLCache[string, string](time.Minute)
	now := time.Now()
	b := newBlockingLoad(func(call int32) (string, error) {
		if call == 1 {
			return "before the revocation", nil
		}
		return "after the revocation", nil
	})
	first := make(chan string)
	go func() { v, _ := c.fill(context.Background(), "token", now, b.load); first <- v }()
	<-b.started
	c.forget(func(string, string) bool { return true })

	second := make(chan string, 1)
	go func() { v, _ := c.fill(context.Background(), "token", now, b.load); second <- v }()
	select {
	case <-b.started: // a request after the forget ran its own query
	case <-time.After(5 * time.Second):
		t.Fatal("a request after the forget joined the query begun before it")
	}
	b.release <- struct{}{}
	b.release <- struct{}{}
	a, s := <-first, <-second
	if a != "before the revocation" || s != "after the revocation" {
		t.Fatalf("answers %q and %q", a, s)
	}
	if v, _ := c.get("token", now); v != "after the revocation" {
		t.Fatalf("the cache keeps %q, want the answer read after the forget", v)
	}
}

func TestAFailedQueryIsNotAnotherRequestsError(t *testing.T) {
	c := newTTLCache[string, string](time.Minute)
	now := time.Now()
	b := newBlockingLoad(func(call int32) (string, error) {
		if call == 1 {
			return "", context.Canceled // the first request went away
		}
		return "facts", nil
	})
	first := make(chan error)
	go func() { _, err := c.fill(context.Background(), "page", now, b.load); first <- err }()
	<-b.started
	second := make(chan string)
	go func() {
		v, err := c.fill(context.Background(), "page", now, b.load)
		if err != nil {
			v = "error: " + err.Error()
		}
		second <- v
	}()
	time.Sleep(20 * time.Millisecond) // the second waits on the first's query
	b.release <- struct{}{}
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("the first request got %v, want its own error", err)
	}
	<-b.started // the waiter queries on its own
	b.release <- struct{}{}
	if v := <-second; v != "facts" {
		t.Fatalf("the waiting request got %q, want its own answer", v)
	}
	if v, _ := c.get("page", now); v != "facts" {
		t.Fatalf("the cache holds %q", v)
	}
}

func TestAnAnswerIsKeptUntilItsOwnDeadlineAndNeverPastTheTTL(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name  string
		until time.Time
		want  time.Time
	}{
		{"no deadline of its own", time.Time{}, now.Add(2 * time.Second)},
		{"a deadline before the TTL", now.Add(time.Second), now.Add(time.Second)},
		{"a deadline after the TTL", now.Add(time.Hour), now.Add(2 * time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTTLCache[string, string](2 * time.Second)
			if _, err := c.fill(context.Background(), "k", now, func() (string, time.Time, error) { return "v", tc.until, nil }); err != nil {
				t.Fatal(err)
			}
			if _, ok := c.get("k", tc.want.Add(-time.Millisecond)); !ok {
				t.Fatal("gone before its deadline")
			}
			if _, ok := c.get("k", tc.want); ok {
				t.Fatal("kept past its deadline")
			}
		})
	}
}

func TestWithNoTTLEveryRequestQueries(t *testing.T) {
	c := newTTLCache[string, string](0)
	var calls int
	for range 3 {
		v, err := c.fill(context.Background(), "k", time.Now(), func() (string, time.Time, error) { calls++; return "v", time.Time{}, nil })
		if err != nil || v != "v" {
			t.Fatal(v, err)
		}
	}
	if _, ok := c.get("k", time.Now()); ok || calls != 3 {
		t.Fatalf("cached %v, %d queries; want nothing cached and 3", ok, calls)
	}
}
