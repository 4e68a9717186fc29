package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// directClient is the HTTP/1.1 client for upstreams on plain http:// that
// no proxy stands in front of: local and LAN inference servers (Ollama,
// vLLM, llama.cpp), where the proxy's own overhead is what a user sees.
//
// It exists because net/http's Transport hands every request to a writer
// goroutine and every answer back from a reader goroutine: on an idle
// process each handoff wakes a sleeping thread (a futex call, then a
// scheduler spinning for work), which profiles of the 1-connection
// benchmark showed as a large part of the plugin's CPU per request. Here
// the calling goroutine writes the request in one write and reads the
// answer itself (http.ReadResponse parses it, so chunked and
// length-delimited bodies and Connection: close are the standard
// library's), over a pool of kept-alive connections.
//
// Upstreams on https://, or behind a proxy from the environment, keep
// going through net/http (TLS, HTTP/2, proxies): across a network their
// round trip dwarfs a goroutine handoff.
type directClient struct {
	dialer net.Dialer
	// maxIdle bounds the kept-alive connections per upstream address.
	maxIdle int
	// idleTimeout drops a connection that waited longer than this.
	idleTimeout time.Duration

	mu   sync.Mutex
	idle map[string][]*directConn // by host:port, most recently used last
}

// Limits of the direct client, as net/http's defaults for the Transport it
// replaces.
const (
	directMaxIdle         = 128
	directIdleTimeout     = 90 * time.Second
	directMaxHeaderBytes  = 1 << 20
	directDialTimeout     = 30 * time.Second
	directDrainOnClose    = 4 << 10 // bytes read at Close to reach a body's end
	directRequestHeadSize = 256     // the request line and headers, before the body
)

func newDirectClient() *directClient {
	return &directClient{
		dialer:      net.Dialer{Timeout: directDialTimeout, KeepAlive: 30 * time.Second},
		maxIdle:     directMaxIdle,
		idleTimeout: directIdleTimeout,
		idle:        map[string][]*directConn{},
	}
}

// directConn is one kept-alive connection.
type directConn struct {
	addr string
	c    net.Conn
	// lim caps what the response's headers may take (directMaxHeaderBytes);
	// it is lifted once they are read.
	lim  io.LimitedReader
	br   *bufio.Reader
	wbuf []byte
	used time.Time // when it went idle
}

// directTarget is an upstream's URL, parsed once.
type directTarget struct {
	addr string // host:port to dial
	host string // the Host header
	uri  string // path and query
}

// directTargetOf returns the target of an upstream URL when the direct
// client may serve it: plain http:// with no proxy from the environment.
func directTargetOf(raw string) (directTarget, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil {
		return directTarget{}, false
	}
	if p, err := http.ProxyFromEnvironment(&http.Request{URL: u}); err != nil || p != nil {
		return directTarget{}, false
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return directTarget{addr: addr, host: u.Host, uri: u.RequestURI()}, true
}

// errStaleConn: a kept-alive connection turned out to be closed by the
// upstream before any of the answer arrived.
var errStaleConn = errors.New("kept-alive connection closed by the upstream")

// do posts body to t, with header (lines ending in CRLF) added to the
// request's own, and returns the answer, whose Body must be closed.
// The context bounds the whole exchange, body included: when it ends, the
// connection is closed, which ends any read in progress. A kept-alive
// connection that the upstream had closed (it answered nothing) is
// replaced by a new one once.
func (d *directClient) do(ctx context.Context, t directTarget, header, body []byte) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		dc, reused, err := d.conn(ctx, t.addr)
		if err != nil {
			return nil, err
		}
		res, err := d.exchange(ctx, dc, t, header, body)
		if err == nil {
			return res, nil
		}
		if reused && attempt == 0 && errors.Is(err, errStaleConn) && ctx.Err() == nil {
			continue
		}
		return nil, err
	}
}

// exchange writes the request on dc and reads the answer's head.
func (d *directClient) exchange(ctx context.Context, dc *directConn, t directTarget, header, body []byte) (*http.Response, error) {
	stop := context.AfterFunc(ctx, func() { _ = dc.c.Close() })
	w := dc.wbuf[:0]
	w = append(w, "POST "...)
	w = append(w, t.uri...)
	w = append(w, " HTTP/1.1\r\nHost: "...)
	w = append(w, t.host...)
	w = append(w, "\r\nUser-Agent: svc-completions\r\nContent-Type: application/json\r\nContent-Length: "...)
	w = strconv.AppendInt(w, int64(len(body)), 10)
	w = append(w, "\r\n"...)
	w = append(w, header...)
	w = append(w, "\r\n"...)
	w = append(w, body...)
	if cap(w) <= 64<<10 {
		dc.wbuf = w // a large body is not kept with the connection
	}
	if _, err := dc.c.Write(w); err != nil {
		stop()
		_ = dc.c.Close()
		return nil, d.fail(ctx, err, true)
	}
	dc.lim.N = directMaxHeaderBytes
	br := dc.reader()
	res, err := http.ReadResponse(br, nil)
	// Informational answers (103 Early Hints, an unasked-for 100) come
	// before the real one; net/http skips up to five of them too.
	for skipped := 0; err == nil && res.StatusCode < 200 && res.StatusCode != http.StatusSwitchingProtocols && skipped < 5; skipped++ {
		res, err = http.ReadResponse(br, nil)
	}
	dc.lim.N = math.MaxInt64
	if err != nil {
		stop()
		_ = dc.c.Close()
		return nil, d.fail(ctx, err, dc.br.Buffered() == 0)
	}
	res.Body = &directBody{d: d, dc: dc, body: res.Body, stop: stop, keep: !res.Close}
	return res, nil
}

