package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Header is one request header.
type Header struct{ Name, Value string }

// Load describes one load run: a fixed number of keep-alive HTTP/1.1
// connections sending one request template for a fixed time.
type Load struct {
	// Method defaults to GET.
	Method string
	// URL is an http:// URL on a loopback address.
	URL     string
	Headers []Header
	// Body is sent with every request unless BodyFunc is set.
	Body []byte
	// BodyFunc, when set, appends to dst the body of request n (n counts
	// the requests sent in this run from 0, across all connections, so a
	// counter in it makes every write unique).
	BodyFunc func(n uint64, dst []byte) []byte
	// PathFunc, when set, appends to dst the request target (path and
	// query) of request n, overriding the URL's.
	PathFunc func(n uint64, dst []byte) []byte
	// Connections is the number of connections, each with one request in
	// flight at a time. Default 1.
	Connections int
	// Duration is how long requests are measured after Warmup. A run stops
	// by itself at Warmup+Duration: requests still in flight then are cut
	// and not counted.
	Duration time.Duration
	// Warmup is a first period whose requests are sent but not counted.
	Warmup time.Duration
	// Rate, when positive, is the total requests per second to send
	// (open loop, spread evenly over the connections). Latency is then
	// measured from when each request was due, not from when it could be
	// sent, so a slow server cannot hide its queueing (no coordinated
	// omission). Zero sends as fast as responses come back.
	Rate float64
	// Requests, when positive, stops the run after that many requests
	// were sent (warmup included).
	Requests uint64
	// Timeout bounds each request; zero means only the end of the run.
	Timeout time.Duration
}

// Result is what a load run measured. Latencies are in microseconds.
type Result struct {
	Method      string  `json:"method"`
	URL         string  `json:"url"`
	Connections int     `json:"connections"`
	Rate        float64 `json:"rate,omitempty"`
	// Seconds is the measured period (excluding warmup).
	Seconds float64 `json:"seconds"`
	// Requests completed within the measured period, any status.
	Requests uint64 `json:"requests"`
	// RPS is Requests per second; OKPerSec counts 2xx answers only.
	RPS      float64 `json:"rps"`
	OKPerSec float64 `json:"ok_per_sec"`
	Latency  Latency `json:"latency_us"`
	// Status counts answers by HTTP status.
	Status map[string]uint64 `json:"status"`
	// Errors counts failures without an HTTP answer, by kind (connect,
	// write, read, parse, timeout).
	Errors map[string]uint64 `json:"errors,omitempty"`
	// ErrorTotal is every request that did not get a 2xx or 3xx answer.
	ErrorTotal uint64 `json:"error_total"`
	// ErrorSamples holds the first body seen for each non-2xx status and the
	// first message of each failure kind, cut to 300 bytes.
	ErrorSamples map[string]string `json:"error_samples,omitempty"`
	BytesRead    uint64            `json:"bytes_read"`
	hist         *Histogram
}

// Latency summarises the latency distribution, in microseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Histogram returns the latency histogram of the measured requests.
func (r *Result) Histogram() *Histogram { return r.hist }

// ErrorRate is the share of measured requests that failed.
func (r *Result) ErrorRate() float64 {
	total := r.Requests
	for _, n := range r.Errors {
		total += n
	}
	if total == 0 {
		return 0
	}
	return float64(r.ErrorTotal) / float64(total)
}

// String is a short human summary.
func (r *Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s, %d connections", r.Method, r.URL, r.Connections)
	if r.Rate > 0 {
		fmt.Fprintf(&b, ", %.0f req/s offered", r.Rate)
	}
	fmt.Fprintf(&b, ", %.1f s\n", r.Seconds)
	fmt.Fprintf(&b, "  %d requests, %.0f req/s (%.0f 2xx/s)\n", r.Requests, r.RPS, r.OKPerSec)
	l := r.Latency
	fmt.Fprintf(&b, "  latency µs: p50 %.0f  p90 %.0f  p99 %.0f  p99.9 %.0f  max %.0f  mean %.0f\n",
		l.P50, l.P90, l.P99, l.P999, l.Max, l.Mean)
	fmt.Fprintf(&b, "  status: %s", formatCounts(r.Status))
	if len(r.Errors) > 0 {
		fmt.Fprintf(&b, "  errors: %s", formatCounts(r.Errors))
	}
	b.WriteString("\n")
	keys := make([]string, 0, len(r.ErrorSamples))
	for k := range r.ErrorSamples {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  first %s: %s\n", k, r.ErrorSamples[k])
	}
	return b.String()
}

