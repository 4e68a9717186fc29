package apierr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"connectrpc.com/connect"

	"google.golang.org/grpc/codes"

	"github.com/svcplatform/svc/gateway/internal/observe"
	errorsv1 "github.com/svcplatform/svc/gen/svc/errors/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/wire"
)

// envelope is the Graph error body of CONTRACT §3.
type envelope struct {
	Error envelopeError `json:"error"`
}

type envelopeError struct {
	Message     string `json:"message"`
	Type        string `json:"type"`
	Code        int    `json:"code"`
	Subcode     int    `json:"error_subcode"`
	FBTraceID   string `json:"fbtrace_id"`
	IsTransient bool   `json:"is_transient"`
}

// From turns any error into the *Error that describes it to a caller.
// Errors that are not ours become Internal, keeping the original as cause.
func From(err error) *Error {
	if e, ok := As(err); ok {
		return e
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return TooLarge(tooLarge.Limit).WithCause(err)
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return FromConnect(ce)
	}
	return Internal(err)
}

// Write is the one function that answers a REST request with an error. It
// logs server faults with their cause and the trace id; the body never
// carries the cause.
func Write(w http.ResponseWriter, r *http.Request, err error) {
	e := From(err)
	observe.NoteErrorCode(r.Context(), e.Code)
	status, body := Body(r.Context(), e)
	h := w.Header()
	h.Del("Content-Length")
	if trace := observe.TraceID(r.Context()); trace != "" {
		h.Set(observe.TraceHeader, trace)
	}
	WriteJSONBody(w, status, body)
}

// WriteJSON is the one function that answers a request with a JSON value
// (errors go through Write): v encoded, with the headers of WriteJSONBody.
func WriteJSON(w http.ResponseWriter, status int, v any, opts ...JSONOption) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		status, body := Body(context.Background(), Internal(err))
		WriteJSONBody(w, status, body)
		return
	}
	WriteJSONBody(w, status, buf.Bytes(), opts...)
}

// WriteJSONBody answers with body, a JSON document already encoded: UTF-8
// JSON, and by default not to be stored by any cache (no-store, and Pragma
// for HTTP/1.0 caches, RFC 6749 §5.1), as sessions, tokens and Graph
// answers must not be; opts change that for documents meant to be cached.
// It sets no header it need not allocate, for the Graph and completions
// hot paths.
func WriteJSONBody(w http.ResponseWriter, status int, body []byte, opts ...JSONOption) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Cache-Control"] = noStore
	h["Pragma"] = noCache
	for _, o := range opts {
		o(h)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// JSONOption changes the headers of a JSON answer.
type JSONOption func(http.Header)

// CacheControl replaces the default no-store with policy, for documents
// caches may keep ("public, max-age=300") or must revalidate ("no-cache").
func CacheControl(policy string) JSONOption {
	return func(h http.Header) {
		h.Set("Cache-Control", policy)
		h.Del("Pragma")
	}
}

// Shared header values: net/http only reads them.
var (
	jsonContentType = []string{"application/json; charset=utf-8"}
	noStore         = []string{"no-store"}
	noCache         = []string{"no-cache"}
)

// Body renders err as the Graph error envelope and returns it with its HTTP
// status, for answers that are not written directly (batch items).
func Body(ctx context.Context, err error) (int, []byte) {
	e := From(err)
	if e.HTTPStatus >= 500 && !e.Transient {
		slog.ErrorContext(ctx, "request failed", "status", e.HTTPStatus, "code", e.Code, "error", e.Error())
	}
	body, _ := json.Marshal(envelope{Error: envelopeError{
		Message: e.Message, Type: e.Type, Code: e.Code, Subcode: e.Subcode,
		FBTraceID: observe.TraceID(ctx), IsTransient: e.Transient,
	}})
	return e.HTTPStatus, body
}

// ToConnect converts e to a Connect error carrying a GraphError detail, for
// Connect, gRPC and gRPC-Web callers.
func ToConnect(e *Error) *connect.Error {
	ce := connect.NewError(connect.Code(wire.ErrorCode(e)), errors.New(e.Message))
	if d, err := connect.NewErrorDetail(wire.ErrorGraph(e)); err == nil {
		ce.AddDetail(d)
	}
	return ce
}

// FromConnect reads the GraphError detail of a Connect error, or derives a
// Graph error from its code when there is none.
func FromConnect(ce *connect.Error) *Error {
	for _, d := range ce.Details() {
		if m, err := d.Value(); err == nil {
			if g, ok := m.(*errorsv1.GraphError); ok {
				return wire.ErrorFromProto(&pluginv1.Error{Graph: g, Message: ce.Message(), ConnectCode: uint32(ce.Code())})
			}
		}
	}
	return wire.ErrorFromCode(codes.Code(ce.Code()), ce.Message())
}
