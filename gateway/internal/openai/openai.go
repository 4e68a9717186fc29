package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
)

// Dispatcher is the call path as this edge uses it (the gateway's
// dispatcher): the plain HTTP paths the route table in use binds, and calls
// of their methods as the request's caller, with the same validation,
// access checks and plugin host as every other route.
type Dispatcher interface {
	// HTTPPath finds the method bound to verb ("GET", "POST") and path.
	HTTPPath(verb, path string) (*manifestcheck.Method, bool)
	// Call runs one unary call of procedure; an absent method answers
	// apierr.Unavailable.
	Call(ctx context.Context, procedure string, req proto.Message) ([]byte, error)
	// Stream runs one server-streaming call of procedure, handing each
	// message to send in order.
	Stream(ctx context.Context, procedure string, req proto.Message, send func([]byte) error) error
}

// Edge serves the plain HTTP paths plugins declare.
type Edge struct {
	d       Dispatcher
	baseURL string
}

// New returns the edge over d; baseURL is the gateway's public URL, handed
// to the plugins in each HttpRequest.
func New(d Dispatcher, baseURL string) *Edge { return &Edge{d: d, baseURL: baseURL} }

// ServePath answers r when its method and path are bound by a plugin's
// http_path, and reports whether it did; it writes nothing when not
// (server.DeclaredPaths). HEAD is served as GET.
func (e *Edge) ServePath(w http.ResponseWriter, r *http.Request) bool {
	verb := r.Method
	if verb == http.MethodHead {
		verb = http.MethodGet
	}
	m, ok := e.d.HTTPPath(verb, r.URL.Path)
	if !ok {
		return false
	}
	c := &clock{start: time.Now(), style: m.Edge.ErrorStyle}
	if verb == http.MethodGet {
		e.unary(w, r, c, m.Procedure, &pluginv1.HttpRequest{Path: r.URL.Path, Query: r.URL.RawQuery, BaseUrl: e.baseURL})
		return true
	}
	body, err := readBody(r)
	if err != nil {
		writeError(w, r, c, apierr.From(err))
		return true
	}
	req := &pluginv1.HttpRequest{Body: body, Path: r.URL.Path, Query: r.URL.RawQuery, BaseUrl: e.baseURL}
	if m.Edge.StreamProcedure != "" && wantsStream(body, m.Edge.StreamField) {
		e.stream(w, r, c, m.Edge.StreamProcedure, req)
		return true
	}
	e.unary(w, r, c, m.Procedure, req)
	return true
}

// OverheadHeader says, in milliseconds, how much of a response's time was
// the gateway's own (CONTRACT §14): from the moment the edge has the
// request until it writes the response's headers, less the time the
// plugin spent waiting for upstreams. For a stream the headers
// go out with the first event, so it is the overhead to the first byte.
const OverheadHeader = "X-Svc-Overhead-Ms"

// clock is when the edge got a request, to compute OverheadHeader, and
// the shape of the path's refusals.
type clock struct {
	start    time.Time
	upstream time.Duration
	style    pluginv1.ErrorStyle
}

// stamp sets OverheadHeader; call it just before the headers are written.
func (c *clock) stamp(w http.ResponseWriter) {
	d := time.Since(c.start) - c.upstream
	var b [24]byte
	w.Header()[OverheadHeader] = []string{string(strconv.AppendFloat(b[:0], float64(max(d, 0))/float64(time.Millisecond), 'f', 3, 64))}
}

// maxPrealloc bounds the buffer readBody sizes by Content-Length; the
// server refuses a longer body before this edge (server.MaxBodyBytes).
const maxPrealloc = 1 << 20

// readBody reads the request's body into one buffer sized by its
// Content-Length (the server has already refused one over its limit), to
// its end: the end is what lifts the body's read deadline.
func readBody(r *http.Request) ([]byte, error) {
	n := r.ContentLength
	if n < 0 || n > maxPrealloc {
		return io.ReadAll(r.Body)
	}
	b := make([]byte, 0, n+1)
	for {
		m, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) { // longer than announced: net/http refuses it on the next read
			b = append(b, 0)[:len(b)]
		}
	}
}

