package prune

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// A failed round is logged and the loop goes on to the next; the loop ends
// with its context.
func TestAFailedRoundIsLoggedAndTheNextRoundStillRuns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&syncWriter{mu: &mu, w: &buf}, nil))
	rounds := make(chan struct{}, 10)
	done := make(chan struct{})
	go func() {
		Every(ctx, time.Millisecond, log, func(context.Context) error {
			rounds <- struct{}{}
			return errors.New("boom")
		})
		close(done)
	}()
	<-rounds
	<-rounds
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the loop did not end with its context")
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(buf.String(), "boom") {
		t.Fatalf("the failure was not logged: %q", buf.String())
	}
}

type syncWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
