package oauth

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/web/pages"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// loginPage shows the sign-in form.
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.renderLogin(w, r, http.StatusOK, pages.Login{Next: safeNext(r.URL.Query().Get("next"))})
}

// login checks the form and signs the browser in, then goes to next.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	next := safeNext(r.PostFormValue("next"))
	if !checkCSRF(r) {
		s.renderLogin(w, r, http.StatusForbidden, pages.Login{Next: next,
			Error: "Your sign-in form expired. Please try again."})
		return
	}
	username := r.PostFormValue("username")
	sess, err := s.ids.Sessions.SignIn(ctx, auth.ClientAddress(r), username, r.PostFormValue("password"))
	var throttled *identity.ThrottledError
	if errors.As(err, &throttled) {
		slog.InfoContext(ctx, "sign-in throttled", "scope", throttled.Scope)
		w.Header().Set("Retry-After", auth.RetryAfter(throttled.RetryAfter))
		s.renderLogin(w, r, http.StatusTooManyRequests, pages.Login{Next: next, Username: username,
			Error: "Too many sign-in attempts. Please wait a few minutes and try again."})
		return
	}
	if errors.Is(err, identity.ErrWrongPassword) {
		slog.InfoContext(ctx, "sign-in refused: wrong username or password")
		s.renderLogin(w, r, http.StatusUnauthorized, pages.Login{Next: next, Username: username,
			Error: "Wrong username or password."})
		return
	}
	if err != nil {
		slog.ErrorContext(ctx, "sign-in failed", "error", err)
		s.renderError(w, r, http.StatusInternalServerError, "Something went wrong", "Signing in failed; please try again later.")
		return
	}
	slog.InfoContext(ctx, "signed in", "user_id", sess.UserID)
	s.continueSignedIn(w, r, sess, next)
}

// continueSignedIn sets the session cookie of a browser that just signed
// in (or signed up), then goes to next, or shows the signed-in page.
func (s *Server) continueSignedIn(w http.ResponseWriter, r *http.Request, sess identity.Session, next string) {
	ctx := r.Context()
	s.setSessionCookie(w, r, sess)
	if next != "" {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	u, err := s.ids.Users.User(ctx, sess.UserID)
	if err != nil {
		slog.ErrorContext(ctx, "read signed-in user", "error", err)
	}
	if err := pages.RenderSignedIn(w, pages.SignedIn{Name: u.Name, CSRF: s.csrfToken(w, r)}); err != nil {
		slog.ErrorContext(ctx, "render page", "error", err)
	}
}

// logout ends the browser's session.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if !checkCSRF(r) {
		s.renderError(w, r, http.StatusForbidden, "Request refused", "Your form expired. Please try again.")
		return
	}
	if c, err := r.Cookie(auth.SessionCookie); err == nil && c.Value != "" {
		if _, err := s.authn.Revoke(r.Context(), c.Value); err != nil {
			slog.ErrorContext(r.Context(), "revoke session", "error", err)
		}
	}
	s.clearSessionCookie(w, r)
	http.Redirect(w, r, PathLogin, http.StatusSeeOther)
}

// sessionUser returns the signed-in user of the browser, or nil.
func (s *Server) sessionUser(r *http.Request) *auth.Principal {
	c, err := r.Cookie(auth.SessionCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	p, err := s.authn.AuthenticateToken(r.Context(), c.Value)
	if err != nil || p.Kind != pluginv1.TokenKind_TOKEN_KIND_SESSION {
		return nil
	}
	return p
}

func (s *Server) renderLogin(w http.ResponseWriter, r *http.Request, status int, d pages.Login) {
	d.CSRF = s.csrfToken(w, r)
	d.SignUpOpen = s.ids.SignUpOpen()
	if err := pages.RenderLogin(w, status, d); err != nil {
		slog.ErrorContext(r.Context(), "render login page", "error", err)
	}
}

func (s *Server) renderError(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	if err := pages.RenderError(w, status, pages.Error{Title: title, Message: msg}); err != nil {
		slog.ErrorContext(r.Context(), "render error page", "error", err)
	}
}

// maxNext bounds the place to go after sign-in.
const maxNext = 2048

// safeNext keeps only same-origin absolute paths as the place to go after
// sign-in, so that the login page cannot be used as an open redirector. The
// value is parsed, not pattern-matched: browsers drop tabs and newlines
// from a Location header and read a backslash as a slash, so "/\t/evil.com"
// becomes "//evil.com", another host. Anything with a control character or
// a backslash, raw or percent-encoded, a scheme, a host, or a path that
// does not start with exactly one slash is refused ("" means: the default).
func safeNext(next string) string {
	if next == "" || len(next) > maxNext || hasUnsafeRune(next) {
		return ""
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return ""
	}
	decoded, err := url.PathUnescape(u.EscapedPath())
	if err != nil || hasUnsafeRune(decoded) {
		return ""
	}
	for _, p := range []string{u.EscapedPath(), decoded} {
		if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
			return ""
		}
	}
	if q, err := url.QueryUnescape(u.RawQuery); err != nil || hasUnsafeRune(q) {
		return ""
	}
	return u.String()
}

// hasUnsafeRune reports a control character, a backslash or invalid UTF-8.
func hasUnsafeRune(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\\' || (r >= 0x80 && r < 0xa0) {
			return true
		}
	}
	return false
}
