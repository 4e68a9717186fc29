package server_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/server"
	"github.com/svcplatform/svc/gateway/internal/serving"
)

func TestAGracefulShutdownEndsStreamsThatWatchForIt(t *testing.T) {
	t.Parallel()
	s := server.New(server.Options{Metrics: observe.NewMetrics(), Ready: func(context.Context) error { return nil }})
	opened := make(chan struct{})
	s.Handle("/stream", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		close(opened)
		// A stream that would last forever, but for the shutdown.
		select {
		case <-serving.ShuttingDown(r.Context()):
		case <-r.Context().Done():
		}
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	// The grace is long: a shutdown that had to wait for the stream would
	// end in its deadline error, not in time.
	go func() { served <- s.ListenAndServe(ctx, ln, "", "", time.Minute) }()
	res, err := http.Get("http://" + ln.Addr().String() + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	<-opened
	stop()
	if err := <-served; err != nil {
		t.Fatalf("shutdown with an open stream: %v", err)
	}
}

func TestOutsideAServerNothingShutsDown(t *testing.T) {
	t.Parallel()
	if ch := serving.ShuttingDown(context.Background()); ch != nil {
		t.Fatal("a context outside a server has a shutdown signal")
	}
}
