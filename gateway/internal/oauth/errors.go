package oauth

import (
	"net/http"

	"github.com/svcplatform/svc/gateway/internal/apierr"
)

// RFC 6749 §5.2 and RFC 7009/7662 error codes.
const (
	errInvalidRequest       = "invalid_request"
	errInvalidClient        = "invalid_client"
	errInvalidGrant         = "invalid_grant"
	errUnsupportedGrantType = "unsupported_grant_type"
	errInvalidScope         = "invalid_scope"
	errAccessDenied         = "access_denied"
	errUnsupportedResponse  = "unsupported_response_type"
	errServerError          = "server_error"
	errLoginRequired        = "login_required"
	errConsentRequired      = "consent_required"
	errInvalidToken         = "invalid_token"
	errInsufficientScope    = "insufficient_scope"
)

// protocolError is an RFC 6749 error answer of the token-side endpoints.
type protocolError struct {
	status      int
	code        string
	description string
	// basicChallenge asks for HTTP Basic client credentials (RFC 6749 §5.2).
	basicChallenge bool
}

func (e *protocolError) Error() string { return e.code + ": " + e.description }

func invalidRequest(desc string) *protocolError {
	return &protocolError{status: http.StatusBadRequest, code: errInvalidRequest, description: desc}
}

func invalidGrant(desc string) *protocolError {
	return &protocolError{status: http.StatusBadRequest, code: errInvalidGrant, description: desc}
}

func invalidScope(desc string) *protocolError {
	return &protocolError{status: http.StatusBadRequest, code: errInvalidScope, description: desc}
}

func serverError() *protocolError {
	return &protocolError{status: http.StatusInternalServerError, code: errServerError,
		description: "The server could not complete the request; retry later."}
}

// writeProtocolError answers {"error","error_description"}.
func writeProtocolError(w http.ResponseWriter, e *protocolError) {
	h := w.Header()
	if e.basicChallenge {
		h.Set("WWW-Authenticate", `Basic realm="svc", charset="UTF-8"`)
	}
	apierr.WriteJSON(w, e.status, map[string]string{"error": e.code, "error_description": e.description})
}
