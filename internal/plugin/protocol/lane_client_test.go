package protocol_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
	"github.com/svcplatform/svc/internal/plugin/protocol/lanetest"
)

// sleepyLane serves a lane whose calls sleep for the milliseconds their
// procedure names ("/sleep/<ms>"), or until the gateway leaves, and answer
// their request back; it returns a client of it with one connection.
func sleepyLane(t testing.TB) *protocol.LaneClient {
	t.Helper()
	return laneServing(t, func(ctx context.Context, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse {
		if ms, err := strconv.Atoi(filepath.Base(req.GetProcedure())); err == nil {
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
			case <-ctx.Done():
			}
		}
		return &pluginv1.InvokeResponse{Response: req.GetRequest()}
	})
}

// laneServing serves a lane with handler and returns a client of it with
// one connection.
func laneServing(t testing.TB, handler func(context.Context, *pluginv1.InvokeRequest) *pluginv1.InvokeResponse) *protocol.LaneClient {
	t.Helper()
	return lanetest.Dial(t, &protocol.LaneServer{Handler: handler, Allow: func(int) bool { return true }}, 1)
}

func sleep(ms int, request []byte) *pluginv1.InvokeRequest {
	return &pluginv1.InvokeRequest{Procedure: "/sleep/" + strconv.Itoa(ms), Request: request}
}

