package protocol

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Handler runs one call. It never fails: a failed call is an
// InvokeResponse carrying an Error. req is the lane's: it is reused for the
// connection's next call, so a handler keeps none of it past the call
// (what proto.Unmarshal made, its strings and sub-messages, it may keep).
type Handler func(ctx context.Context, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse

// StreamHandler runs one server-streaming call, handing each answer to
// send (a refusal is an answer carrying an Error). It returns send's error
// when the gateway is gone.
type StreamHandler func(ctx context.Context, req *pluginv1.InvokeRequest, send func(*pluginv1.InvokeResponse) error) error

// LaneServer is the plugin's side of the fast lane.
//
// The gateway sends one call at a time on a connection and opens more
// connections for concurrent calls, so each connection is served by one
// goroutine that reads a call, runs it and writes the answer: no goroutine
// hand-off on the way, which is most of what a hop costs. A streaming call
// (frameFlag on its request) is answered with frames flagged "more", ended
// by one frame without the flag.
type LaneServer struct {
	// Handler runs each unary call.
	Handler Handler
	// Stream runs each server-streaming call; nil: a streaming call closes
	// the connection, as a plugin built before lane streams does, so the
	// gateway streams over gRPC.
	Stream StreamHandler
	// Allow tells whether the process pid may connect. It is asked once per
	// connection, with the pid the kernel reports for the peer.
	Allow func(pid int) bool
	// Logger reports refused connections; nil: slog.Default().
	Logger *slog.Logger
	// Release, when not nil, is handed each answer once it has been
	// written (or failed to be): the lane keeps no reference to it or to
	// the bytes it carries, so they may be reused. Called once per answer.
	Release func(*pluginv1.InvokeResponse)
	// Ended, when not nil, is called as each connection ends (the gateway
	// closes the connections a burst of calls opened once it is over); a
	// connection may report its end more than once.
	Ended func()

	// blockingTaken: a connection is read in blocking mode (serveConn).
	blockingTaken atomic.Bool
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
	pid, err := peerPID(c)
	if err != nil {
		_ = c.Close()
		s.logger().Warn("fast lane: refused a connection: no peer credentials", "error", err)
		return
	}
	if s.Allow == nil || !s.Allow(pid) {
		_ = c.Close()
		s.logger().Warn("fast lane: refused a connection from a process other than the gateway", "peer_pid", pid)
		return
	}
	// One connection at a time is read in blocking mode (a read sleeping
	// in the kernel: no epoll wait, no goroutine switch, one system call),
	// the others on the network poller. Blocking costs less per call while
	// calls come one at a time, and more under concurrent calls, where each
	// would wake a thread of its own instead of one poller wake finding
	// several. The blocking one is the first this server accepts (the next
	// one once it closes), which the gateway dials first and takes for a
	// call whenever it is idle (LaneClient.first): calls one at a time go
	// over it, concurrent ones spread on the polled ones.
	var rw io.ReadWriteCloser = c
	blocking := false
	if s.blockingTaken.CompareAndSwap(false, true) {
		f, err := blockingIO(c)
		if err != nil {
			s.blockingTaken.Store(false)
			s.logger().Error("fast lane: connection unusable", "error", err)
			return
		}
		rw, blocking = f, true
	}
	sc := &servedConn{s: s, rw: rw, blocking: blocking, r: bufio.NewReaderSize(rw, 4<<10), req: new(pluginv1.InvokeRequest), handover: make(chan struct{}, 1)}
	sc.slot.overrun = sc.startWatch
	calls.add(&sc.slot)
	sc.serve(nil, false)
}

// servedConn is one fast-lane connection of the plugin. One goroutine at a
// time owns it: it reads a call, runs it and writes the answer.
type servedConn struct {
	s  *LaneServer
	rw io.ReadWriteCloser
	// blocking: rw is the server's blocking connection (see serveConn).
	blocking bool
	r        *bufio.Reader
	// scratch holds the frame being read; out the answer being written;
	// req the call being run.
	scratch, out []byte
	req          *pluginv1.InvokeRequest
	dec          requestDecoder

	// The watch of the call being run (see run), made once per connection
	// so that a call allocates none of it. slot is the connection's place
	// in the watchdog, which starts a watcher for a call running long;
	// cancel ends the call's context; handover passes the connection from
	// the call's goroutine to its watcher once the answer is written.
	slot     watchSlot
	cancel   context.CancelFunc
	handover chan struct{}
}

// serve runs calls until the connection fails or is handed to a watcher.
// first, when not nil, is a call already read (by the watcher that now
// serves the connection).
func (sc *servedConn) serve(first []byte, stream bool) {
	body := first
	for {
		if body == nil {
			var err error
			if body, stream, err = readFrame(sc.r, &sc.scratch); err != nil {
				sc.close()
				return
			}
		}
		req := sc.req
		// decode is proto.Unmarshal's result, most strings shared with the
		// connection's last call; what it does not know, proto.Unmarshal decodes.
		if !sc.dec.decode(body, req) {
			if err := proto.Unmarshal(body, req); err != nil {
				sc.s.logger().Error("fast lane: undecodable request; closing the connection", "error", err)
				sc.close()
				return
			}
		}
		body = nil
		if stream && sc.s.Stream == nil {
			sc.close() // as a plugin older than lane streams does
			return
		}
		if !sc.run(req, stream) {
			return // the watcher owns the connection now
		}
	}
}

// run runs one call and writes its answer; it reports whether this
// goroutine still owns the connection.
//
// The gateway sends nothing on a connection while its call runs, and
// closes it when it gives up (its client left, or its deadline passed).
// A call that runs past the watchdog's second tick (10–20 ms) gets a
// watcher: a goroutine that
// reads the connection, so that the gateway leaving cancels the call's
// context at once (a stream whose upstream sends nothing, or an upstream
// slow to answer, would otherwise run on for nobody). What the watcher
// reads after the answer is the gateway's next call, and it then serves
// the connection itself, so a call never hands a frame to another
// goroutine and a short call starts no goroutine at all.
func (sc *servedConn) run(req *pluginv1.InvokeRequest, stream bool) (owned bool) {
	// A call runs to its own deadline (InvokeRequest.deadline_unix_nano), or
	// until the watcher sees the gateway leave: one context for both, which
	// the plugin's runtime takes as it is (pluginrt.callContext adds no
	// second context and timer for the same deadline).
	ctx, cancel := callContext(req)
	defer cancel()
	// The watchdog reads cancel once it has seen the call begin: begin's
	// store orders the two.
	sc.cancel = cancel
	sc.slot.begin(calls)
	id := req.GetCallId()
	failed := false
	if stream {
		err := sc.s.Stream(ctx, req, func(resp *pluginv1.InvokeResponse) error {
			defer sc.release(resp)
			return sc.write(id, resp, true)
		})
		failed = errors.Is(err, errLaneWrite)
	}
	var last *pluginv1.InvokeResponse
	if stream {
		last = &pluginv1.InvokeResponse{} // the end of the stream
	} else {
		last = sc.s.Handler(ctx, req)
	}
	owned = sc.slot.end()
	if !failed {
		failed = sc.write(id, last, false) != nil
	}
	sc.release(last)
	if owned {
		if failed {
			sc.close()
		}
		return !failed
	}
	sc.handover <- struct{}{} // the watcher serves the connection from now on
	return false
}

// callContext is a call's context: cancelled by its cancel function, and
// at the call's deadline when it has one.
func callContext(req *pluginv1.InvokeRequest) (context.Context, context.CancelFunc) {
	if d := req.GetDeadlineUnixNano(); d > 0 {
		return context.WithDeadline(context.Background(), time.Unix(0, d))
	}
	return context.WithCancel(context.Background())
}

// startWatch starts a watcher for the call being run, which the watchdog
// claimed as overrunning: the call's goroutine hands the connection over
// to it once the answer is written (run).
func (sc *servedConn) startWatch() {
	go sc.watch(sc.cancel)
}

// release hands an answer back to the server's Release once written.
func (sc *servedConn) release(resp *pluginv1.InvokeResponse) {
	if sc.s.Release != nil {
		sc.s.Release(resp)
	}
}

// errLaneWrite marks a failed write of an answer: the gateway is gone.
var errLaneWrite = errors.New("fast lane: write")

// write sends one answer of call id; more says that others follow.
func (sc *servedConn) write(id uint64, resp *pluginv1.InvokeResponse, more bool) error {
	resp.CallId = id
	var err error
	if sc.out, err = appendFlaggedFrame(sc.out[:0], resp, 0, more); err != nil {
		// Too large for a frame: answer the error instead.
		resp = &pluginv1.InvokeResponse{CallId: id, Error: &pluginv1.Error{ConnectCode: 8, Message: err.Error()}}
		if sc.out, err = appendFlaggedFrame(sc.out[:0], resp, 0, more); err != nil {
			return fmt.Errorf("%w: %v", errLaneWrite, err)
		}
	}
	_, err = sc.rw.Write(sc.out)
	if cap(sc.out) > 64<<10 {
		sc.out = nil // do not keep a rare large answer's buffer
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errLaneWrite, err)
	}
	return nil
}

// watch reads the connection while a call runs (see run). A failed read is
// the gateway leaving: the call is cancelled, and the connection closed
// once the call has ended. A frame is the gateway's next call, sent after
// the answer: it is served here once the call's goroutine let go.
func (sc *servedConn) watch(cancel context.CancelFunc) {
	var scratch []byte
	body, stream, err := readFrame(sc.r, &scratch)
	if err != nil {
		cancel()
		<-sc.handover
		sc.close()
		return
	}
	<-sc.handover
	sc.scratch = scratch
	sc.serve(body, stream)
}

// close closes the connection and reports its end (LaneServer.Ended).
func (sc *servedConn) close() {
	calls.remove(&sc.slot)
	if sc.blocking {
		// Before the close, which the gateway may answer with a dial at
		// once: that connection is its new first.
		sc.s.blockingTaken.Store(false)
		sc.blocking = false
	}
	_ = sc.rw.Close()
	if sc.s.Ended != nil {
		sc.s.Ended()
	}
}
