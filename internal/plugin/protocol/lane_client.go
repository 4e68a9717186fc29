package protocol

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// ErrLaneClosed is returned by calls on a closed LaneClient.
var ErrLaneClosed = errors.New("fast lane closed")

// Pool bounds. Past maxOpen concurrent calls, a call waits for a connection.
// Past maxStreams streams at once, a stream is refused with ErrLaneBusy (the
// host answers it unavailable): a stream may last as long as its client
// wants (a device's card stream), and holds a connection and, in the
// plugin, a goroutine (its watcher's read) all that time, so streams
// never take the unary calls' 256 connections nor a goroutine each without
// bound.
const (
	maxIdle    = 128
	maxStreams = 1024
	maxOpen    = 256 + maxStreams
)

// idleTimeout is how long a connection beyond the first ones dialled
// (DialLane's conns) may sit idle before it is closed. A burst of
// concurrent calls opens as many connections as it has calls in flight,
// and each keeps buffers on both sides (its read and write buffers here,
// the plugin's frame and answer buffers and goroutine there); once the
// burst is over, closing them lets both processes hand that memory back
// (internal/memtrim trims after half a second of quiet, so this is
// shorter). Under steady load the connections in use are used far more
// often than this, and only those past the current need are closed.
const idleTimeout = 200 * time.Millisecond

// ErrLaneBusy is returned by InvokeStream when maxStreams streams are open
// on the lane; nothing was sent.
var ErrLaneBusy = errors.New("fast lane: too many streams open")

// LaneClient is the gateway's side of the fast lane to one plugin process:
// a pool of persistent connections, each carrying one call at a time.
//
// One call per connection is the point: the calling goroutine writes the
// request and reads the answer itself, with no reader goroutine to hand the
// answer over, and the plugin answers on the goroutine that read the call
// (see LaneServer). Multiplexing calls by call_id over four shared
// connections, with a reader goroutine on each side, measured about 95 µs of
// CPU per hop in BenchmarkHop on our 2-core machine; this design measures
// under 30 µs in the same conditions. call_id still numbers the calls of a
// connection, and an answer that does not match its call closes the
// connection.
//
// The calling side stays on Go's network poller (a blocking read would
// hold an OS thread per call in flight); the plugin reads one connection,
// first, in blocking mode and the others on its poller (see LaneServer).
type LaneClient struct {
	// MaxStreams, when not zero, replaces the bound on streams open at once
	// (maxStreams); set it before the first call.
	MaxStreams int32

	path    string
	peerPID int
	streams bool // the plugin serves streaming calls on the lane

	openStreams atomic.Int32

	mu     sync.Mutex
	idle   []*laneConn // most recently used last
	open   int
	closed bool
	freed  chan struct{} // signalled when a connection returns while calls wait
	waits  int
	// keep is how many idle connections are never closed for idleness;
	// sweeping says a sweep of the others is due (see idleTimeout).
	keep     int
	sweeping bool
	// first is the connection a call takes whenever it is idle: the first
	// one dialled (again, the next one dialled once it closed), which the
	// plugin reads in blocking mode (see LaneServer), so that calls one at
	// a time skip the plugin's network poller.
	first *laneConn
}

// DialLane opens conns connections to the fast-lane socket at path, ready
// for the first calls. When peerPID is not zero, a connection whose
// listener is not that process is refused: the gateway talks only to the
// plugin it started.
//
// Each connection is checked with a call naming no procedure, which a
// plugin answers with an error: a plugin that does not admit the gateway
// (see LaneServer.Allow) fails here rather than on the first real call.
// The first is also asked a streaming call naming no procedure: a plugin
// whose lane serves streams refuses it as a stream; an older one closes
// the connection (the flagged frame reads as over the size limit), and its
// streams go over gRPC.
func DialLane(ctx context.Context, path string, conns, peerPID int) (*LaneClient, error) {
	c := &LaneClient{path: path, peerPID: peerPID, freed: make(chan struct{}, 1), keep: max(conns, 1)}
	for i := range max(conns, 1) {
		lc, err := c.dial(ctx)
		if err == nil && i == 0 {
			ok, serr := lc.stream(ctx, &pluginv1.InvokeRequest{}, func(*pluginv1.InvokeResponse) error { return nil })
			if c.streams = ok && serr == nil; !c.streams {
				lc.close()
				lc, err = c.dial(ctx)
			}
		}
		if err == nil {
			if _, _, err = lc.call(ctx, &pluginv1.InvokeRequest{}, nil); err != nil {
				lc.close()
				err = fmt.Errorf("fast lane: the plugin does not answer on %s: %w", path, err)
			}
		}
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		c.open++
		c.idle = append(c.idle, lc)
		if c.first == nil {
			c.first = lc
		}
	}
	return c, nil
}

