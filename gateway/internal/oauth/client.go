package oauth

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"net/url"

	"github.com/svcplatform/svc/gateway/internal/identity"
)

// authenticateClient authenticates the client of a token, revocation or
// introspection request by client_secret_basic (RFC 6749 §2.3.1: the id and
// secret are form-urlencoded, then Base64-encoded, so they are decoded here
// the same way) or client_secret_post. Exactly one method may be used.
func (s *Server) authenticateClient(ctx context.Context, r *http.Request) (identity.App, *protocolError) {
	form := r.PostForm
	basicID, basicSecret, basic := r.BasicAuth()
	postID, postSecret := form.Get("client_id"), form.Get("client_secret")
	var id, secret string
	switch {
	case basic && postSecret != "":
		return identity.App{}, invalidRequest("Use one client authentication method, not both HTTP Basic and client_secret.")
	case basic:
		var err1, err2 error
		id, err1 = url.QueryUnescape(basicID)
		secret, err2 = url.QueryUnescape(basicSecret)
		if err1 != nil || err2 != nil {
			return identity.App{}, &protocolError{status: http.StatusUnauthorized, code: errInvalidClient,
				description: "The HTTP Basic credentials are not form-urlencoded.", basicChallenge: true}
		}
		if postID != "" && postID != id {
			return identity.App{}, invalidRequest("client_id in the body differs from the HTTP Basic credentials.")
		}
	default:
		id, secret = postID, postSecret
	}
	if id == "" || secret == "" {
		return identity.App{}, &protocolError{status: http.StatusUnauthorized, code: errInvalidClient,
			description: "Client authentication is required (client_secret_basic or client_secret_post).", basicChallenge: basic}
	}
	app, ok, err := s.clients.authenticate(ctx, s.ids.Apps, id, secret)
	if err != nil && !errors.Is(err, identity.ErrNotFound) {
		slog.ErrorContext(ctx, "client authentication", "error", err)
		return identity.App{}, serverError()
	}
	if !ok {
		slog.InfoContext(ctx, "client authentication failed")
		return identity.App{}, &protocolError{status: http.StatusUnauthorized, code: errInvalidClient,
			description: "Client authentication failed.", basicChallenge: basic}
	}
	return app, nil
}

// readForm parses a form-encoded request body and refuses repeated
// parameters (RFC 6749 §3.2) and parameters in the query string.
func readForm(r *http.Request) *protocolError {
	if ct := r.Header.Get("Content-Type"); !isFormContentType(ct) {
		return invalidRequest("The body must be application/x-www-form-urlencoded.")
	}
	if err := r.ParseForm(); err != nil {
		return invalidRequest("The body is not a valid form.")
	}
	for k, vs := range r.PostForm {
		if len(vs) > 1 {
			return invalidRequest("The parameter " + k + " is repeated.")
		}
	}
	return nil
}

func isFormContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/x-www-form-urlencoded"
}
