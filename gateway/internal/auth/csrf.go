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
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return CSRFRefused("must come from the gateway's own pages, not from another site")
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return CSRFRefused("must come from the gateway's own origin, not " + o)
		}
	}
	got := r.Header.Get(CSRFHeader)
	if got == "" {
		return CSRFRefused("must carry the " + CSRFHeader + " header (csrfToken from GET /api/mobile/auth/session)")
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(CSRFToken(session))) != 1 {
		return CSRFRefused("carries a " + CSRFHeader + " header that is not this session's token")
	}
	return nil
}