func formatCounts(m map[string]uint64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

// Run runs the load and returns what it measured. It returns an error only
// when the load cannot start (bad URL, no connection can be made at all);
// failed requests are counted in the result.
func Run(ctx context.Context, l Load) (*Result, error) {
	if l.Method == "" {
		l.Method = "GET"
	}
	if l.Connections <= 0 {
		l.Connections = 1
	}
	if l.Duration <= 0 && l.Requests == 0 {
		return nil, errors.New("loadgen: give a duration or a number of requests")
	}
	if l.Duration <= 0 {
		l.Duration = 24 * time.Hour // bounded by Requests; ctx bounds it too
	}
	u, err := url.Parse(l.URL)
	if err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("loadgen: %s: only http:// URLs are supported", l.URL)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	if err := checkLoopback(u.Hostname()); err != nil {
		return nil, err
	}
	// A first connection proves the target is there before the clock starts.
	probe, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	probe.Close()

	target := u.RequestURI()
	head := []byte(nil)
	// The part of the request after the target: headers up to the body.
	head = append(head, " HTTP/1.1\r\nHost: "...)
	head = append(head, u.Host...)
	head = append(head, "\r\nUser-Agent: svc-loadgen\r\n"...)
	for _, h := range l.Headers {
		head = append(head, h.Name...)
		head = append(head, ": "...)
		head = append(head, h.Value...)
		head = append(head, "\r\n"...)
	}
	hasBody := l.BodyFunc != nil || l.Body != nil || l.Method == "POST" || l.Method == "PUT" || l.Method == "PATCH"
	var static []byte
	if l.BodyFunc == nil && l.PathFunc == nil {
		static = buildRequest(nil, l.Method, []byte(target), head, l.Body, hasBody)
	}

	start := time.Now()
	measureFrom := start.Add(l.Warmup)
	end := measureFrom.Add(l.Duration)
	if dl, ok := ctx.Deadline(); ok && dl.Before(end) {
		end = dl
	}
	var counter atomic.Uint64
	workers := make([]*worker, l.Connections)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{
			load: &l, addr: addr, target: []byte(target), head: head, static: static, hasBody: hasBody,
			counter: &counter, measureFrom: measureFrom, end: end,
			hist: new(Histogram), status: map[int]uint64{}, errs: map[string]uint64{}, samples: map[string]string{},
		}
		if l.Rate > 0 {
			w.interval = time.Duration(float64(time.Second) * float64(l.Connections) / l.Rate)
			w.next = start.Add(w.interval * time.Duration(i) / time.Duration(l.Connections))
		}
		workers[i] = w
		wg.Add(1)
		go func() { defer wg.Done(); w.run(ctx) }()
	}
	stop := context.AfterFunc(ctx, func() {
		for _, w := range workers {
			w.abort()
		}
	})
	wg.Wait()
	stop()
	finished := time.Now()

	res := &Result{Method: l.Method, URL: l.URL, Connections: l.Connections, Rate: l.Rate,
		Status: map[string]uint64{}, Errors: map[string]uint64{}, ErrorSamples: map[string]string{}, hist: new(Histogram)}
	if finished.Before(end) { // stopped by Requests or ctx
		end = finished
	}
	if end.After(measureFrom) {
		res.Seconds = end.Sub(measureFrom).Seconds()
	}
	var ok uint64
	for _, w := range workers {
		res.hist.Merge(w.hist)
		for code, n := range w.status {
			res.Status[strconv.Itoa(code)] += n
			if code >= 200 && code < 300 {
				ok += n
			}
			if code >= 400 {
				res.ErrorTotal += n
			}
		}
		for k, n := range w.errs {
			res.Errors[k] += n
			res.ErrorTotal += n
		}
		for k, s := range w.samples {
			if _, dup := res.ErrorSamples[k]; !dup {
				res.ErrorSamples[k] = s
			}
		}
		res.BytesRead += w.bytes
	}
	res.Requests = res.hist.Count()
	if res.Seconds > 0 {
		res.RPS = float64(res.Requests) / res.Seconds
		res.OKPerSec = float64(ok) / res.Seconds
	}
	res.Latency = latencyOf(res.hist)
	if len(res.Errors) == 0 {
		res.Errors = nil
	}
	if len(res.ErrorSamples) == 0 {
		res.ErrorSamples = nil
	}
	return res, nil
}