// unary calls a method answering an HttpResponse and writes it.
func (e *Edge) unary(w http.ResponseWriter, r *http.Request, c *clock, proc string, req proto.Message) {
	out, err := e.d.Call(r.Context(), proc, req)
	if err != nil {
		writeError(w, r, c, err)
		return
	}
	res, err := readAnswer(out, false)
	if err != nil {
		writeError(w, r, c, apierr.Internal(err))
		return
	}
	c.upstream = time.Duration(res.upstreamNanos)
	c.stamp(w)
	if res.headers {
		var withHeaders pluginv1.HttpResponse
		if err := proto.Unmarshal(out, &withHeaders); err != nil {
			writeError(w, r, c, apierr.Internal(err))
			return
		}
		writeWithHeaders(w, r, &withHeaders)
		return
	}
	writeJSON(w, int(res.status), res.body, res.retryAfter)
}

// answerHeaders are the headers a plugin may set on an HttpResponse, by
// their lowercase name; any other is dropped (no Set-Cookie: a plugin sets
// no cookie on the gateway's origin).
var answerHeaders = map[string]string{
	"content-type":                "Content-Type",
	"cache-control":               "Cache-Control",
	"etag":                        "ETag",
	"content-security-policy":     "Content-Security-Policy",
	"x-frame-options":             "X-Frame-Options",
	"referrer-policy":             "Referrer-Policy",
	"vary":                        "Vary",
	"access-control-allow-origin": "Access-Control-Allow-Origin",
}

// writeWithHeaders writes an answer that sets its own headers: a page, a
// script, a cacheable JSON document. A GET naming the answer's ETag in
// If-None-Match is answered 304 without the body.
func writeWithHeaders(w http.ResponseWriter, r *http.Request, res *pluginv1.HttpResponse) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	for k, v := range res.GetHeaders() {
		if name, ok := answerHeaders[strings.ToLower(k)]; ok {
			h.Set(name, v)
		}
	}
	h.Set("X-Content-Type-Options", "nosniff")
	if res.GetRetryAfterSeconds() > 0 {
		h.Set("Retry-After", strconv.Itoa(int(res.GetRetryAfterSeconds())))
	}
	status := int(res.GetStatus())
	if status == 0 {
		status = http.StatusInternalServerError
	}
	if etag := h.Get("ETag"); etag != "" && status == http.StatusOK && r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(res.GetBody())))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(res.GetBody())
	}
}

// stream relays a streamed answer: the first part decides between a
// refusal (plain JSON) and a 200 event stream; each later part is one
// event, flushed at once.
func (e *Edge) stream(w http.ResponseWriter, r *http.Request, c *clock, proc string, req *pluginv1.HttpRequest) {
	rc := http.NewResponseController(w)
	started := false
	err := e.d.Stream(r.Context(), proc, req, func(b []byte) error {
		part, err := readAnswer(b, true) // written before b is let go
		if err != nil {
			return apierr.Internal(err)
		}
		if !started {
			c.upstream = time.Duration(part.upstreamNanos)
			c.stamp(w)
			if part.status != http.StatusOK {
				writeJSON(w, int(part.status), part.body, part.retryAfter)
				return errRefused
			}
			h := w.Header()
			h["Content-Type"] = sseContentType
			h["Cache-Control"] = noCache
			h["X-Accel-Buffering"] = no // proxies in front must not hold events back
			w.WriteHeader(http.StatusOK)
			started = true
		}
		ev := part.events
		if len(ev) > 0 {
			if _, err := w.Write(ev); err != nil { // framed by the plugin
				return err
			}
		} else if err := writeEvent(w, part.body); err != nil {
			return err
		}
		if bytes.HasSuffix(ev, doneEvent) || string(part.body) == "[DONE]" {
			// The stream's last event: the call ends next, and net/http
			// writes it with the body's end in one write.
			return nil
		}
		return rc.Flush()
	})
	switch {
	case err == nil, errors.Is(err, errRefused):
	case r.Context().Err() != nil:
		// The client left; the plugin's call (and its upstream) is cancelled
		// with the request's context.
	case !started:
		writeError(w, r, c, err)
	default:
		// Bytes are out: the error can only be one more event.
		_, body := errorBody(r.Context(), c.style, err)
		_ = writeEvent(w, body)
		_ = rc.Flush()
	}
}

