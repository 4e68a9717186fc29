package protocol

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// ErrLaneClosed is returned by calls on a closed LaneClient.
var ErrLaneClosed = errors.New("fast lane closed")

// Pool bounds. Past maxOpen concurrent calls, a call waits for a connection.
const (
	maxIdle = 32
	maxOpen = 256
)

// LaneClient is the gateway's side of the fast lane to one plugin process:
// a pool of persistent connections, each carrying one call at a time.
//
// One call per connection is the point: the calling goroutine writes the
// request and reads the answer itself, as in a plain request-response
// exchange, with no reader goroutine to hand the answer over. Multiplexing
// calls by call_id on shared connections measured three to four times the
// CPU per call on our reference machine, for the goroutine hand-offs on both
// sides. call_id still numbers the calls of a connection, and an answer
// that does not match its call closes the connection.
type LaneClient struct {
	path    string
	peerPID int

	mu     sync.Mutex
	idle   []*laneConn // most recently used last
	open   int
	closed bool
	freed  chan struct{} // signalled when a connection returns while calls wait
	waits  int
}

// DialLane opens conns connections to the fast-lane socket at path, ready
// for the first calls. When peerPID is not zero, a connection whose
// listener is not that process is refused: the gateway talks only to the
// plugin it started.
func DialLane(ctx context.Context, path string, conns, peerPID int) (*LaneClient, error) {
	c := &LaneClient{path: path, peerPID: peerPID, freed: make(chan struct{}, 1)}
	for range max(conns, 1) {
		lc, err := c.dial(ctx)
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		c.open++
		c.idle = append(c.idle, lc)
	}
	return c, nil
}

// Invoke runs one call. The error is a transport failure (the plugin is gone,
// or ctx ended); a failed call is a response carrying an Error.
func (c *LaneClient) Invoke(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	lc, err := c.get(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := lc.call(ctx, req)
	if err != nil {
		c.discard(lc)
		return nil, err
	}
	c.put(lc)
	return resp, nil
}

// Close closes the idle connections now and the others as their calls end.
func (c *LaneClient) Close() error {
	c.mu.Lock()
	c.closed = true
	idle := c.idle
	c.idle = nil
	c.open -= len(idle)
	c.mu.Unlock()
	for _, lc := range idle {
		_ = lc.conn.Close()
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
			lc := c.idle[n-1]
			c.idle = c.idle[:n-1]
			c.mu.Unlock()
			return lc, nil
		}
		if c.open < maxOpen {
			c.open++
			c.mu.Unlock()
			lc, err := c.dial(ctx)
			if err != nil {
				c.mu.Lock()
				c.open--
				c.mu.Unlock()
				return nil, err
			}
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
		c.mu.Unlock()
		_ = lc.conn.Close()
		return
	}
	c.idle = append(c.idle, lc)
	wake := c.waits > 0
	c.mu.Unlock()
	if wake {
		select {
		case c.freed <- struct{}{}:
		default:
		}
	}
}

func (c *LaneClient) discard(lc *laneConn) {
	_ = lc.conn.Close()
	c.mu.Lock()
	c.open--
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
	return &laneConn{conn: conn, r: bufio.NewReaderSize(conn, 4<<10)}, nil
}

// laneConn is one connection, used by one call at a time.
type laneConn struct {
	conn   net.Conn
	r      *bufio.Reader
	wbuf   []byte
	rbuf   []byte
	lastID uint64
}

// call writes req and reads its answer. Any error leaves the connection in
// an unknown state; the caller discards it.
func (lc *laneConn) call(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	if ctx.Done() != nil {
		// Cancellation interrupts the blocked read by closing the
		// connection; the plugin's answer, if any, is dropped.
		stop := context.AfterFunc(ctx, func() { _ = lc.conn.Close() })
		defer stop()
	}
	lc.lastID++
	id := lc.lastID
	b, err := appendFrame(lc.wbuf[:0], req, id)
	if err != nil {
		return nil, err
	}
	if cap(b) <= 64<<10 {
		lc.wbuf = b
	}
	if _, err := lc.conn.Write(b); err != nil {
		return nil, lc.fail(ctx, "write", err)
	}
	body, err := readFrame(lc.r, &lc.rbuf)
	if err != nil {
		return nil, lc.fail(ctx, "read", err)
	}
	if cap(lc.rbuf) > 64<<10 {
		lc.rbuf = nil
	}
	resp := new(pluginv1.InvokeResponse)
	if err := proto.Unmarshal(body, resp); err != nil {
		return nil, fmt.Errorf("fast lane: undecodable answer: %w", err)
	}
	if resp.GetCallId() != id {
		return nil, fmt.Errorf("fast lane: answer to call %d received for call %d", resp.GetCallId(), id)
	}
	if ctx.Err() != nil {
		// Answered, but the connection may be closed under us by now.
		return nil, ctx.Err()
	}
	return resp, nil
}

func (lc *laneConn) fail(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("fast lane: %s: %w", op, err)
}