// Invoke runs one call. The error is a transport failure (the plugin is gone,
// or ctx ended); a failed call is a response carrying an Error.
func (c *LaneClient) Invoke(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	return c.InvokeInto(ctx, req, nil)
}

// InvokeInto is Invoke reading the answer into answer's capacity when it
// fits (else into a buffer of its own): the response's bytes then alias
// answer instead of being copied out of the connection's buffer. The
// caller owns answer, and may reuse it once done with the response. A nil
// answer is Invoke.
func (c *LaneClient) InvokeInto(ctx context.Context, req *pluginv1.InvokeRequest, answer []byte) (*pluginv1.InvokeResponse, error) {
	lc, err := c.get(ctx)
	if err != nil {
		return nil, err
	}
	resp, reusable, err := lc.call(ctx, req, answer)
	if reusable {
		c.put(lc)
	} else {
		c.discard(lc)
	}
	return resp, err
}

// InvokeStream runs one server-streaming call, handing each answer to recv
// in order; an answer carrying an Error ends the stream. It returns recv's
// error, or the transport's as Invoke does, or ErrLaneBusy. Only a plugin
// whose lane serves streams may be asked (see Streams).
func (c *LaneClient) InvokeStream(ctx context.Context, req *pluginv1.InvokeRequest, recv func(*pluginv1.InvokeResponse) error) error {
	limit := int32(maxStreams)
	if c.MaxStreams != 0 {
		limit = c.MaxStreams
	}
	if c.openStreams.Add(1) > limit {
		c.openStreams.Add(-1)
		return ErrLaneBusy
	}
	defer c.openStreams.Add(-1)
	lc, err := c.get(ctx)
	if err != nil {
		return err
	}
	reusable, err := lc.stream(ctx, req, recv)
	if reusable {
		c.put(lc)
	} else {
		c.discard(lc)
	}
	return err
}

// Open reports how many connections the client holds, idle or in use.
func (c *LaneClient) Open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

// Streams reports whether the plugin's lane serves streaming calls (a
// plugin built with an SDK older than lane streams does not).
func (c *LaneClient) Streams() bool { return c.streams }

// Close closes the idle connections now and the others as their calls end.
func (c *LaneClient) Close() error {
	c.mu.Lock()
	c.closed = true
	idle := c.idle
	c.idle = nil
	c.open -= len(idle)
	c.mu.Unlock()
	for _, lc := range idle {
		lc.close()
	}
	return nil
}

func (c *LaneClient) get(ctx context.Context) (*laneConn, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrLaneClosed
		}
		if n := len(c.idle); n > 0 {
			i := n - 1
			if c.first != nil && c.idle[i] != c.first {
				if j := slices.Index(c.idle, c.first); j >= 0 {
					i = j
				}
			}
			lc := c.idle[i]
			c.idle = slices.Delete(c.idle, i, i+1)
			c.mu.Unlock()
			return lc, nil
		}
		if c.open < maxOpen {
			c.open++
			c.mu.Unlock()
			lc, err := c.dial(ctx)
			c.mu.Lock()
			if err != nil {
				c.open--
				c.mu.Unlock()
				return nil, err
			}
			if c.first == nil {
				c.first = lc
			}
			c.mu.Unlock()
			return lc, nil
		}
		c.waits++
		c.mu.Unlock()
		select {
		case <-c.freed:
		case <-ctx.Done():
			c.mu.Lock()
			c.waits--
			c.mu.Unlock()
			return nil, ctx.Err()
		}
		c.mu.Lock()
		c.waits--
		c.mu.Unlock()
	}
}