// TestALaneCallEndsWithItsContextWhetherItEndsBeforeOrAfterTheCallIsWatched
// checks the rule of the lane client's watch: a call is watched for its
// context only once the watchdog finds it running (after 10–20 ms), and
// from the start when its deadline is near or its request large; whenever
// the context ends, the call ends with it (at the latest when the watch
// starts), long before the plugin would answer, and the lane serves the
// next call.
func TestALaneCallEndsWithItsContextWhetherItEndsBeforeOrAfterTheCallIsWatched(t *testing.T) {
	t.Parallel()
	large := make([]byte, 1<<20)
	for _, tc := range []struct {
		name    string
		request []byte
		end     func() (context.Context, context.CancelFunc)
		want    error
	}{
		{"a deadline before the watch starts", nil, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 5*time.Millisecond)
		}, context.DeadlineExceeded},
		{"a deadline after the watch started", nil, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 60*time.Millisecond)
		}, context.DeadlineExceeded},
		{"cancelled before the watch starts", nil, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(5*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
		{"cancelled after the watch started", nil, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(60*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
		{"a large request, watched from the start", large, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(5*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lane := sleepyLane(t)
			ctx, cancel := tc.end()
			defer cancel()
			start := time.Now()
			_, err := lane.Invoke(ctx, sleep(5000, tc.request))
			if !errors.Is(err, tc.want) || time.Since(start) > 2*time.Second {
				t.Fatalf("call = %v after %s, want %v at once", err, time.Since(start), tc.want)
			}
			resp, err := lane.Invoke(context.Background(), sleep(0, []byte("next")))
			if err != nil || string(resp.GetResponse()) != "next" {
				t.Fatalf("next call = %v, %v", resp, err)
			}
		})
	}
}

// TestALaneCallThePluginNeverAnswersIsCutAtItsDeadlineAndItsConnectionNotReused
// checks the watch without a timer per call: a call whose deadline is
// near is watched from the start, one whose deadline is farther once the
// watchdog claims it; either way it ends at its deadline, not later, and
// its connection is closed (the plugin sees it end), never handed to the
// next call.
func TestALaneCallThePluginNeverAnswersIsCutAtItsDeadlineAndItsConnectionNotReused(t *testing.T) {
	t.Parallel()
	for _, deadline := range []time.Duration{30 * time.Millisecond, 150 * time.Millisecond} {
		t.Run(deadline.String(), func(t *testing.T) {
			t.Parallel()
			never := make(chan struct{})
			defer close(never)
			var ended atomic.Int32
			lane := lanetest.Dial(t, &protocol.LaneServer{
				Handler: func(_ context.Context, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse {
					if req.GetProcedure() == "/never" {
						select { // ignores its context: does not answer while the gateway waits
						case <-never:
						case <-time.After(5 * time.Second):
						}
					}
					return &pluginv1.InvokeResponse{Response: req.GetRequest()}
				},
				Allow: func(int) bool { return true },
				Ended: func() { ended.Add(1) },
			}, 1)
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			start := time.Now()
			_, err := lane.Invoke(ctx, &pluginv1.InvokeRequest{Procedure: "/never"})
			took := time.Since(start)
			if !errors.Is(err, context.DeadlineExceeded) || took < deadline || took > deadline+250*time.Millisecond {
				t.Fatalf("call = %v after %s, want context.DeadlineExceeded at its deadline (%s)", err, took, deadline)
			}
			if n := lane.Open(); n != 0 {
				t.Fatalf("%d connections open after the cut, want 0: the cut one was kept", n)
			}
			resp, err := lane.Invoke(context.Background(), &pluginv1.InvokeRequest{Procedure: "/next", Request: []byte("next")})
			if err != nil || string(resp.GetResponse()) != "next" {
				t.Fatalf("next call = %v, %v", resp, err)
			}
			if n := lane.Open(); n != 1 {
				t.Fatalf("%d connections open after the next call, want 1 (a new one)", n)
			}
			for wait := time.Now(); ended.Load() == 0; time.Sleep(time.Millisecond) {
				if time.Since(wait) > 2*time.Second {
					t.Fatal("the plugin never saw the cut connection end")
				}
			}
		})
	}
}

func TestALaneCallWhoseCallerHasAlreadyLeftIsNeverSent(t *testing.T) {
	t.Parallel()
	var ran atomic.Int32
	lane := laneServing(t, func(_ context.Context, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse {
		if req.GetProcedure() == "/write" {
			ran.Add(1)
		}
		return &pluginv1.InvokeResponse{Response: req.GetRequest()}
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := lane.Invoke(ctx, &pluginv1.InvokeRequest{Procedure: "/write"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("call after its caller left = %v, want context.Canceled", err)
	}
	resp, err := lane.Invoke(context.Background(), &pluginv1.InvokeRequest{Procedure: "/write", Request: []byte("next")})
	if err != nil || string(resp.GetResponse()) != "next" {
		t.Fatalf("next call = %v, %v", resp, err)
	}
	if n := ran.Load(); n != 1 {
		t.Fatalf("the plugin ran %d calls, want 1: the one whose caller had left was sent", n)
	}
}

func TestTheConnectionsABurstOpenedAreClosedOnceIdleAndTheFirstOnesKept(t *testing.T) {
	t.Parallel()
	var ended atomic.Int32
	release := make(chan struct{})
	srv := &protocol.LaneServer{Allow: func(int) bool { return true }, Ended: func() { ended.Add(1) },
		// Serving streams keeps DialLane's stream probe from closing a
		// connection of its own.
		Stream: func(context.Context, *pluginv1.InvokeRequest, func(*pluginv1.InvokeResponse) error) error { return nil },
		Handler: func(_ context.Context, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse {
			if req.GetProcedure() == "/hold" {
				<-release
			}
			return &pluginv1.InvokeResponse{Response: req.GetRequest()}
		}}
	lane := lanetest.Dial(t, srv, 2)
	// A burst of 8 calls in flight at once takes 8 connections.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := lane.Invoke(context.Background(), &pluginv1.InvokeRequest{Procedure: "/hold"}); err != nil {
				t.Error(err)
			}
		})
	}
	for deadline := time.Now().Add(10 * time.Second); lane.Open() < 8; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open during the burst, want 8", lane.Open())
		}
	}
	close(release)
	wg.Wait()
	// Once idle, the 6 beyond the 2 dialled first are closed, on both sides.
	for deadline := time.Now().Add(10 * time.Second); ended.Load() < 6 || lane.Open() > 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after the burst: %d connections open, %d ended in the plugin; want 2 and 6", lane.Open(), ended.Load())
		}
	}
	time.Sleep(500 * time.Millisecond) // well past the idle timeout: the kept ones stay
	if lane.Open() != 2 || ended.Load() != 6 {
		t.Fatalf("the first connections were closed too: %d open, %d ended", lane.Open(), ended.Load())
	}
	resp, err := lane.Invoke(context.Background(), &pluginv1.InvokeRequest{Procedure: "/echo", Request: []byte("after")})
	if err != nil || string(resp.GetResponse()) != "after" {
		t.Fatalf("a call after the sweep = %v, %v", resp, err)
	}
}

