// Package lanetest serves a fast lane inside a test's own process, for the
// tests of the lane and of what runs over it.
package lanetest

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/svcplatform/svc/internal/plugin/protocol"
)

// Serve serves srv on a socket of its own until the test ends and returns
// the socket's path.
func Serve(tb testing.TB, srv *protocol.LaneServer) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "lane")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(dir) })
	path := filepath.Join(dir, protocol.FastLaneSocket)
	ln, err := net.Listen("unix", path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = ln.Close() })
	go func() { _ = srv.Serve(ln) }()
	return path
}

// Dial serves srv (see Serve) and returns a client of it with conns
// connections, closed when the test ends. The server must admit this
// process (LaneServer.Allow).
func Dial(tb testing.TB, srv *protocol.LaneServer, conns int) *protocol.LaneClient {
	tb.Helper()
	lane, err := protocol.DialLane(context.Background(), Serve(tb, srv), conns, os.Getpid())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = lane.Close() })
	return lane
}
