package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/identity"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// WrongCredentials: the username or password given to sign in is wrong.
func WrongCredentials() *apierr.Error {
	return &apierr.Error{HTTPStatus: http.StatusUnauthorized, Code: 190, Subcode: 2069007, Type: apierr.TypeOAuth,
		Message: "Wrong username or password."}
}

// SessionHandler serves the first-party session endpoint
// (`/api/mobile/auth/session`): POST {"username","password"} opens a session
// and answers {"sessionToken","userId","expiresAt"}; GET with the session
// (bearer token or cookie) answers {"userId","expiresAt","csrfToken"}, the
// token a page signed in by cookie sends in X-Svc-CSRF; DELETE closes the
// session. Errors use the Graph envelope.
func (a *Authenticator) SessionHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			a.signIn(w, r)
		case http.MethodGet:
			a.describeSession(w, r)
		case http.MethodDelete:
			a.signOut(w, r)
		default:
			apierr.Write(w, r, apierr.MethodNotAllowed(r.Method))
		}
	})
}

type signInRequest struct {
	Username *string `json:"username"`
	Password *string `json:"password"`
}

type signInResponse struct {
	SessionToken string `json:"sessionToken"`
	UserID       string `json:"userId"`
	ExpiresAt    string `json:"expiresAt"`
}

func (a *Authenticator) signIn(w http.ResponseWriter, r *http.Request) {
	var req signInRequest
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
	s, err := a.ids.Sessions.SignIn(r.Context(), ClientAddress(r), *req.Username, *req.Password)
	var throttled *identity.ThrottledError
	if errors.As(err, &throttled) {
		slog.InfoContext(r.Context(), "mobile sign-in throttled", "scope", throttled.Scope)
		w.Header().Set("Retry-After", RetryAfter(throttled.RetryAfter))
		apierr.Write(w, r, SignInThrottled(throttled))
		return
	}
	if errors.Is(err, identity.ErrWrongPassword) {
		slog.InfoContext(r.Context(), "mobile sign-in refused")
		apierr.Write(w, r, WrongCredentials())
		return
	}
	if err != nil {
		apierr.Write(w, r, apierr.Internal(err))
		return
	}
	apierr.WriteJSON(w, http.StatusOK, signInResponse{SessionToken: s.Token, UserID: s.UserID,
		ExpiresAt: s.ExpiresAt.UTC().Format(time.RFC3339)})
}

type sessionInfo struct {
	UserID    string `json:"userId"`
	ExpiresAt string `json:"expiresAt"`
	CSRFToken string `json:"csrfToken"`
}

// describeSession tells the signed-in session's user and its CSRF token.
// It has no CORS headers, so only the gateway's own pages can read it.
func (a *Authenticator) describeSession(w http.ResponseWriter, r *http.Request) {
	p, err := a.Authenticate(r.Context(), r)
	if err != nil {
		apierr.Write(w, r, err)
		return
	}
	if p == nil {
		apierr.Write(w, r, apierr.NoToken())
		return
	}
	if p.Kind != pluginv1.TokenKind_TOKEN_KIND_SESSION {
		apierr.Write(w, r, KindNotAccepted())
		return
	}
	token, _ := bearer(r)
	apierr.WriteJSON(w, http.StatusOK, sessionInfo{UserID: p.UserID, ExpiresAt: p.ExpiresAt.UTC().Format(time.RFC3339),
		CSRFToken: CSRFToken(token)})
}

func (a *Authenticator) signOut(w http.ResponseWriter, r *http.Request) {
	p, err := a.Authenticate(r.Context(), r)
	if err != nil {
		apierr.Write(w, r, err)
		return
	}
	if p == nil {
		apierr.Write(w, r, apierr.NoToken())
		return
	}
	if p.Kind != pluginv1.TokenKind_TOKEN_KIND_SESSION {
		apierr.Write(w, r, KindNotAccepted())
		return
	}
	token, _ := bearer(r)
	if _, err := a.Revoke(r.Context(), token); err != nil {
		apierr.Write(w, r, apierr.Internal(err))
		return
	}
	apierr.WriteJSON(w, http.StatusOK, map[string]bool{"success": true})
}

// bearer returns the credential Authenticate read: the bearer token of the
// request, or the session cookie.
func bearer(r *http.Request) (string, bool) {
	if token, present := BearerToken(r); present {
		return token, token != ""
	}
	if c, err := r.Cookie(SessionCookie); err == nil {
		return c.Value, true
	}
	return "", false
}

// DecodeStrict reads one JSON object, refusing unknown fields and trailing
// data with an error naming the problem (CONTRACT §1).
func DecodeStrict(body io.Reader, v any) error {
	b, err := io.ReadAll(body)
	if err != nil {
		return apierr.From(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return apierr.Invalid(typeErr.Field, "The parameter %s has the wrong type.", typeErr.Field)
		}
		if name, ok := unknownField(err); ok {
			return apierr.Invalid(name, "Unknown field %s.", name)
		}
		return apierr.Invalid("", "The request body is not a JSON object: %v.", err)
	}
	if dec.More() {
		return apierr.Invalid("", "The request body has data after the JSON object.")
	}
	return nil
}

func unknownField(err error) (string, bool) {
	var name string
	if _, scanErr := fmt.Sscanf(err.Error(), "json: unknown field %q", &name); scanErr == nil {
		return name, true
	}
	return "", false
}

// SignInThrottled answers a sign-in over a limit: 429, code 17 (too many
// attempts on the account, a user limit) or 4 (from one address, or the
// server is busy hashing), transient.
func SignInThrottled(e *identity.ThrottledError) *apierr.Error {
	code, msg := 4, "Too many sign-in attempts from this address; retry later."
	switch e.Scope {
	case "signup":
		msg = "Too many sign-ups from this address; retry later."
	case "account":
		code, msg = 17, "Too many failed sign-in attempts on this account; retry later."
	case "server":
		// Sign-in and account creation share the hashing slots.
		msg = "The server is busy creating accounts and signing users in; retry shortly."
	}
	return apierr.RateLimited(code, msg)
}

// RetryAfter renders a wait as a Retry-After value: whole seconds, at
// least one.
func RetryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int((d+time.Second-1)/time.Second)))
}

// ClientAddress is the address a request came from, without its port: the
// key of per-address limits. Proxies are not trusted: behind one, every
// client shares its address.
func ClientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