// TestALaneCallAnsweredBeforeOrAfterTheWatchStartsGetsItsAnswer checks
// that a call claimed by the watchdog (see watchdog.go) is answered as one
// that was not, and that the connection serves the next call.
func TestALaneCallAnsweredBeforeOrAfterTheWatchStartsGetsItsAnswer(t *testing.T) {
	t.Parallel()
	lane := sleepyLane(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, ms := range []int{0, 1, 30, 0, 60} {
		want := []byte("answer after " + strconv.Itoa(ms) + " ms")
		resp, err := lane.Invoke(ctx, sleep(ms, want))
		if err != nil || string(resp.GetResponse()) != string(want) {
			t.Fatalf("call of %d ms = %v, %v", ms, resp, err)
		}
	}
}

func TestALaneAnswerIsReadIntoTheCallersBufferWhenItFits(t *testing.T) {
	t.Parallel()
	lane := sleepyLane(t)
	payload := bytes.Repeat([]byte("answer "), 20)
	answer := make([]byte, 0, 1024)
	resp, err := lane.InvokeInto(context.Background(), sleep(0, payload), answer)
	if err != nil || !bytes.Equal(resp.GetResponse(), payload) {
		t.Fatalf("answer = %q, %v", resp.GetResponse(), err)
	}
	if !bytes.Contains(answer[:cap(answer)], payload) {
		t.Fatal("the answer was not read into the caller's buffer")
	}
	small := make([]byte, 0, 10)
	resp, err = lane.InvokeInto(context.Background(), sleep(0, payload), small)
	if err != nil || !bytes.Equal(resp.GetResponse(), payload) {
		t.Fatalf("answer larger than the buffer = %q, %v", resp.GetResponse(), err)
	}
	// The connection's own buffer is not the caller's: the next call's
	// answer leaves the first one alone.
	first, err := lane.Invoke(context.Background(), sleep(0, []byte("first")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lane.InvokeInto(context.Background(), sleep(0, []byte("other")), answer); err != nil {
		t.Fatal(err)
	}
	if string(first.GetResponse()) != "first" {
		t.Fatalf("a later call changed an earlier answer to %q", first.GetResponse())
	}
}

// BenchmarkLaneCall measures the gateway's side of a lane call (the
// plugin's side runs in the same process and counts too) under a request's
// context, a fresh cancellable context per call as net/http gives each
// request, with the answer copied out of the connection's buffer and read
// into the caller's.
//
//	go test -run '^$' -bench LaneCall -benchmem ./internal/plugin/protocol/
func BenchmarkLaneCall(b *testing.B) {
	lane := sleepyLane(b)
	req := sleep(0, []byte("a sixty-byte answer is what the hop benchmark's reference uses"))
	b.Run("copied", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithCancel(context.Background())
			if _, err := lane.Invoke(ctx, req); err != nil {
				b.Fatal(err)
			}
			cancel()
		}
	})
	b.Run("into", func(b *testing.B) {
		answer := make([]byte, 0, 4096)
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithCancel(context.Background())
			if _, err := lane.InvokeInto(ctx, req, answer); err != nil {
				b.Fatal(err)
			}
			cancel()
		}
	})
}

// TestALaneCallsContextEndsAtTheDeadlineItCarries: the plugin's runtime
// relies on it to add no context of its own (pluginrt.callContext).
func TestALaneCallsContextEndsAtTheDeadlineItCarries(t *testing.T) {
	t.Parallel()
	type seen struct {
		deadline time.Time
		ok       bool
		err      error
	}
	got := make(chan seen, 1)
	lane := laneServing(t, func(ctx context.Context, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse {
		if req.GetProcedure() != "/p" {
			return &pluginv1.InvokeResponse{}
		}
		d, ok := ctx.Deadline()
		select { // the gateway is still there: only the deadline ends it
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
		}
		got <- seen{d, ok, ctx.Err()}
		return &pluginv1.InvokeResponse{}
	})
	deadline := time.Now().Add(30 * time.Millisecond)
	if _, err := lane.Invoke(context.Background(), &pluginv1.InvokeRequest{Procedure: "/p", DeadlineUnixNano: deadline.UnixNano()}); err != nil {
		t.Fatal(err)
	}
	s := <-got
	if !s.ok || !s.deadline.Equal(time.Unix(0, deadline.UnixNano())) || !errors.Is(s.err, context.DeadlineExceeded) {
		t.Fatalf("the call's context: deadline %v (%v), ended with %v; want %v and context.DeadlineExceeded", s.deadline, s.ok, s.err, deadline)
	}
}
