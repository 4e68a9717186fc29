package oauth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"time"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/identity"
)

// csrfCookie holds the double-submit CSRF secret of the gateway's forms. A
// cross-site page can neither read it nor set it, so it cannot produce a
// form whose csrf_token field matches.
const csrfCookie = "svc_csrf"

// csrfField is the hidden form field carrying the same value.
const csrfField = "csrf_token"

// csrfToken returns the browser's CSRF secret, setting a new one if absent.
func (s *Server) csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 43 {
		return c.Value
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: v, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureRequest(r)})
	return v
}

// checkCSRF reports whether the submitted form carries the browser's secret.
func checkCSRF(r *http.Request) bool {
	c, err := r.Cookie(csrfCookie)
	if err != nil || c.Value == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue(csrfField))) == 1
}

func (s *Server) secureRequest(r *http.Request) bool { return s.secure || r.TLS != nil }

// setSessionCookie signs the browser in.
func (s *Server) setSessionCookie(w http.ResponseWriter, r *http.Request, sess identity.Session) {
	http.SetCookie(w, &http.Cookie{Name: auth.SessionCookie, Value: sess.Token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureRequest(r), Expires: sess.ExpiresAt,
		MaxAge: int(time.Until(sess.ExpiresAt).Seconds())})
}

func (s *Server) clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: auth.SessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureRequest(r), MaxAge: -1})
}
