package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/serving"
	"github.com/svcplatform/svc/gateway/internal/version"
	"github.com/svcplatform/svc/internal/tracing"
)

// requestIDHeader is OpenAI's request id header, on the OpenAI-shaped
// paths (/v1/...), canonical as net/http writes it.
const requestIDHeader = "X-Request-Id"

// traced gives every request a trace id, stamps it on the response, resolves
// its credential with opts.Authenticate (when not nil), recovers panics into
// the error envelope, records metrics and the SLA's outcomes and writes the
// access log line.
func traced(opts Options, next http.Handler) http.Handler {
	metrics, authenticate, outcomes := opts.Metrics, opts.Authenticate, opts.Outcomes
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx := r.Context()
		// The request's record, its header value and its access notes
		// live in sw, allocated per request anyway.
		sw := &statusWriter{ResponseWriter: w}
		var span trace.Span
		if tracing.Enabled() {
			// The request's trace: the client's when it sent a
			// traceparent, and X-Svc-Trace-Id is its id.
			ctx, span = tracing.Tracer().Start(tracing.Extract(ctx, r.Header.Get("Traceparent")), r.Method+" "+classify(r),
				trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
					attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path)))
			sw.req.TraceID = span.SpanContext().TraceID().String()
		} else {
			sw.req.TraceID = observe.NewTraceID()
		}
		if opts.AccessLog != nil {
			sw.req.Access = &sw.access
		}
		ctx = observe.WithRequest(ctx, &sw.req)
		sw.ids[0] = sw.req.TraceID
		w.Header()[observe.TraceHeader] = sw.ids[:]
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			// OpenAI's clients log x-request-id with every answer and
			// error: the same id finds the request in the gateway's logs.
			w.Header()[requestIDHeader] = sw.ids[:]
		}
		if span != nil {
			defer func() {
				span.SetAttributes(attribute.Int("http.response.status_code", sw.status()))
				if sw.status() >= 500 {
					span.SetStatus(codes.Error, http.StatusText(sw.status()))
				}
				span.End()
			}()
		}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				slog.ErrorContext(ctx, "panic serving request", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if !sw.wroteHeader {
					// r may predate its context (a panic authenticating).
					apierr.Write(sw, r.WithContext(ctx), apierr.Internal(fmt.Errorf("panic: %v", p)))
				}
			}
			took := time.Since(start)
			metrics.Observe(classify(r), sw.status(), took)
			outcomes.ObserveHTTP(r.URL.Path, sw.status(), took)
			if opts.AccessLog != nil {
				accessLine(ctx, opts.AccessLog, r, sw, opts.App, took)
			}
		}()
		// After the recover above: a panic resolving the credential is
		// answered with the error envelope too.
		if authenticate != nil {
			ctx = authenticate(ctx, r)
		}
		r = r.WithContext(ctx)
		next.ServeHTTP(sw, r)
	})
}

// versioned refuses /api/vN paths whose major is not served and labels the
// others with the Svc-Api-Version header.
func versioned(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if major, ok := version.Major(r.URL.Path); ok {
			if !version.Supported(major) {
				apierr.Write(w, r, apierr.UnknownVersion(major))
				return
			}
			w.Header()[version.Header] = currentVersion // the one supported
		}
		next.ServeHTTP(w, r)
	})
}

// currentVersion is the Svc-Api-Version header's value, shared: net/http
// only reads it.
var currentVersion = []string{version.Current}

// limited refuses bodies over serving.MaxBodyBytes: at once when Content-Length says
// so, otherwise when the reader crosses the limit (the error then surfaces
// through the handler as an *http.MaxBytesError). A body must also arrive
// within readTimeout: the connection's read deadline is set while the body
// is read and lifted at its end, so that streamed answers are not cut.
func limited(readTimeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > serving.MaxBodyBytes {
			apierr.Write(w, r, apierr.TooLarge(serving.MaxBodyBytes))
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			deadline := setReadDeadline(w, time.Now().Add(readTimeout))
			r.Body = &limitedBody{ReadCloser: http.MaxBytesReader(w, r.Body, serving.MaxBodyBytes), w: w, deadline: deadline}
		}
		next.ServeHTTP(w, r)
	})
}

// limitedBody remembers that the limit was crossed, so that the REST error
// rewriter can answer 413 whatever error the transcoder made of it, and
// lifts the read deadline once the body has been read.
type limitedBody struct {
	io.ReadCloser
	exceeded bool
	// w is the response's writer, whose controller lifts the deadline (a
	// controller made per request and kept would be one allocation more).
	w        http.ResponseWriter
	deadline bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		// Lift the deadline only for a complete body: after a timeout it
		// must stay, or the server would wait on the rest of the body.
		if b.deadline {
			b.deadline = false
			setReadDeadline(b.w, time.Time{})
		}
	default: // not at every body's end: errors.As's target is an allocation
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			b.exceeded = true
		}
	}
	return n, err
}