// fail is the error of a failed exchange: the context's when it ended the
// exchange, errStaleConn when nothing came back on a connection the
// upstream closed.
func (d *directClient) fail(ctx context.Context, err error, nothingRead bool) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if nothingRead && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) {
		return errors.Join(errStaleConn, err)
	}
	return err
}

// conn returns a kept-alive connection to addr, or a new one.
func (d *directClient) conn(ctx context.Context, addr string) (*directConn, bool, error) {
	now := time.Now()
	d.mu.Lock()
	for list := d.idle[addr]; len(list) > 0; list = d.idle[addr] {
		dc := list[len(list)-1]
		list[len(list)-1] = nil
		d.idle[addr] = list[:len(list)-1]
		if now.Sub(dc.used) > d.idleTimeout || !alive(dc.c) {
			_ = dc.c.Close()
			continue
		}
		d.mu.Unlock()
		return dc, true, nil
	}
	d.mu.Unlock()
	c, err := d.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	dc := &directConn{addr: addr, c: c, wbuf: make([]byte, 0, directRequestHeadSize+512)}
	dc.lim = io.LimitedReader{R: c, N: math.MaxInt64}
	return dc, false, nil
}

// directReaders are the read buffers of connections in use. A kept-alive
// connection holds none while it waits (its answer was read to the end),
// so that the 128 a burst of streams leaves behind cost 16 KiB less each,
// and what the pool holds goes at the next collections once traffic stops.
var directReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, directReadBuffer) }}

// directReadBuffer is a connection's read buffer while it is in use.
const directReadBuffer = 16 << 10

// reader gives dc a read buffer for the exchange it is about to carry.
func (dc *directConn) reader() *bufio.Reader {
	if dc.br == nil {
		dc.br = directReaders.Get().(*bufio.Reader)
		dc.br.Reset(&dc.lim)
	}
	return dc.br
}

// put keeps dc for the next request, unless enough are kept already. Its
// answer has been read to the end: its read buffer is empty and goes back
// to the pool.
func (d *directClient) put(dc *directConn) {
	dc.used = time.Now()
	dc.br.Reset(nil)
	directReaders.Put(dc.br)
	dc.br = nil
	d.mu.Lock()
	if list := d.idle[dc.addr]; len(list) < d.maxIdle {
		d.idle[dc.addr] = append(list, dc)
		d.mu.Unlock()
		return
	}
	d.mu.Unlock()
	_ = dc.c.Close()
}

// closeIdle closes every kept-alive connection.
func (d *directClient) closeIdle() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for addr, list := range d.idle {
		for _, dc := range list {
			_ = dc.c.Close()
		}
		delete(d.idle, addr)
	}
}

// errReadAfterClose is a read of an answer's body after its Close, as
// net/http words it.
var errReadAfterClose = errors.New("http: read on closed response body")

// directBody is an answer's body. Closing it keeps the connection when the
// body was read to its end (or its end is already buffered, as the
// chunked terminator after a stream's [DONE] usually is) and the exchange
// was not cut by its context.
type directBody struct {
	d      *directClient
	dc     *directConn
	body   io.ReadCloser
	stop   func() bool
	keep   bool
	eof    bool
	closed bool
}

func (b *directBody) Read(p []byte) (int, error) {
	if b.closed {
		// The connection, and its read buffer, may carry another answer
		// by now.
		return 0, errReadAfterClose
	}
	n, err := b.body.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

func (b *directBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if !b.stop() {
		// The context ended: the connection is closed or closing.
		return nil
	}
	if !b.eof && b.keep && b.dc.br.Buffered() > 0 {
		// Read on only what is already here: a read that needs the network
		// fails at once instead of waiting on the upstream.
		_ = b.dc.c.SetReadDeadline(time.Unix(1, 0))
		n, err := io.Copy(io.Discard, io.LimitReader(b.body, directDrainOnClose))
		b.eof = err == nil && n < directDrainOnClose // io.Copy ends without error at EOF
		_ = b.dc.c.SetReadDeadline(time.Time{})
	}
	if b.eof && b.keep && b.dc.br.Buffered() == 0 { // bytes after the answer: not to be trusted
		b.d.put(b.dc)
		return nil
	}
	return b.dc.c.Close()
}