func checkLoopback(host string) error {
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("loadgen: %s is not a loopback address: the load generator only targets this machine", host)
	}
	return nil
}

func buildRequest(dst []byte, method string, target, head, body []byte, hasBody bool) []byte {
	dst = append(dst, method...)
	dst = append(dst, ' ')
	dst = append(dst, target...)
	dst = append(dst, head...)
	if hasBody {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(body)), 10)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "\r\n"...)
	return append(dst, body...)
}

// worker owns one connection and its own counters.
type worker struct {
	load        *Load
	addr        string
	target      []byte
	head        []byte
	static      []byte
	hasBody     bool
	counter     *atomic.Uint64
	measureFrom time.Time
	end         time.Time
	interval    time.Duration
	next        time.Time

	mu   sync.Mutex // guards conn against abort
	conn net.Conn
	br   *bufio.Reader

	hist    *Histogram
	status  map[int]uint64
	errs    map[string]uint64
	samples map[string]string
	bytes   uint64
}

func (w *worker) abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn != nil {
		_ = w.conn.SetDeadline(time.Unix(1, 0))
	}
}

func (w *worker) closeConn() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn != nil {
		w.conn.Close()
		w.conn = nil
	}
}

func (w *worker) dial(ctx context.Context) error {
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, "tcp", w.addr)
	if err != nil {
		return err
	}
	_ = c.SetDeadline(w.end)
	w.mu.Lock()
	w.conn = c
	w.mu.Unlock()
	if ctx.Err() != nil {
		w.abort()
	}
	if w.br == nil {
		w.br = bufio.NewReaderSize(c, 32<<10)
	} else {
		w.br.Reset(c)
	}
	return nil
}

func (w *worker) fail(kind string, err error, t time.Time) {
	if t.Before(w.measureFrom) || !t.Before(w.end) {
		return
	}
	w.errs[kind]++
	if _, ok := w.samples[kind]; !ok && err != nil {
		w.samples[kind] = cut(err.Error())
	}
}

func cut(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func (w *worker) run(ctx context.Context) {
	defer w.closeConn()
	l := w.load
	var buf, bodyBuf, pathBuf []byte
	for ctx.Err() == nil {
		now := time.Now()
		if !now.Before(w.end) {
			return
		}
		due := now
		if w.interval > 0 {
			due = w.next
			w.next = w.next.Add(w.interval)
			if !due.Before(w.end) {
				return
			}
			if wait := due.Sub(now); wait > 0 {
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					return
				}
			}
		}
		n := w.counter.Add(1) - 1
		if l.Requests > 0 && n >= l.Requests {
			return
		}
		req := w.static
		if req == nil {
			target, body := w.target, l.Body
			if l.PathFunc != nil {
				pathBuf = l.PathFunc(n, pathBuf[:0])
				target = pathBuf
			}
			if l.BodyFunc != nil {
				bodyBuf = l.BodyFunc(n, bodyBuf[:0])
				body = bodyBuf
			}
			buf = buildRequest(buf[:0], l.Method, target, w.head, body, w.hasBody)
			req = buf
		}
		if w.conn == nil {
			if err := w.dial(ctx); err != nil {
				w.fail("connect", err, time.Now())
				select { // do not spin on a refused connection
				case <-time.After(10 * time.Millisecond):
				case <-ctx.Done():
				}
				continue
			}
			if w.interval == 0 {
				due = time.Now() // the latency of a request excludes connecting
			}
		}
		if l.Timeout > 0 {
			dl := due.Add(l.Timeout)
			if dl.After(w.end) {
				dl = w.end
			}
			_ = w.conn.SetDeadline(dl)
		}
		if _, err := w.conn.Write(req); err != nil {
			w.fail(errKind("write", err), err, time.Now())
			w.closeConn()
			continue
		}
		code, keep, err := w.readResponse()
		done := time.Now()
		if err != nil {
			w.fail(errKind("read", err), err, done)
			w.closeConn()
			continue
		}
		if !keep {
			w.closeConn()
		}
		if done.Before(w.measureFrom) || !done.Before(w.end) {
			continue
		}
		w.hist.Record(done.Sub(due))
		w.status[code]++
	}
}

