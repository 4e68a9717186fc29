package oauth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/identity"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// revoke serves RFC 7009 revocation. The client may revoke its own access
// and refresh tokens; revoking a refresh token revokes its whole family,
// access tokens included (RFC 7009 §2.1). Unknown tokens and other clients'
// tokens are answered 200 like success, so the endpoint reveals nothing.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	if e := readForm(r); e != nil {
		writeProtocolError(w, e)
		return
	}
	ctx := r.Context()
	app, e := s.authenticateClient(ctx, r)
	if e != nil {
		writeProtocolError(w, e)
		return
	}
	token := r.PostForm.Get("token")
	if token == "" {
		writeProtocolError(w, invalidRequest("token is required."))
		return
	}
	if err := s.revokeToken(ctx, app, token, r.PostForm.Get("token_type_hint")); err != nil {
		slog.ErrorContext(ctx, "revoke token", "error", err)
		// RFC 7009 §2.2.1: the client may retry.
		writeProtocolError(w, &protocolError{status: http.StatusServiceUnavailable, code: errServerError,
			description: "The token could not be revoked now; retry."})
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

func (s *Server) revokeToken(ctx context.Context, app identity.App, token, hint string) error {
	hash := identity.HashToken(token)
	tryAccess := func() (bool, error) {
		row, err := s.q.LookupCredential(ctx, hash)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		kind := pluginv1.TokenKind(row.Kind)
		if row.AppID == nil || identity.FormatID(*row.AppID) != app.ID ||
			(kind != pluginv1.TokenKind_TOKEN_KIND_USER && kind != pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER) {
			return true, nil
		}
		_, err = s.authn.Revoke(ctx, token)
		return true, err
	}
	tryRefresh := func() (bool, error) {
		row, err := s.q.GetRefreshToken(ctx, hash)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if row.ClientID != app.ClientID {
			return true, nil
		}
		return true, s.revokeGrant(ctx, row.GrantID)
	}
	order := []func() (bool, error){tryAccess, tryRefresh}
	if hint == "refresh_token" {
		order = []func() (bool, error){tryRefresh, tryAccess}
	}
	for _, try := range order {
		found, err := try()
		if err != nil || found {
			return err
		}
	}
	return nil
}

// introspection is the RFC 7662 answer.
type introspection struct {
	Active    bool   `json:"active"`
	Scope     string `json:"scope,omitempty"`
	ClientID  string `json:"client_id,omitempty"`
	Subject   string `json:"sub,omitempty"`
	TokenType string `json:"token_type,omitempty"`
	Expiry    int64  `json:"exp,omitempty"`
	IssuedAt  int64  `json:"iat,omitempty"`
	Issuer    string `json:"iss,omitempty"`
	Audience  string `json:"aud,omitempty"`
}

// introspect serves RFC 7662 introspection of the client's own access and
// refresh tokens. Anything else — unknown, expired, revoked, rotated, or
// another client's — is {"active":false}.
func (s *Server) introspect(w http.ResponseWriter, r *http.Request) {
	if e := readForm(r); e != nil {
		writeProtocolError(w, e)
		return
	}
	ctx := r.Context()
	app, e := s.authenticateClient(ctx, r)
	if e != nil {
		writeProtocolError(w, e)
		return
	}
	token := r.PostForm.Get("token")
	if token == "" {
		writeProtocolError(w, invalidRequest("token is required."))
		return
	}
	res, err := s.describe(ctx, app, token)
	if err != nil {
		slog.ErrorContext(ctx, "introspect", "error", err)
		writeProtocolError(w, serverError())
		return
	}
	apierr.WriteJSON(w, http.StatusOK, res)
}

func (s *Server) describe(ctx context.Context, app identity.App, token string) (introspection, error) {
	hash := identity.HashToken(token)
	now := s.now()
	row, err := s.q.LookupCredential(ctx, hash)
	switch {
	case err == nil:
		kind := pluginv1.TokenKind(row.Kind)
		if row.AppID == nil || identity.FormatID(*row.AppID) != app.ID || row.RevokedAt.Valid ||
			(kind != pluginv1.TokenKind_TOKEN_KIND_USER && kind != pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER) ||
			(row.ExpiresAt.Valid && !now.Before(row.ExpiresAt.Time)) {
			return introspection{}, nil
		}
		res := introspection{Active: true, Scope: strings.Join(row.Scopes, " "), ClientID: app.ClientID,
			TokenType: "Bearer", IssuedAt: row.CreatedAt.Time.Unix(), Issuer: s.issuer, Audience: app.ClientID}
		if row.ExpiresAt.Valid {
			res.Expiry = row.ExpiresAt.Time.Unix()
		}
		if row.UserID != nil {
			res.Subject = identity.FormatID(*row.UserID)
		}
		return res, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return introspection{}, err
	}
	rt, err := s.q.GetRefreshToken(ctx, hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return introspection{}, nil
	}
	if err != nil {
		return introspection{}, err
	}
	if rt.ClientID != app.ClientID || rt.UsedAt.Valid || rt.RevokedAt.Valid || rt.GrantRevokedAt.Valid ||
		!now.Before(rt.ExpiresAt.Time) {
		return introspection{}, nil
	}
	return introspection{Active: true, Scope: strings.Join(rt.Scopes, " "), ClientID: app.ClientID,
		Subject: identity.FormatID(rt.UserID), TokenType: "refresh_token", Expiry: rt.ExpiresAt.Time.Unix(),
		IssuedAt: rt.CreatedAt.Time.Unix(), Issuer: s.issuer, Audience: app.ClientID}, nil
}