func (c *LaneClient) put(lc *laneConn) {
	c.mu.Lock()
	if c.closed || len(c.idle) >= maxIdle {
		c.open--
		if c.first == lc {
			c.first = nil
		}
		c.mu.Unlock()
		lc.close()
		return
	}
	lc.idleSince = time.Now()
	c.idle = append(c.idle, lc)
	wake := c.waits > 0
	if len(c.idle) > c.keep && !c.sweeping {
		c.sweeping = true
		time.AfterFunc(idleTimeout, c.sweep)
	}
	c.mu.Unlock()
	if wake {
		select {
		case c.freed <- struct{}{}:
		default:
		}
	}
}

// sweep closes the idle connections past keep that have been idle for
// idleTimeout, and comes back for the younger ones while there are any.
func (c *LaneClient) sweep() {
	c.mu.Lock()
	cutoff := time.Now().Add(-idleTimeout)
	n := 0 // the idle list is oldest first
	for n < len(c.idle)-c.keep && c.idle[n].idleSince.Before(cutoff) {
		n++
	}
	stale := slices.Clone(c.idle[:n])
	if slices.Contains(stale, c.first) {
		c.first = nil
	}
	c.idle = append(c.idle[:0], c.idle[n:]...)
	c.open -= n
	if len(c.idle) > c.keep && !c.closed {
		time.AfterFunc(time.Until(c.idle[0].idleSince.Add(idleTimeout)), c.sweep)
	} else {
		c.sweeping = false
	}
	c.mu.Unlock()
	for _, lc := range stale {
		lc.close()
	}
}

func (c *LaneClient) discard(lc *laneConn) {
	lc.close()
	c.mu.Lock()
	c.open--
	if c.first == lc {
		c.first = nil
	}
	wake := c.waits > 0
	c.mu.Unlock()
	if wake {
		select {
		case c.freed <- struct{}{}:
		default:
		}
	}
}

func (c *LaneClient) dial(ctx context.Context) (*laneConn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.path)
	if err != nil {
		return nil, fmt.Errorf("fast lane: dial %s: %w", c.path, err)
	}
	if c.peerPID != 0 {
		pid, err := peerPID(conn)
		if err != nil || pid != c.peerPID {
			_ = conn.Close()
			return nil, fmt.Errorf("fast lane: %s is served by process %d, not the plugin (%d): %v", c.path, pid, c.peerPID, err)
		}
	}
	lc := &laneConn{conn: conn, r: bufio.NewReaderSize(conn, 4<<10), claimed: make(chan struct{}, 1)}
	lc.abort = func() { _ = lc.conn.Close() }
	lc.slot.overrun = lc.overrun
	calls.add(&lc.slot)
	return lc, nil
}

// close closes the connection for good.
func (lc *laneConn) close() {
	calls.remove(&lc.slot)
	_ = lc.conn.Close()
}

// laneConn is one connection, used by one call at a time.
type laneConn struct {
	conn   net.Conn
	r      *bufio.Reader
	wbuf   []byte
	rbuf   []byte
	lastID uint64
	// idleSince is when the connection last went back to the pool.
	idleSince time.Time
	// abort closes the connection, interrupting a call whose context
	// ended; made once, not per call.
	abort func()

	// The watch of the call in flight (see call). slot is the connection's
	// place in the watchdog; ctx the call's context while it runs; stop
	// what overrun armed on it, handed over through claimed.
	slot    watchSlot
	ctx     context.Context
	stop    func() bool
	claimed chan struct{}
}

