package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/route"
	"github.com/svcplatform/svc/gateway/internal/serving"
	completionsv1 "github.com/svcplatform/svc/gen/svc/completions/v1"
)

// The completions plugin's methods this edge calls.
const (
	procChat    = "/svc.completions.v1.CompletionsService/ChatCompletion"
	procStream  = "/svc.completions.v1.CompletionsService/StreamChatCompletion"
	procModels  = "/svc.completions.v1.CompletionsService/ListModels"
	procMetrics = "/svc.completions.v1.CompletionsService/ExportMetrics"
)

// Dispatcher runs the edge's calls (dispatch.Dispatcher), with the same
// validation and access checks as every other call.
type Dispatcher interface {
	// Table is the route table in use; nil before the first is built.
	Table() *route.Table
	// Call validates, authorizes and invokes one unary call of m.
	Call(ctx context.Context, m *route.Method, req proto.Message, raw []byte) ([]byte, error)
	// Stream is Call for a server-streaming method.
	Stream(ctx context.Context, m *route.Method, req proto.Message, raw []byte, send func([]byte) error) error
}

// Edge serves the OpenAI-shaped paths.
type Edge struct {
	d Dispatcher
}

// New returns the edge, calling the completions plugin through d.
func New(d Dispatcher) *Edge { return &Edge{d: d} }

// Handler is anything the edge can be registered on (server.Server).
type Handler interface {
	Handle(pattern string, h http.Handler)
}

// Register adds the edge's paths to srv.
func (e *Edge) Register(srv Handler) {
	srv.Handle("POST /v1/chat/completions", http.HandlerFunc(e.chatCompletions))
	srv.Handle("GET /v1/models", http.HandlerFunc(e.models))
}

// method finds a completions method in the table in use, or explains that
// the plugin is not there.
func (e *Edge) method(proc string) (*route.Method, error) {
	if t := e.d.Table(); t != nil {
		if m, ok := t.Method(proc); ok {
			return m, nil
		}
	}
	return nil, apierr.Unavailable("The completions plugin")
}

// OverheadHeader says, in milliseconds, how much of a response's time was
// the gateway's own (CONTRACT §14): from the moment the edge has the
// request until it writes the response's headers, less the time the
// completions plugin spent waiting for upstreams. For a stream the headers
// go out with the first event, so it is the overhead to the first byte.
const OverheadHeader = "X-Svc-Overhead-Ms"

// clock is when the edge got a request, to compute OverheadHeader.
type clock struct {
	start    time.Time
	upstream time.Duration
}

// stamp sets OverheadHeader; call it just before the headers are written.
func (c *clock) stamp(w http.ResponseWriter) {
	d := time.Since(c.start) - c.upstream
	var b [24]byte
	w.Header()[OverheadHeader] = []string{string(strconv.AppendFloat(b[:0], float64(max(d, 0))/float64(time.Millisecond), 'f', 3, 64))}
}

func (e *Edge) models(w http.ResponseWriter, r *http.Request) {
	c := &clock{start: time.Now()}
	e.unary(w, r, c, procModels, &completionsv1.ListModelsRequest{})
}

func (e *Edge) chatCompletions(w http.ResponseWriter, r *http.Request) {
	c := &clock{start: time.Now()}
	body, err := readBody(r)
	if err != nil {
		writeError(w, r, c, apierr.From(err))
		return
	}
	req := &completionsv1.OpenAIRequest{Body: body}
	if wantsStream(body) {
		e.stream(w, r, c, req)
		return
	}
	e.unary(w, r, c, procChat, req)
}

// readBody reads the request's body into one buffer sized by its
// Content-Length (the server has already refused one over its limit), to
// its end: the end is what lifts the body's read deadline.
func readBody(r *http.Request) ([]byte, error) {
	n := r.ContentLength
	if n < 0 || n > serving.MaxBodyBytes {
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

// unary calls a method answering an OpenAIResponse and writes it.
func (e *Edge) unary(w http.ResponseWriter, r *http.Request, c *clock, proc string, req proto.Message) {
	m, err := e.method(proc)
	if err != nil {
		writeError(w, r, c, err)
		return
	}
	out, err := e.d.Call(r.Context(), m, req, nil) // the dispatcher encodes req
	if err != nil {
		writeError(w, r, c, err)
		return
	}
	var res completionsv1.OpenAIResponse
	if err := proto.Unmarshal(out, &res); err != nil {
		writeError(w, r, c, apierr.Internal(err))
		return
	}
	c.upstream = time.Duration(res.GetUpstreamNanos())
	c.stamp(w)
	writeJSON(w, int(res.GetStatus()), res.GetBody(), res.GetRetryAfterSeconds())
}

// stream relays a streamed answer: the first part decides between a
// refusal (plain JSON) and a 200 event stream; each later part is one
// event, flushed at once.
func (e *Edge) stream(w http.ResponseWriter, r *http.Request, c *clock, req *completionsv1.OpenAIRequest) {
	m, err := e.method(procStream)
	if err != nil {
		writeError(w, r, c, err)
		return
	}
	rc := http.NewResponseController(w)
	started := false
	var part completionsv1.OpenAIStreamPart
	err = e.d.Stream(r.Context(), m, req, nil, func(b []byte) error {
		part.Reset()
		if err := proto.Unmarshal(b, &part); err != nil {
			return apierr.Internal(err)
		}
		if !started {
			c.upstream = time.Duration(part.GetUpstreamNanos())
			c.stamp(w)
			if part.GetStatus() != http.StatusOK {
				writeJSON(w, int(part.GetStatus()), part.GetData(), part.GetRetryAfterSeconds())
				return errRefused
			}
			h := w.Header()
			h["Content-Type"] = sseContentType
			h["Cache-Control"] = noCache
			h["X-Accel-Buffering"] = no // proxies in front must not hold events back
			w.WriteHeader(http.StatusOK)
			started = true
		}
		if ev := part.GetEvents(); len(ev) > 0 {
			if _, err := w.Write(ev); err != nil { // framed by the plugin
				return err
			}
		} else if err := writeEvent(w, part.GetData()); err != nil {
			return err
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
		_, body := errorBody(r.Context(), err)
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

// writeError answers one of the gateway's own refusals in OpenAI's shape.
func writeError(w http.ResponseWriter, r *http.Request, c *clock, err error) {
	status, body := errorBody(r.Context(), err)
	c.stamp(w)
	w.Header().Del("Content-Length")
	retry := int32(0)
	if status == http.StatusServiceUnavailable {
		retry = 1
	}
	writeJSON(w, status, body, retry)
}

// errorBody renders a gateway error as OpenAI's error object, with the
// status OpenAI clients expect for it.
func errorBody(ctx context.Context, err error) (int, []byte) {
	e := apierr.From(err)
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
		slog.ErrorContext(ctx, "chat completion failed", "error", e.Error())
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
