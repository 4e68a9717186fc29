package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/svcplatform/svc/sdk"
)

// Error families, reported in the envelope's "type" field: the SDK's, so
// that a plugin's refusal and the gateway's read the same.
const (
	TypeOAuth       = sdk.TypeOAuth
	TypeGraphMethod = sdk.TypeGraphMethod
	TypeInvalid     = sdk.TypeInvalid
	TypeRateLimit   = sdk.TypeRateLimit
	TypeUnavailable = sdk.TypeUnavailable
	TypeInternal    = sdk.TypeInternal
	TypeMessaging   = sdk.TypeMessaging
)

// Error is one refusal, with everything needed to write it to any protocol.
// It is the SDK's error type: plugins, partners and the gateway share one
// error model, and a plugin's refusal crosses the wire unchanged.
type Error = sdk.Error

// As finds the *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// NoToken: the request carries no credential.
func NoToken() *Error {
	return &Error{HTTPStatus: http.StatusUnauthorized, Code: 104, Type: TypeOAuth,
		Message: "An access token is required to request this resource."}
}

// InvalidToken: the credential is unknown, malformed or revoked.
func InvalidToken() *Error {
	return &Error{HTTPStatus: http.StatusUnauthorized, Code: 190, Subcode: 467, Type: TypeOAuth,
		Message: "Invalid OAuth access token."}
}

// ExpiredToken: the credential was valid but has expired.
func ExpiredToken() *Error {
	return &Error{HTTPStatus: http.StatusUnauthorized, Code: 190, Subcode: 463, Type: TypeOAuth,
		Message: "Session has expired."}
}

// UserTokenRequired: an app key or system token was used where only a user
// access token will do.
func UserTokenRequired() *Error {
	return &Error{HTTPStatus: http.StatusForbidden, Code: 200, Subcode: 2069001, Type: TypeOAuth,
		Message: "A user access token is required; app keys and system user tokens cannot make this call."}
}

// MissingScope: the credential lacks a scope the call needs.
func MissingScope(scope string) *Error {
	return &Error{HTTPStatus: http.StatusForbidden, Code: 10, Subcode: 2069002, Type: TypeOAuth,
		Message: fmt.Sprintf("The access token lacks the scope %q required for this call.", scope)}
}

// RateLimited: a caller is over a rate limit (CONTRACT §3: code 4 for the
// app, 17 for the user, 32 for the Page).
func RateLimited(code int, message string) *Error {
	return &Error{HTTPStatus: http.StatusTooManyRequests, Code: code, Type: TypeRateLimit, Transient: true, Message: message}
}

// MissingAnyScope: the token carries none of the scopes of which the call
// needs one (2069002, as MissingScope).
func MissingAnyScope(scopes []string) *Error {
	e := MissingScope("")
	e.Message = fmt.Sprintf("The access token needs one of the scopes %s for this call.", strings.Join(scopes, ", "))
	return e
}

// NotPageAdmin: the user neither owns nor administers the Page.
func NotPageAdmin() *Error {
	return PageRoleTooLow("The user must be an owner or admin of the Page.")
}

// PageRoleTooLow: the user's role on the Page (none, editor, admin) does
// not allow the call; why says what it needs. CONTRACT §3 gives every Page
// role refusal 2069003.
func PageRoleTooLow(why string) *Error {
	return &Error{HTTPStatus: http.StatusForbidden, Code: 200, Subcode: 2069003, Type: TypeOAuth, Message: why}
}

// PageNotChosen: the person did not choose the Page for the app on the
// consent page (granular consent, CONTRACT §17, 2069007).
func PageNotChosen() *Error {
	return &Error{HTTPStatus: http.StatusForbidden, Code: 200, Subcode: 2069007, Type: TypeOAuth,
		Message: "The user did not grant the app access to this Page."}
}

// NotLinked: the app is not linked to the Page, or the product is not enabled
// on the link.
func NotLinked(product string) *Error {
	msg := "The app is not linked to this Page."
	if product != "" {
		msg = fmt.Sprintf("The app is not linked to this Page with the product %q enabled.", product)
	}
	return &Error{HTTPStatus: http.StatusForbidden, Code: 10, Subcode: 2018303, Type: TypeOAuth, Message: msg}
}

// PageUnavailable: the Page is unpublished or has chat surfacing off.
func PageUnavailable() *Error {
	return &Error{HTTPStatus: http.StatusForbidden, Code: 10, Subcode: 2018304, Type: TypeOAuth,
		Message: "The Page is not published or has chat surfacing turned off."}
}

// Invalid: a parameter is missing, of the wrong type or out of range. The
// message must name the field. The SDK's, so a plugin's refusal and the
// gateway's read the same.
func Invalid(field, format string, args ...any) *Error {
	return sdk.Invalid(field, format, args...)
}

// TooLarge: the request body is over the limit.
func TooLarge(limit int64) *Error {
	return &Error{HTTPStatus: http.StatusRequestEntityTooLarge, Code: 100, Type: TypeInvalid,
		Message: fmt.Sprintf("The request body is larger than %d bytes.", limit)}
}

// NotFound: the object does not exist (or the caller may not know it
// does). The SDK's.
func NotFound(what string) *Error { return sdk.NotFound(what) }

// UnknownNode: no route matches the Graph node path.
func UnknownNode(node string) *Error {
	return &Error{HTTPStatus: http.StatusNotFound, Code: 2500, Type: TypeGraphMethod,
		Message: fmt.Sprintf("Unknown path components: %q.", node)}
}

// UnknownPath: no handler serves the HTTP path.
func UnknownPath(path string) *Error {
	return &Error{HTTPStatus: http.StatusNotFound, Code: 2500, Type: TypeGraphMethod,
		Message: fmt.Sprintf("Unknown path %q.", path)}
}

// MethodNotAllowed: the path exists but not with this HTTP method.
func MethodNotAllowed(method string) *Error {
	return &Error{HTTPStatus: http.StatusMethodNotAllowed, Code: 100, Type: TypeInvalid,
		Message: fmt.Sprintf("HTTP method %s is not supported on this path.", method)}
}

// UnknownVersion: the API version in the path is not served.
func UnknownVersion(version string) *Error {
	return &Error{HTTPStatus: http.StatusNotFound, Code: 2635, Type: TypeOAuth,
		Message: fmt.Sprintf("API version %s is not supported; the current version is v1.", version)}
}

// Unavailable: a product plugin is restarting or otherwise not serving.
// The SDK's.
func Unavailable(what string) *Error { return sdk.Unavailable(what) }

// Internal: anything else. The cause is logged with the trace id and never
// shown to the caller. The SDK's.
func Internal(cause error) *Error { return sdk.Internal(cause) }
