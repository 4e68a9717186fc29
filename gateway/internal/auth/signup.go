package auth

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/identity"
)

// SignUpClosed: the operator closed sign-up (--signup closed): 403, code
// 200 (CONTRACT §16).
func SignUpClosed() *apierr.Error {
	return &apierr.Error{HTTPStatus: http.StatusForbidden, Code: 200, Type: apierr.TypeOAuth,
		Message: "Sign-up is closed on this platform; ask its operator for an account."}
}

// SignUpError is the refusal of identity.Users.SignUp's error, or nil
// when err is not a refusal (a server fault).
func SignUpError(err error) *apierr.Error {
	var field *identity.FieldError
	var throttled *identity.ThrottledError
	switch {
	case errors.Is(err, identity.ErrSignUpClosed):
		return SignUpClosed()
	case errors.As(err, &field):
		return apierr.Invalid(field.Field, "Invalid parameter %s: %s", field.Field, field.Message)
	case errors.As(err, &throttled):
		return SignInThrottled(throttled)
	}
	return nil
}

type signUpRequest struct {
	Username *string `json:"username"`
	Password *string `json:"password"`
	Name     *string `json:"name"`
}

type signUpResponse struct {
	UserID       string `json:"userId"`
	SessionToken string `json:"sessionToken"`
}

// SignUpHandler serves `POST /api/mobile/auth/signup` {"username",
// "password","name"}: it creates the account and answers 201
// {"userId","sessionToken"}, a session like the one of
// `/api/mobile/auth/session` (CONTRACT §16). Refusals use the Graph
// envelope: 400 code 100 naming the field, 403 code 200 when sign-up is
// closed, 429 code 4 for too many sign-ups from the address.
func (a *Authenticator) SignUpHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			apierr.Write(w, r, apierr.MethodNotAllowed(r.Method))
			return
		}
		// Closed is said first: nothing else about the request matters.
		if !a.ids.SignUpOpen() {
			apierr.Write(w, r, SignUpClosed())
			return
		}
		var req signUpRequest
		if err := DecodeStrict(r.Body, &req); err != nil {
			apierr.Write(w, r, err)
			return
		}
		switch {
		case req.Username == nil || *req.Username == "":
			apierr.Write(w, r, apierr.Invalid("username", "The parameter username is required."))
			return
		case req.Password == nil || *req.Password == "":
			apierr.Write(w, r, apierr.Invalid("password", "The parameter password is required."))
			return
		}
		n := identity.NewUser{Username: *req.Username, Password: *req.Password}
		if req.Name != nil {
			n.Name = *req.Name
		}
		u, sess, err := a.ids.Users.SignUp(r.Context(), ClientAddress(r), n)
		if refusal := SignUpError(err); refusal != nil {
			var throttled *identity.ThrottledError
			if errors.As(err, &throttled) {
				w.Header().Set("Retry-After", RetryAfter(throttled.RetryAfter))
			}
			slog.InfoContext(r.Context(), "mobile sign-up refused", "error", err)
			apierr.Write(w, r, refusal)
			return
		}
		if err != nil {
			apierr.Write(w, r, apierr.Internal(err))
			return
		}
		slog.InfoContext(r.Context(), "signed up", "user_id", u.ID)
		apierr.WriteJSON(w, http.StatusCreated, signUpResponse{UserID: u.ID, SessionToken: sess.Token})
	})
}
