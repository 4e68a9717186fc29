package protocol

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Handler runs one call. It never fails: a failed call is an
// InvokeResponse carrying an Error.
type Handler func(ctx context.Context, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse

// LaneServer is the plugin's side of the fast lane.
//
// The gateway sends one call at a time on a connection and opens more
// connections for concurrent calls, so each connection is served by one
// goroutine that reads a call, runs it and writes the answer: no goroutine
// hand-off on the way, which is most of what a hop costs.
type LaneServer struct {
	// Handler runs each call.
	Handler Handler
	// Allow tells whether the process pid may connect. It is asked once per
	// connection, with the pid the kernel reports for the peer.
	Allow func(pid int) bool
	// Logger reports refused connections; nil: slog.Default().
	Logger *slog.Logger
}

// Serve accepts connections on ln until ln is closed.
func (s *LaneServer) Serve(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go s.serveConn(c)
	}
}

func (s *LaneServer) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func (s *LaneServer) serveConn(c net.Conn) {
	defer func() { _ = c.Close() }()
	pid, err := peerPID(c)
	if err != nil {
		s.logger().Warn("fast lane: refused a connection: no peer credentials", "error", err)
		return
	}
	if s.Allow == nil || !s.Allow(pid) {
		s.logger().Warn("fast lane: refused a connection from a process other than the gateway", "peer_pid", pid)
		return
	}
	rw, err := blockingIO(c)
	if err != nil {
		s.logger().Error("fast lane: connection unusable", "error", err)
		return
	}
	defer func() { _ = rw.Close() }()
	// A call runs to its own deadline (InvokeRequest.deadline_unix_nano); a
	// gateway that gives up earlier closes the connection, and the answer
	// is dropped.
	ctx := context.Background()
	r := bufio.NewReaderSize(rw, 4<<10)
	var scratch, out []byte
	for {
		body, err := readFrame(r, &scratch)
		if err != nil {
			return
		}
		req := new(pluginv1.InvokeRequest)
		if err := proto.Unmarshal(body, req); err != nil {
			s.logger().Error("fast lane: undecodable request; closing the connection", "error", err)
			return
		}
		resp := s.Handler(ctx, req)
		resp.CallId = req.GetCallId()
		if out, err = appendFrame(out[:0], resp, 0); err != nil {
			// Too large for a frame: answer the error instead.
			resp = &pluginv1.InvokeResponse{CallId: req.GetCallId(), Error: &pluginv1.Error{ConnectCode: 8, Message: err.Error()}}
			if out, err = appendFrame(out[:0], resp, 0); err != nil {
				return
			}
		}
		if _, err := rw.Write(out); err != nil {
			return
		}
		if cap(out) > 64<<10 {
			out = nil // do not keep a rare large answer's buffer
		}
	}
}
