package oauth

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/web/pages"
)

// signUpPage shows the sign-up form (CONTRACT §16), or says that sign-up
// is closed.
func (s *Server) signUpPage(w http.ResponseWriter, r *http.Request) {
	d := pages.SignUp{Next: safeNext(r.URL.Query().Get("next"))}
	status := http.StatusOK
	if !s.ids.SignUpOpen() {
		status, d.Closed = http.StatusForbidden, true
	}
	s.renderSignUp(w, r, status, d)
}

// signUp creates the account the form describes, through the same rules
// and limits as the mobile API (identity.Users.SignUp), signs the
// browser in and continues where /login would: next, or the signed-in page.
func (s *Server) signUp(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	d := pages.SignUp{Next: safeNext(r.PostFormValue("next")), Name: r.PostFormValue("name"),
		Username: r.PostFormValue("username")}
	if !s.ids.SignUpOpen() {
		d.Closed = true
		s.renderSignUp(w, r, http.StatusForbidden, d)
		return
	}
	if !checkCSRF(r) {
		d.Error = "Your sign-up form expired. Please try again."
		s.renderSignUp(w, r, http.StatusForbidden, d)
		return
	}
	_, sess, err := s.ids.Users.SignUp(ctx, auth.ClientAddress(r), identity.NewUser{Username: d.Username,
		Name: d.Name, Password: r.PostFormValue("password")})
	var field *identity.FieldError
	var throttled *identity.ThrottledError
	switch {
	case errors.As(err, &field):
		slog.InfoContext(ctx, "sign-up refused", "field", field.Field)
		d.Error = field.Message
		s.renderSignUp(w, r, http.StatusBadRequest, d)
		return
	case errors.As(err, &throttled):
		slog.InfoContext(ctx, "sign-up throttled", "scope", throttled.Scope)
		w.Header().Set("Retry-After", auth.RetryAfter(throttled.RetryAfter))
		d.Error = "Too many sign-ups from your network. Please wait a while and try again."
		s.renderSignUp(w, r, http.StatusTooManyRequests, d)
		return
	case errors.Is(err, identity.ErrSignUpClosed):
		d.Closed = true
		s.renderSignUp(w, r, http.StatusForbidden, d)
		return
	case err != nil:
		slog.ErrorContext(ctx, "sign-up failed", "error", err)
		s.renderError(w, r, http.StatusInternalServerError, "Something went wrong", "Creating your account failed; please try again later.")
		return
	}
	slog.InfoContext(ctx, "signed up", "user_id", sess.UserID)
	s.continueSignedIn(w, r, sess, d.Next)
}

func (s *Server) renderSignUp(w http.ResponseWriter, r *http.Request, status int, d pages.SignUp) {
	d.CSRF = s.csrfToken(w, r)
	d.MinPassword = identity.MinPasswordRunes
	if err := pages.RenderSignUp(w, status, d); err != nil {
		slog.ErrorContext(r.Context(), "render sign-up page", "error", err)
	}
}
