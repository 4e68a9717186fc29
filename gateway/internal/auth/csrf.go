package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"

	"github.com/svcplatform/svc/gateway/internal/apierr"
)

// CSRFHeader is the header that a state-changing request authenticated by
// the session cookie must carry, holding CSRFToken of the session.
const CSRFHeader = "X-Svc-CSRF"

// CSRFToken is the CSRF token bound to a session: HMAC-SHA256 keyed by the
// session token, in base64url. A page of another site can neither read the
// HttpOnly cookie nor this token (the session endpoint that tells it has no
// CORS headers), so it cannot forge a request that carries it; and it
// changes with the session, so nothing needs to be stored.
func CSRFToken(session string) string {
	m := hmac.New(sha256.New, []byte(session))
	m.Write([]byte("svc csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CSRFRefused: a state-changing request signed in with the session cookie
// came without the session's CSRF token, or from another origin. Our own
// row of CONTRACT §3: HTTP 403, code 200, subcode 2069008.
func CSRFRefused(why string) *apierr.Error {
	return &apierr.Error{HTTPStatus: http.StatusForbidden, Code: 200, Subcode: 2069008, Type: apierr.TypeOAuth,
		Message: "A request signed in with the session cookie that changes something " + why + "."}
}

// checkCookieRequest applies the rule to a request authenticated by the
// session cookie: safe methods pass; others need the X-Svc-CSRF header equal
// to the session's token, and, when the browser says where it comes from
// (Origin, Sec-Fetch-Site), this very origin.
func checkCookieRequest(r *http.Request, session string) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	return checkCSRF(r, session, r.Header.Get(CSRFHeader), "the "+CSRFHeader+" header", " (csrfToken from GET /api/mobile/auth/session)")
}

// CSRFFormField is the hidden field of a page's plain HTML form that holds
// CSRFToken of the session, for a browser without JavaScript (which cannot
// set CSRFHeader).
const CSRFFormField = "csrf_token"

// CheckFormCSRF applies the same rule to a plain HTML form posted with the
// session cookie: its CSRFFormField must equal the session's token, and the
// browser must not say it comes from another site or origin.
func CheckFormCSRF(r *http.Request, session string) error {
	return checkCSRF(r, session, r.PostFormValue(CSRFFormField), "the "+CSRFFormField+" field", " of the page's form")
}

// checkCSRF is the rule of both: got, the token the request carries in
// carrier (hint says where to find it), must be the session's, and the
// request must come from this origin.
func checkCSRF(r *http.Request, session, got, carrier, hint string) error {
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return CSRFRefused("must come from the gateway's own pages, not from another site")
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return CSRFRefused("must come from the gateway's own origin, not " + o)
		}
	}
	if got == "" {
		return CSRFRefused("must carry " + carrier + hint)
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(CSRFToken(session))) != 1 {
		return CSRFRefused("carries " + carrier + " with a token that is not this session's")
	}
	return nil
}