// setReadDeadline sets the read deadline of w's connection, reporting
// whether it could. (A function of its own: its controller then stays on
// the stack; written in the middleware's closure it was an allocation.)
func setReadDeadline(w http.ResponseWriter, t time.Time) bool {
	return http.NewResponseController(w).SetReadDeadline(t) == nil
}

func bodyExceeded(r *http.Request) bool {
	b, ok := r.Body.(*limitedBody)
	return ok && b.exceeded
}

// accessLine logs one served request: method, path (never the query,
// which may carry an access_token), Graph node, status (and gRPC status),
// Graph error code, duration, app and the trace id that is the fbtrace_id
// of its error. Never a credential, a secret or a body.
//
// The line is the one slog's JSONHandler writes for the same record at info
// level (keys, order, escaping and number format; TestTheAccessLineIsTheLineSlogWrites),
// encoded here: through slog it took about 5 µs of a Graph read's CPU
// (a caller's pc, a float through encoding/json, a grown attribute slice),
// written here it takes well under one.
func accessLine(ctx context.Context, w io.Writer, r *http.Request, sw *statusWriter, app func(context.Context) string, d time.Duration) {
	bp := accessBufs.Get().(*[]byte)
	b := append((*bp)[:0], `{"time":"`...)
	b = time.Now().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","method":`...)
	b = appendLogString(b, r.Method)
	b = append(b, `,"path":`...)
	b = appendLogString(b, r.URL.Path)
	if sw.access.Node != "" {
		b = append(b, `,"node":`...)
		b = appendLogString(b, sw.access.Node)
	}
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(sw.status()), 10)
	// gRPC answers 200 and says how the call went in a trailer.
	if g := sw.Header().Get(http.TrailerPrefix + "Grpc-Status"); g != "" {
		b = append(b, `,"grpc_status":`...)
		b = appendLogString(b, g)
	}
	if sw.access.Code != 0 {
		b = append(b, `,"code":`...)
		b = strconv.AppendInt(b, int64(sw.access.Code), 10)
	}
	b = append(b, `,"duration_ms":`...)
	b = appendMillis(b, d.Microseconds())
	if app != nil {
		if id := app(ctx); id != "" {
			b = append(b, `,"app_id":`...)
			b = appendLogString(b, id)
		}
	}
	if id := observe.TraceID(ctx); id != "" {
		b = append(b, `,"trace_id":`...)
		b = appendLogString(b, id)
	}
	b = append(b, "}\n"...)
	_, _ = w.Write(b) // as slog's handlers, a failed log write is not the request's
	if cap(b) <= 4<<10 {
		*bp = b
		accessBufs.Put(bp)
	}
}

var accessBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// appendMillis writes us microseconds as milliseconds the way
// encoding/json writes float64(us)/1000: the shortest decimal, which for
// a whole number of microseconds is the exact one (1.234, 1.23, 1, 0).
func appendMillis(b []byte, us int64) []byte {
	if us < 0 {
		b = append(b, '-')
		us = -us
	}
	b = strconv.AppendInt(b, us/1000, 10)
	frac := us % 1000
	if frac == 0 {
		return b
	}
	digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	n := 3
	for digits[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, digits[:n]...)
}

// appendLogString writes s as slog's JSONHandler does: quote, backslash
// and control characters escaped (\n, \r, \t, else \u00XX), invalid
// UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendLogString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// statusWriter records the status written, for metrics and for knowing
// whether an error can still be written, and the access log's notes.
type statusWriter struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
	access      observe.Access
	// req is the request's record in its context (observe.WithRequest);
	// ids is its trace id as the response's header value.
	req observe.Request
	ids [1]string
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.code, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.code, w.wroteHeader = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) status() int {
	if !w.wroteHeader {
		return http.StatusOK
	}
	return w.code
}

// Unwrap lets http.ResponseController reach Flush and deadlines.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes flushes through, for streaming responses.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// isRPC tells Connect, gRPC and gRPC-Web requests (/pkg.Service/Method) from
// REST and page requests: only RPC paths have a dot in their first segment
// and a second segment (a one-segment path such as /embed.js is a file).
func isRPC(r *http.Request) bool {
	first, _, nested := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	return nested && strings.Contains(first, ".") && !strings.HasPrefix(first, ".")
}

// classify labels a request for metrics without unbounded cardinality.
func classify(r *http.Request) string {
	switch {
	case isRPC(r):
		return "rpc"
	case strings.HasPrefix(r.URL.Path, "/api/"):
		return "rest"
	case r.URL.Path == "/healthz" || r.URL.Path == "/readyz" || r.URL.Path == "/metrics":
		return "ops"
	}
	return "page"
}
