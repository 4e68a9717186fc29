package sdk

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/grpc/codes"

	errorsv1 "github.com/svcplatform/svc/gen/svc/errors/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Error families, reported in the Graph error envelope's "type" field. They
// are the gateway's own (CONTRACT §3).
const (
	TypeOAuth       = "OAuthException"
	TypeGraphMethod = "GraphMethodException"
	TypeInvalid     = "InvalidParameterException"
	TypeRateLimit   = "RateLimitException"
	TypeUnavailable = "ServiceUnavailableException"
	TypeInternal    = "InternalServerException"
	TypeMessaging   = "MessagingException"
)

// Error is a refusal a handler returns. The gateway answers it to the caller
// as is: in the Graph error envelope for REST callers, as a Connect or gRPC
// error with the same numbers for RPC callers.
//
// Any other error a handler returns is an internal error: it is logged in the
// plugin with the trace id and the caller sees only "an unexpected error".
type Error struct {
	// HTTPStatus is the status of the REST answer, e.g. 400.
	HTTPStatus int
	// Code and Subcode are the Graph numbers, e.g. 10 and 2018278.
	Code    int
	Subcode int
	// Type is the error family, e.g. TypeInvalid; empty: derived from
	// HTTPStatus.
	Type string
	// Message is shown to the caller; it must not carry secrets.
	Message string
	// Transient tells the caller that the same request may succeed later.
	Transient bool
	// Field names the request field the error is about, if any.
	Field string

	cause error
}

func (e *Error) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("%s (code %d/%d): %v", e.Message, e.Code, e.Subcode, e.cause)
	}
	return fmt.Sprintf("%s (code %d/%d)", e.Message, e.Code, e.Subcode)
}

// Unwrap exposes the cause to errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.cause }

// WithCause returns a copy of e that records cause for the plugin's logs; the
// caller never sees it.
func (e *Error) WithCause(cause error) *Error {
	c := *e
	c.cause = cause
	return &c
}

// Errorf returns an *Error with the given Graph numbers.
func Errorf(httpStatus, code, subcode int, format string, args ...any) *Error {
	return &Error{HTTPStatus: httpStatus, Code: code, Subcode: subcode, Type: typeFor(httpStatus),
		Message: fmt.Sprintf(format, args...)}
}

// Invalid refuses a parameter (HTTP 400, code 100). The message must name the
// field.
func Invalid(field, format string, args ...any) *Error {
	return &Error{HTTPStatus: http.StatusBadRequest, Code: 100, Type: TypeInvalid, Field: field,
		Message: fmt.Sprintf(format, args...)}
}

// NotFound says that what does not exist (HTTP 404, code 100, subcode 33).
func NotFound(what string) *Error {
	return &Error{HTTPStatus: http.StatusNotFound, Code: 100, Subcode: 33, Type: TypeGraphMethod,
		Message: fmt.Sprintf("%s does not exist, cannot be loaded due to missing permissions, or does not support this operation.", what)}
}

// Unavailable says that something the call needs is down for now (HTTP 503,
// code 2, transient).
func Unavailable(what string) *Error {
	return &Error{HTTPStatus: http.StatusServiceUnavailable, Code: 2, Type: TypeUnavailable, Transient: true,
		Message: fmt.Sprintf("%s is temporarily unavailable; retry shortly.", what)}
}

// internalMessage is all a caller learns of an internal error.
const internalMessage = "An unexpected error has occurred. Please retry your request later."

// Internal is an unexpected failure (HTTP 500, code 1). The cause is logged,
// never shown. A cause that says the database is unreachable for now
// (DatabaseUnavailable) is no fault of the call: that is a transient 503,
// code 2, which the caller may retry.
func Internal(cause error) *Error {
	if DatabaseUnavailable(cause) {
		return Unavailable("The database").WithCause(cause)
	}
	return &Error{HTTPStatus: http.StatusInternalServerError, Code: 1, Type: TypeInternal,
		Message: internalMessage, cause: cause}
}

// asError turns whatever a handler returned into the *Error the caller sees,
// and tells whether it is a fault of the plugin worth logging.
func asError(err error) (e *Error, fault bool) {
	if errors.As(err, &e) {
		return e, e.HTTPStatus >= 500 && !e.Transient
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{HTTPStatus: http.StatusGatewayTimeout, Code: 2, Type: TypeUnavailable, Transient: true,
			Message: "The call did not finish in time.", cause: err}, false
	case errors.Is(err, context.Canceled):
		return &Error{HTTPStatus: http.StatusGatewayTimeout, Code: 2, Type: TypeUnavailable, Transient: true,
			Message: "The call was cancelled.", cause: err}, false
	case DatabaseUnavailable(err):
		return Internal(err), false
	}
	return Internal(err), true
}

