package protocol

import (
	"net/http"

	"google.golang.org/grpc/codes"

	errorsv1 "github.com/svcplatform/svc/gen/svc/errors/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Refusal is an error as the protocol carries it: the fields of sdk.Error
// (the platform's one error type) without its cause, which never leaves the
// process. Package sdk and the gateway convert their errors to and from a
// Refusal field by field; how a Refusal maps to Connect codes and Graph
// numbers lives here, once.
type Refusal struct {
	HTTPStatus int
	Code       int
	Subcode    int
	Type       string // empty: derived from HTTPStatus
	Message    string
	Transient  bool
	Field      string
}

// The error families of the Graph error envelope's "type" field, as
// package sdk exports them (CONTRACT §3).
const (
	TypeOAuth       = "OAuthException"
	TypeGraphMethod = "GraphMethodException"
	TypeInvalid     = "InvalidParameterException"
	TypeRateLimit   = "RateLimitException"
	TypeUnavailable = "ServiceUnavailableException"
	TypeInternal    = "InternalServerException"
	TypeMessaging   = "MessagingException"
)

// InternalMessage is all a caller learns of an internal error.
const InternalMessage = "An unexpected error has occurred. Please retry your request later."

// Proto returns the wire form of r: its Connect (= gRPC) code, message and
// Graph numbers.
func (r Refusal) Proto() *pluginv1.Error {
	return &pluginv1.Error{ConnectCode: uint32(r.ConnectCode()), Message: r.Message, Graph: r.Graph()}
}

// Graph returns the Graph numbers of r, the detail that Connect and gRPC
// callers receive beside the code.
func (r Refusal) Graph() *errorsv1.GraphError {
	typ := r.Type
	if typ == "" {
		typ = TypeFor(r.HTTPStatus)
	}
	return &errorsv1.GraphError{
		HttpStatus: int32(r.HTTPStatus), Code: int32(r.Code), ErrorSubcode: int32(r.Subcode),
		Type: typ, IsTransient: r.Transient, Field: r.Field,
	}
}

// RefusalFromProto reads a refusal from its wire form. internal is true when
// pe carries no Graph numbers and a code that maps to none: an unexpected
// failure, which each side turns into its internal error with pe's message
// as the cause.
func RefusalFromProto(pe *pluginv1.Error) (r Refusal, internal bool) {
	g := pe.GetGraph()
	if g == nil || g.GetHttpStatus() == 0 {
		return RefusalFromCode(codes.Code(pe.GetConnectCode()), pe.GetMessage())
	}
	return Refusal{
		HTTPStatus: int(g.GetHttpStatus()), Code: int(g.GetCode()), Subcode: int(g.GetErrorSubcode()),
		Type: g.GetType(), Transient: g.GetIsTransient(), Field: g.GetField(), Message: pe.GetMessage(),
	}, false
}

// RefusalFromCode derives the Graph error of a Connect or gRPC code, for
// errors that carry no Graph numbers of their own; internal as for
// RefusalFromProto.
func RefusalFromCode(c codes.Code, message string) (r Refusal, internal bool) {
	switch c {
	case codes.InvalidArgument, codes.OutOfRange:
		return Refusal{HTTPStatus: http.StatusBadRequest, Code: 100, Type: TypeInvalid, Message: message}, false
	case codes.NotFound:
		return Refusal{HTTPStatus: http.StatusNotFound, Code: 100, Subcode: 33, Type: TypeGraphMethod, Message: message}, false
	case codes.Unauthenticated:
		return Refusal{HTTPStatus: http.StatusUnauthorized, Code: 190, Subcode: 467, Type: TypeOAuth, Message: message}, false
	case codes.PermissionDenied:
		return Refusal{HTTPStatus: http.StatusForbidden, Code: 10, Type: TypeOAuth, Message: message}, false
	case codes.Unavailable:
		return Refusal{HTTPStatus: http.StatusServiceUnavailable, Code: 2, Type: TypeUnavailable, Transient: true,
			Message: "The service is temporarily unavailable; retry shortly."}, false
	case codes.Unimplemented:
		return Refusal{HTTPStatus: http.StatusNotFound, Code: 2500, Type: TypeGraphMethod, Message: message}, false
	case codes.ResourceExhausted:
		return Refusal{HTTPStatus: http.StatusTooManyRequests, Code: 4, Type: TypeRateLimit, Message: message}, false
	case codes.FailedPrecondition, codes.Aborted, codes.AlreadyExists:
		return Refusal{HTTPStatus: http.StatusConflict, Code: 10, Type: TypeOAuth, Message: message}, false
	case codes.DeadlineExceeded, codes.Canceled:
		return Refusal{HTTPStatus: http.StatusGatewayTimeout, Code: 2, Type: TypeUnavailable, Transient: true, Message: message}, false
	}
	return Refusal{HTTPStatus: http.StatusInternalServerError, Code: 1, Type: TypeInternal, Message: InternalMessage}, true
}

// ConnectCode maps r to its Connect (= gRPC) code, the way the gateway maps
// its own errors.
func (r Refusal) ConnectCode() codes.Code {
	switch r.HTTPStatus {
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

// TypeFor is the error family of an HTTP status, for errors that name none.
func TypeFor(status int) string {
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