// call writes req and reads its answer. After an error, or when ctx ended
// during the call, the connection is in an unknown state and not reusable.
//
// Cancellation interrupts a blocked write or read by closing the
// connection (the plugin's answer, if any, is dropped with it). Watching
// ctx costs a few allocations per call (context.AfterFunc, the request
// context's Done channel and its children map), so, as the plugin does, a
// call is watched only once the watchdog finds it still running at two
// ticks in a row (after 10–20 ms; see watchdog); most calls are answered
// well before, and cost the watchdog a store and a swap, with no timer or
// read deadline. A call whose deadline is nearer than watchSoon, or whose
// request is too large to be sure the write does not block, is watched
// from the start.
func (lc *laneConn) call(ctx context.Context, req *pluginv1.InvokeRequest, answer []byte) (resp *pluginv1.InvokeResponse, reusable bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, true, err // the caller left: nothing is sent, nothing runs
	}
	lc.lastID++
	id := lc.lastID
	b, err := appendFrame(lc.wbuf[:0], req, id)
	if err != nil {
		return nil, true, err // nothing was written
	}
	if cap(b) <= 64<<10 {
		lc.wbuf = b
	}
	if len(b) > maxUnwatchedWrite || deadlineSoon(ctx) {
		if stop := lc.watch(ctx); stop != nil {
			defer func() {
				if !stop() {
					reusable = false // closed, or being closed
				}
			}()
		}
	} else {
		lc.ctx = ctx
		lc.slot.begin(calls)
		defer func() {
			if !lc.unwatch() {
				reusable = false
			}
		}()
	}
	if _, err := lc.conn.Write(b); err != nil {
		return nil, false, lc.fail(ctx, "write", err)
	}
	resp, more, err := lc.read(ctx, id, answer)
	if err != nil {
		return nil, false, err
	}
	if more {
		return nil, false, errors.New("fast lane: a stream's answer to a unary call")
	}
	return resp, true, nil
}

// maxUnwatchedWrite bounds a request written before its call is watched:
// a connection carries one call at a time and the plugin has read the
// previous one whole, so a frame this size fits in the socket's buffer
// and the write does not block.
const maxUnwatchedWrite = 32 << 10

// watchSoon: a call whose context's deadline is nearer than this is
// watched from the start, so that it is cut at its deadline even if the
// watchdog (which claims a call within 2 watchTicks) runs late.
const watchSoon = 50 * time.Millisecond

// deadlineSoon reports whether ctx's deadline is nearer than watchSoon.
func deadlineSoon(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && time.Until(d) < watchSoon
}

// watch closes the connection when ctx ends; stop as context.AfterFunc's.
// nil when ctx never ends.
func (lc *laneConn) watch(ctx context.Context) (stop func() bool) {
	if ctx.Done() == nil {
		return nil
	}
	return context.AfterFunc(ctx, lc.abort)
}

// overrun is the watchdog's, for a call it claimed as running long: from
// now on the call's context closes the connection when it ends.
func (lc *laneConn) overrun() {
	lc.stop = lc.watch(lc.ctx)
	lc.claimed <- struct{}{}
}

// unwatch ends the call in the watchdog, and reports whether the
// connection is still usable (the call's context did not close it).
func (lc *laneConn) unwatch() bool {
	if lc.slot.end() {
		lc.ctx = nil
		return true
	}
	<-lc.claimed // overrun has armed the watch
	stop := lc.stop
	lc.ctx, lc.stop = nil, nil
	return stop == nil || stop()
}

