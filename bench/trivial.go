package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// TrivialBody is the 60-byte JSON answer of the trivial server, the size of
// the plain net/http reference in shared/PERFORMANCE.md.
var TrivialBody = []byte(`{"id":"1234567890","message":"hello from plain net/http!!"}` + "\n")

// ServeTrivial serves TrivialBody on every path with plain net/http until
// ctx ends, printing "listening on ADDR" to out once it accepts.
func ServeTrivial(ctx context.Context, addr string, out io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(TrivialBody)
	}), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "listening on %s\n", ln.Addr())
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}