// Header values of every event stream, shared (net/http only reads them).
var (
	sseContentType = []string{"text/event-stream; charset=utf-8"}
	noCache        = []string{"no-cache"}
	no             = []string{"no"}
)

// doneEvent is the last event of an OpenAI stream.
var doneEvent = []byte("data: [DONE]\n\n")

// errRefused ends a stream whose first part was a refusal.
var errRefused = errors.New("refused")

func writeEvent(w io.Writer, data []byte) error {
	buf := make([]byte, 0, len(data)+8)
	buf = append(buf, "data: "...)
	buf = append(buf, data...)
	buf = append(buf, '\n', '\n')
	_, err := w.Write(buf)
	return err
}

// writeJSON answers body, OpenAI's JSON, with apierr's one JSON writer
// (not to be cached) and Retry-After when the plugin asked for one.
func writeJSON(w http.ResponseWriter, status int, body []byte, retryAfter int32) {
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter)))
	}
	if status == 0 {
		status = http.StatusInternalServerError
	}
	apierr.WriteJSONBody(w, status, body)
}

// writeError answers one of the gateway's own refusals in the path's
// error style.
func writeError(w http.ResponseWriter, r *http.Request, c *clock, err error) {
	if c.style != pluginv1.ErrorStyle_ERROR_STYLE_OPENAI {
		c.stamp(w)
		w.Header().Del("Content-Length")
		apierr.Write(w, r, err)
		return
	}
	status, body := errorBody(r.Context(), c.style, err)
	c.stamp(w)
	w.Header().Del("Content-Length")
	retry := int32(0)
	if status == http.StatusServiceUnavailable {
		retry = 1
	}
	writeJSON(w, status, body, retry)
}

// errorBody renders a gateway error in style: as OpenAI's error object,
// with the status OpenAI clients expect for it, or as the Graph's envelope.
func errorBody(ctx context.Context, style pluginv1.ErrorStyle, err error) (int, []byte) {
	e := apierr.From(err)
	if style != pluginv1.ErrorStyle_ERROR_STYLE_OPENAI {
		return apierr.Body(ctx, e)
	}
	status, typ, code := e.HTTPStatus, "invalid_request_error", ""
	switch {
	case e.HTTPStatus == http.StatusUnauthorized || e.HTTPStatus == http.StatusForbidden:
		// OpenAI answers every credential problem with 401.
		status, code = http.StatusUnauthorized, "invalid_api_key"
	case e.HTTPStatus == http.StatusNotFound:
		code = "not_found"
	case e.HTTPStatus == http.StatusRequestEntityTooLarge:
		code = "request_too_large"
	case e.HTTPStatus == http.StatusTooManyRequests:
		typ, code = "rate_limit_error", "rate_limit_exceeded"
	case e.HTTPStatus == http.StatusServiceUnavailable:
		typ, code = "server_error", "service_unavailable"
	case e.HTTPStatus == http.StatusGatewayTimeout:
		status, typ, code = http.StatusServiceUnavailable, "server_error", "timeout"
	case e.HTTPStatus >= 500:
		status, typ = http.StatusInternalServerError, "server_error"
		slog.ErrorContext(ctx, "plain HTTP call failed", "error", e.Error())
	}
	var param, codep *string
	if e.Field != "" {
		param = &e.Field
	}
	if code != "" {
		codep = &code
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": e.Message, "type": typ, "param": param, "code": codep,
	}})
	return status, b
}
