package sdk

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/pluginrt"
	"github.com/svcplatform/svc/internal/plugin/protocol"
)

// Error families, reported in the Graph error envelope's "type" field. They
// are the gateway's own (CONTRACT §3).
const (
	TypeOAuth       = protocol.TypeOAuth
	TypeGraphMethod = protocol.TypeGraphMethod
	TypeInvalid     = protocol.TypeInvalid
	TypeRateLimit   = protocol.TypeRateLimit
	TypeUnavailable = protocol.TypeUnavailable
	TypeInternal    = protocol.TypeInternal
	TypeMessaging   = protocol.TypeMessaging
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
const internalMessage = protocol.InternalMessage

// Internal is an unexpected failure (HTTP 500, code 1). The cause is logged,
// never shown. A cause that says the database is unreachable for now
// (databaseUnavailable) is no fault of the call: that is a transient 503,
// code 2, which the caller may retry.
func Internal(cause error) *Error {
	if databaseUnavailable(cause) {
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
	case databaseUnavailable(err):
		return Internal(err), false
	}
	return Internal(err), true
}

// refuse turns a handler's error into its wire form, logging plugin faults
// (pluginrt.Refuse).
func refuse(call *pluginrt.Call, err error) *pluginv1.Error {
	e, fault := asError(err)
	if fault {
		call.Logger().Error("call failed", "error", err)
	}
	return e.refusal().Proto()
}

// refusal is e as the protocol carries it.
func (e *Error) refusal() protocol.Refusal {
	return protocol.Refusal{HTTPStatus: e.HTTPStatus, Code: e.Code, Subcode: e.Subcode, Type: e.Type,
		Message: e.Message, Transient: e.Transient, Field: e.Field}
}

// errorFromProto rebuilds an *Error from its wire form, the refusal of a
// call made through the host.
func errorFromProto(pe *pluginv1.Error) *Error {
	r, internal := protocol.RefusalFromProto(pe)
	if internal {
		return Internal(errors.New(pe.GetMessage()))
	}
	return &Error{HTTPStatus: r.HTTPStatus, Code: r.Code, Subcode: r.Subcode, Type: r.Type,
		Message: r.Message, Transient: r.Transient, Field: r.Field}
}

func typeFor(status int) string { return protocol.TypeFor(status) }
