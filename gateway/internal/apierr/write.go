package apierr

import (
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
	"github.com/svcplatform/svc/plugins/sdk/wire"
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
	status, body := Body(r.Context(), err)
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Del("Content-Length")
	if trace := observe.TraceID(r.Context()); trace != "" {
		h.Set(observe.TraceHeader, trace)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// WriteJSON is the one function that answers a request with a JSON value
// that must not be cached (sessions, tokens, OAuth answers): no-store, and
// Pragma for HTTP/1.0 caches (RFC 6749 §5.1). Errors go through Write.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

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
