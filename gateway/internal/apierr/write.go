package apierr

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"connectrpc.com/connect"

	"github.com/svcplatform/svc/gateway/internal/observe"
	errorsv1 "github.com/svcplatform/svc/gen/svc/errors/v1"
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

// Connect converts e to a Connect error carrying a GraphError detail, for
// Connect, gRPC and gRPC-Web callers.
func (e *Error) Connect() *connect.Error {
	ce := connect.NewError(connectCode(e.HTTPStatus), errors.New(e.Message))
	if d, err := connect.NewErrorDetail(e.Proto()); err == nil {
		ce.AddDetail(d)
	}
	return ce
}

// Proto returns the GraphError form of e.
func (e *Error) Proto() *errorsv1.GraphError {
	return &errorsv1.GraphError{
		HttpStatus: int32(e.HTTPStatus), Code: int32(e.Code), ErrorSubcode: int32(e.Subcode),
		Type: e.Type, IsTransient: e.Transient, Field: e.Field,
	}
}

// FromProto rebuilds an *Error from its GraphError form and message.
func FromProto(g *errorsv1.GraphError, message string) *Error {
	return &Error{
		HTTPStatus: int(g.GetHttpStatus()), Code: int(g.GetCode()), Subcode: int(g.GetErrorSubcode()),
		Type: g.GetType(), Transient: g.GetIsTransient(), Field: g.GetField(), Message: message,
	}
}

// FromConnect reads the GraphError detail of a Connect error, or derives a
// Graph error from its code when there is none.
func FromConnect(ce *connect.Error) *Error {
	for _, d := range ce.Details() {
		if m, err := d.Value(); err == nil {
			if g, ok := m.(*errorsv1.GraphError); ok {
				return FromProto(g, ce.Message())
			}
		}
	}
	msg := ce.Message()
	switch ce.Code() {
	case connect.CodeInvalidArgument, connect.CodeOutOfRange:
		return &Error{HTTPStatus: http.StatusBadRequest, Code: 100, Type: TypeInvalid, Message: msg}
	case connect.CodeNotFound:
		return &Error{HTTPStatus: http.StatusNotFound, Code: 100, Subcode: 33, Type: TypeGraphMethod, Message: msg}
	case connect.CodeUnauthenticated:
		return &Error{HTTPStatus: http.StatusUnauthorized, Code: 190, Subcode: 467, Type: TypeOAuth, Message: msg}
	case connect.CodePermissionDenied:
		return &Error{HTTPStatus: http.StatusForbidden, Code: 10, Type: TypeOAuth, Message: msg}
	case connect.CodeUnavailable:
		return Unavailable("The service")
	case connect.CodeUnimplemented:
		return &Error{HTTPStatus: http.StatusNotFound, Code: 2500, Type: TypeGraphMethod, Message: msg}
	case connect.CodeResourceExhausted:
		return &Error{HTTPStatus: http.StatusTooManyRequests, Code: 4, Type: TypeRateLimit, Message: msg}
	case connect.CodeFailedPrecondition, connect.CodeAborted, connect.CodeAlreadyExists:
		return &Error{HTTPStatus: http.StatusConflict, Code: 10, Type: TypeOAuth, Message: msg}
	case connect.CodeDeadlineExceeded, connect.CodeCanceled:
		return &Error{HTTPStatus: http.StatusGatewayTimeout, Code: 2, Type: TypeUnavailable, Transient: true, Message: msg}
	}
	return Internal(ce)
}

func connectCode(status int) connect.Code {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusMethodNotAllowed:
		return connect.CodeInvalidArgument
	case http.StatusUnauthorized:
		return connect.CodeUnauthenticated
	case http.StatusForbidden:
		return connect.CodePermissionDenied
	case http.StatusNotFound:
		return connect.CodeNotFound
	case http.StatusConflict:
		return connect.CodeFailedPrecondition
	case http.StatusTooManyRequests:
		return connect.CodeResourceExhausted
	case http.StatusServiceUnavailable:
		return connect.CodeUnavailable
	case http.StatusGatewayTimeout:
		return connect.CodeDeadlineExceeded
	}
	return connect.CodeInternal
}