// errorToProto returns the wire form of e: its Connect (= gRPC) code and
// message, and the Graph numbers (wire.ErrorToProto).
func errorToProto(e *Error) *pluginv1.Error {
	return &pluginv1.Error{ConnectCode: uint32(codeFor(e)), Message: e.Message, Graph: graphOf(e)}
}

// graphOf returns the Graph numbers of e, the detail that Connect and gRPC
// callers receive beside the code.
func graphOf(e *Error) *errorsv1.GraphError {
	typ := e.Type
	if typ == "" {
		typ = typeFor(e.HTTPStatus)
	}
	return &errorsv1.GraphError{
		HttpStatus: int32(e.HTTPStatus), Code: int32(e.Code), ErrorSubcode: int32(e.Subcode),
		Type: typ, IsTransient: e.Transient, Field: e.Field,
	}
}

// errorFromProto rebuilds an *Error from its wire form: a plugin's answer,
// or the error of a call made through the host. It is the one conversion
// from the wire (wire.ErrorFromProto).
func errorFromProto(pe *pluginv1.Error) *Error {
	g := pe.GetGraph()
	if g == nil || g.GetHttpStatus() == 0 {
		return errorFromCode(codes.Code(pe.GetConnectCode()), pe.GetMessage())
	}
	return &Error{
		HTTPStatus: int(g.GetHttpStatus()), Code: int(g.GetCode()), Subcode: int(g.GetErrorSubcode()),
		Type: g.GetType(), Transient: g.GetIsTransient(), Field: g.GetField(), Message: pe.GetMessage(),
	}
}

// errorFromCode derives the Graph error of a Connect or gRPC code, for
// errors that carry no Graph numbers of their own.
func errorFromCode(c codes.Code, message string) *Error {
	switch c {
	case codes.InvalidArgument, codes.OutOfRange:
		return &Error{HTTPStatus: http.StatusBadRequest, Code: 100, Type: TypeInvalid, Message: message}
	case codes.NotFound:
		return &Error{HTTPStatus: http.StatusNotFound, Code: 100, Subcode: 33, Type: TypeGraphMethod, Message: message}
	case codes.Unauthenticated:
		return &Error{HTTPStatus: http.StatusUnauthorized, Code: 190, Subcode: 467, Type: TypeOAuth, Message: message}
	case codes.PermissionDenied:
		return &Error{HTTPStatus: http.StatusForbidden, Code: 10, Type: TypeOAuth, Message: message}
	case codes.Unavailable:
		return Unavailable("The service")
	case codes.Unimplemented:
		return &Error{HTTPStatus: http.StatusNotFound, Code: 2500, Type: TypeGraphMethod, Message: message}
	case codes.ResourceExhausted:
		return &Error{HTTPStatus: http.StatusTooManyRequests, Code: 4, Type: TypeRateLimit, Message: message}
	case codes.FailedPrecondition, codes.Aborted, codes.AlreadyExists:
		return &Error{HTTPStatus: http.StatusConflict, Code: 10, Type: TypeOAuth, Message: message}
	case codes.DeadlineExceeded, codes.Canceled:
		return &Error{HTTPStatus: http.StatusGatewayTimeout, Code: 2, Type: TypeUnavailable, Transient: true, Message: message}
	}
	return Internal(errors.New(message))
}

// codeFor maps an error to its Connect (= gRPC) code, the way the gateway
// maps its own errors.
func codeFor(e *Error) codes.Code {
	switch e.HTTPStatus {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusMethodNotAllowed:
		return codes.InvalidArgument
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound:
		return codes.NotFound
	case http.StatusConflict:
		return codes.FailedPrecondition
	case http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case http.StatusServiceUnavailable:
		return codes.Unavailable
	case http.StatusGatewayTimeout:
		return codes.DeadlineExceeded
	}
	return codes.Internal
}

func typeFor(status int) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return TypeOAuth
	case status == http.StatusNotFound:
		return TypeGraphMethod
	case status == http.StatusTooManyRequests:
		return TypeRateLimit
	case status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout:
		return TypeUnavailable
	case status >= 500:
		return TypeInternal
	}
	return TypeInvalid
}