func errKind(op string, err error) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	if errors.Is(err, errParse) {
		return "parse"
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrDeadlineExceeded) {
		return op + "-closed"
	}
	return op
}

var errParse = errors.New("malformed HTTP response")

// readResponse reads one response and discards its body (keeping the start
// of the first body of each error status). It reports whether the
// connection can be reused.
func (w *worker) readResponse() (code int, keep bool, err error) {
	br := w.br
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return 0, false, err
		}
		w.bytes += uint64(len(line))
		if len(line) < 12 || string(line[:7]) != "HTTP/1." {
			return 0, false, fmt.Errorf("%w: status line %q", errParse, cut(string(line)))
		}
		code = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
		if code < 100 || code > 999 {
			return 0, false, fmt.Errorf("%w: status line %q", errParse, cut(string(line)))
		}
		keep = line[7] == '1'
		clen, chunked, ok := int64(-1), false, false
		for {
			h, err := br.ReadSlice('\n')
			if err != nil {
				return 0, false, err
			}
			w.bytes += uint64(len(h))
			if len(h) <= 2 {
				break
			}
			switch h[0] | 0x20 { // the first letter, lower case, picks the candidates
			case 'c':
				if hasPrefixFold(h, "content-length:") {
					if clen, ok = parseLength(h[len("content-length:"):]); !ok {
						return 0, false, fmt.Errorf("%w: header %q", errParse, cut(string(h)))
					}
				} else if hasPrefixFold(h, "connection:") {
					if containsFold(h, "close") {
						keep = false
					} else if containsFold(h, "keep-alive") {
						keep = true
					}
				}
			case 't':
				if hasPrefixFold(h, "transfer-encoding:") {
					chunked = containsFold(h, "chunked")
				}
			}
		}
		if code >= 100 && code < 200 {
			continue // 100 Continue and friends: the real answer follows
		}
		var sample *[]byte
		key := ""
		if code >= 400 {
			key = strconv.Itoa(code)
			if _, ok := w.samples[key]; !ok {
				sample = new([]byte)
			}
		}
		switch {
		case w.load.Method == "HEAD" || code == 204 || code == 304:
		case chunked:
			if err := w.readChunked(sample); err != nil {
				return 0, false, err
			}
		case clen >= 0:
			if err := w.discard(clen, sample); err != nil {
				return 0, false, err
			}
		default: // the body runs to the end of the connection
			if err := w.discard(1<<62, sample); err != nil && !errors.Is(err, io.EOF) {
				return 0, false, err
			}
			keep = false
		}
		if sample != nil {
			w.samples[key] = cut(string(*sample))
		}
		return code, keep, nil
	}
}

func (w *worker) discard(n int64, sample *[]byte) error {
	if sample != nil && n > 0 {
		k := min(n, 300)
		b := make([]byte, k)
		m, err := io.ReadFull(w.br, b)
		*sample = b[:m]
		w.bytes += uint64(m)
		if err != nil {
			return err
		}
		n -= int64(m)
	}
	for n > 0 {
		chunk := int(min(n, 1<<30))
		m, err := w.br.Discard(chunk)
		w.bytes += uint64(m)
		n -= int64(m)
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *worker) readChunked(sample *[]byte) error {
	for {
		line, err := w.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		w.bytes += uint64(len(line))
		sz := trimSpace(line)
		if i := indexByte(sz, ';'); i >= 0 {
			sz = sz[:i]
		}
		n, err := strconv.ParseInt(string(sz), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: chunk size %q", errParse, cut(string(line)))
		}
		if n == 0 {
			for { // trailers up to the empty line
				t, err := w.br.ReadSlice('\n')
				if err != nil {
					return err
				}
				w.bytes += uint64(len(t))
				if len(t) <= 2 {
					return nil
				}
			}
		}
		var s *[]byte
		if sample != nil && len(*sample) == 0 {
			s = sample
		}
		if err := w.discard(n, s); err != nil {
			return err
		}
		if err := w.discard(2, nil); err != nil { // CRLF after the chunk
			return err
		}
	}
}

// parseLength parses a Content-Length value.
func parseLength(v []byte) (int64, bool) {
	v = trimSpace(v)
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func hasPrefixFold(b []byte, prefix string) bool {
	if len(b) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

func containsFold(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		if hasPrefixFold(b[i:], s) {
			return true
		}
	}
	return false
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}
