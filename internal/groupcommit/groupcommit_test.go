package groupcommit_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/groupcommit"
)

// waitFor polls cond for up to five seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestWorkThatFindsNoBatchRunningGoesAtOnceAlone(t *testing.T) {
	var batches [][]int
	b := groupcommit.New(func(_ context.Context, batch []int) { batches = append(batches, slices.Clone(batch)) }, groupcommit.Options{MaxRunning: 1, MaxBatch: 8})
	b.Do(context.Background(), 1)
	b.Do(context.Background(), 2)
	if want := [][]int{{1}, {2}}; !slices.EqualFunc(batches, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", batches, want)
	}
	if b.Together() != 0 {
		t.Fatalf("Together %d, want 0", b.Together())
	}
}

func TestWorkThatArrivesWhileABatchRunsGoesInTheNextBatchesInOrderBoundedByMaxBatch(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var batches [][]int
	b := groupcommit.New(func(_ context.Context, batch []int) {
		if batch[0] == 0 {
			close(started)
			<-release
		}
		mu.Lock()
		batches = append(batches, slices.Clone(batch))
		mu.Unlock()
	}, groupcommit.Options{MaxRunning: 1, MaxBatch: 2})
	var wg sync.WaitGroup
	wg.Go(func() { b.Do(context.Background(), 0) })
	<-started
	for i := 1; i <= 5; i++ {
		wg.Go(func() { b.Do(context.Background(), i) })
		waitFor(t, "the item to wait", func() bool { return b.Waiting() == i })
	}
	close(release)
	wg.Wait()
	want := [][]int{{1, 2}, {3, 4}, {5}}
	if !slices.EqualFunc(batches[1:], want, slices.Equal) || !slices.Equal(batches[0], []int{0}) {
		t.Fatalf("batches %v, want [[0] %v...]", batches, want)
	}
	if b.Together() != 4 {
		t.Fatalf("Together %d, want 4 (the two batches of two)", b.Together())
	}
}

func TestNoItemReturnsBeforeItsBatchHasRun(t *testing.T) {
	type item struct{ ran bool }
	started, release := make(chan struct{}, 1), make(chan struct{})
	b := groupcommit.New(func(_ context.Context, batch []*item) {
		started <- struct{}{}
		<-release
		for _, it := range batch {
			it.ran = true
		}
	}, groupcommit.Options{MaxRunning: 1, MaxBatch: 8})
	first, second := &item{}, &item{}
	done := make(chan *item, 2)
	go func() { b.Do(context.Background(), first); done <- first }()
	<-started
	go func() { b.Do(context.Background(), second); done <- second }()
	waitFor(t, "the second item to wait", func() bool { return b.Waiting() == 1 })
	select {
	case it := <-done:
		t.Fatalf("an item returned before its batch ran (%p)", it)
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	<-started // the second batch
	for range 2 {
		if it := <-done; !it.ran {
			t.Fatal("an item returned without having run")
		}
	}
}