// read reads one answer of call id, and whether more answers follow. With
// answer not nil, the frame is read into it (see InvokeInto) and the
// response aliases it; else into the connection's buffer, and copied out.
func (lc *laneConn) read(ctx context.Context, id uint64, answer []byte) (*pluginv1.InvokeResponse, bool, error) {
	var (
		resp *pluginv1.InvokeResponse
		body []byte
		more bool
		err  error
	)
	if answer != nil {
		if body, more, err = readFrame(lc.r, &answer); err != nil {
			return nil, false, lc.fail(ctx, "read", err)
		}
		resp, err = decodeAnswer(body)
	} else {
		if body, more, err = readFrame(lc.r, &lc.rbuf); err != nil {
			return nil, false, lc.fail(ctx, "read", err)
		}
		resp = new(pluginv1.InvokeResponse)
		err = proto.Unmarshal(body, resp)
		if cap(lc.rbuf) > 64<<10 {
			lc.rbuf = nil
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("fast lane: undecodable answer: %w", err)
	}
	if resp.GetCallId() != id {
		return nil, false, fmt.Errorf("fast lane: answer to call %d received for call %d", resp.GetCallId(), id)
	}
	return resp, more, nil
}

// stream writes a streaming call and hands its answers to recv until the
// frame that ends it. The connection is reusable when the stream ended as
// the plugin ended it; when recv fails or ctx ends, it is closed, which the
// plugin sees as the gateway leaving.
func (lc *laneConn) stream(ctx context.Context, req *pluginv1.InvokeRequest, recv func(*pluginv1.InvokeResponse) error) (reusable bool, err error) {
	if stop := lc.watch(ctx); stop != nil {
		defer func() {
			if !stop() {
				reusable = false
			}
		}()
	}
	lc.lastID++
	id := lc.lastID
	b, err := appendFlaggedFrame(lc.wbuf[:0], req, id, true)
	if err != nil {
		return true, err
	}
	if cap(b) <= 64<<10 {
		lc.wbuf = b
	}
	if _, err := lc.conn.Write(b); err != nil {
		return false, lc.fail(ctx, "write", err)
	}
	for {
		resp, more, err := lc.read(ctx, id, nil)
		if err != nil {
			return false, err
		}
		if resp.GetError() != nil && more {
			// A refusal: the frame that ends the stream follows at once.
			end, more, err := lc.read(ctx, id, nil)
			if err != nil {
				return false, err
			}
			if more || end.GetError() != nil || end.GetResponse() != nil {
				return false, errors.New("fast lane: a refusal not followed by the end of its stream")
			}
			return true, recv(resp)
		}
		if !more {
			if resp.GetError() != nil {
				return true, recv(resp)
			}
			return true, nil
		}
		if err := recv(resp); err != nil {
			return false, err
		}
	}
}

func (lc *laneConn) fail(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("fast lane: %s: %w", op, err)
}

// The fields of InvokeResponse, for decodeAnswer.
var (
	answerFields   = (&pluginv1.InvokeResponse{}).ProtoReflect().Descriptor().Fields()
	responseField  = answerFields.ByName("response").Number()
	errorField     = answerFields.ByName("error").Number()
	answerIDField  = answerFields.ByName("call_id").Number()
	errorMergeOpts = proto.UnmarshalOptions{Merge: true}
)

// decodeAnswer decodes an answer frame's body as proto.Unmarshal decodes
// an InvokeResponse, except that the response bytes alias body rather than
// being copied (proto.Unmarshal offers no aliasing), and fields the
// gateway does not know are dropped rather than kept.
func decodeAnswer(body []byte) (*pluginv1.InvokeResponse, error) {
	resp := new(pluginv1.InvokeResponse)
	for len(body) > 0 {
		num, typ, n := protowire.ConsumeTag(body)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		if !num.IsValid() {
			return nil, fmt.Errorf("field number %d is out of range", num)
		}
		body = body[n:]
		switch {
		case num == responseField && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(body)
			if m < 0 {
				return nil, protowire.ParseError(m)
			}
			resp.Response = v[:len(v):len(v)]
			body = body[m:]
			continue
		case num == errorField && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(body)
			if m < 0 {
				return nil, protowire.ParseError(m)
			}
			if resp.Error == nil {
				resp.Error = new(pluginv1.Error)
			}
			if err := errorMergeOpts.Unmarshal(v, resp.Error); err != nil {
				return nil, err
			}
			body = body[m:]
			continue
		case num == answerIDField && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(body)
			if m < 0 {
				return nil, protowire.ParseError(m)
			}
			resp.CallId = v
			body = body[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, body)
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		body = body[m:]
	}
	return resp, nil
}
