package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// tokenResponse is the RFC 6749 §5.1 answer.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`
	IDToken      string `json:"id_token,omitempty"`
}

// token serves POST /api/oauth/token.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
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
	var res *tokenResponse
	switch gt := r.PostForm.Get("grant_type"); gt {
	case "authorization_code":
		res, e = s.exchangeCode(ctx, app, r)
	case "refresh_token":
		res, e = s.refresh(ctx, app, r)
	case "client_credentials":
		res, e = s.clientCredentials(ctx, app, r)
	case "":
		e = invalidRequest("grant_type is required.")
	default:
		e = &protocolError{status: http.StatusBadRequest, code: errUnsupportedGrantType,
			description: "Supported grant types: authorization_code, refresh_token, client_credentials."}
	}
	if e != nil {
		if e.status >= 500 {
			slog.ErrorContext(ctx, "token request failed", "app_id", app.ID, "error", e.description)
		} else {
			slog.InfoContext(ctx, "token request refused", "app_id", app.ID, "error", e.code, "reason", e.description)
		}
		writeProtocolError(w, e)
		return
	}
	apierr.WriteJSON(w, http.StatusOK, res)
}

// exchangeCode is the authorization_code grant with PKCE (RFC 6749 §4.1.3,
// RFC 7636 §4.5).
func (s *Server) exchangeCode(ctx context.Context, app identity.App, r *http.Request) (*tokenResponse, *protocolError) {
	form := r.PostForm
	res, _, e := s.redeemCode(ctx, app, form.Get("code"), form.Get("redirect_uri"), form.Get("code_verifier"))
	return res, e
}

// redeemCode redeems an authorization code of app (authenticated by the
// caller) with its PKCE verifier: the token endpoint's authorization_code
// grant, and the console explorer's server-side exchange (explorer.go).
// It answers the tokens and the redeemed code's row (its grant and user).
func (s *Server) redeemCode(ctx context.Context, app identity.App, code, redirectURI, verifier string) (*tokenResponse, coredb.RedeemCodeRow, *protocolError) {
	var none coredb.RedeemCodeRow
	switch {
	case code == "":
		return nil, none, invalidRequest("code is required.")
	case redirectURI == "":
		return nil, none, invalidRequest("redirect_uri is required.")
	case verifier == "":
		return nil, none, invalidRequest("code_verifier is required (PKCE).")
	case !validVerifier(verifier):
		return nil, none, invalidRequest("code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636).")
	}
	aid, _ := identity.ParseID(app.ID)
	codeHash := identity.HashToken(code)
	access, accessHash := identity.NewToken(identity.PrefixAccessToken)
	refresh, refreshHash := identity.NewToken(identity.PrefixRefreshToken)
	now := s.now()
	row, err := s.redeem(ctx, coredb.RedeemCodeParams{
		CodeHash: codeHash, AppID: aid, RedirectUri: redirectURI, CodeChallenge: S256(verifier),
		AccessHash: accessHash, AccessExpiresAt: timestamptz(now.Add(identity.AccessTokenTTL)),
		RefreshHash: refreshHash, RefreshExpiresAt: timestamptz(now.Add(identity.RefreshTokenTTL)),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, none, s.codeRefused(ctx, codeHash, aid)
	}
	if err != nil {
		slog.ErrorContext(ctx, "redeem code", "error", err)
		return nil, none, serverError()
	}
	res := &tokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int(identity.AccessTokenTTL.Seconds()),
		RefreshToken: refresh, Scope: strings.Join(row.Scopes, " ")}
	if slices.Contains(row.Scopes, identity.ScopeOpenID) {
		tok, err := s.idToken(ctx, app, row.UserID, row.Scopes, row.Nonce, row.AuthTime.Time, access, now)
		if err != nil {
			slog.ErrorContext(ctx, "issue id_token", "error", err)
			return nil, none, serverError()
		}
		res.IDToken = tok
	}
	return res, row, nil
}

// codeRefused explains why a code could not be redeemed. A code used a
// second time revokes everything issued from it (RFC 6749 §4.1.2): the
// second use suggests it was stolen.
func (s *Server) codeRefused(ctx context.Context, codeHash []byte, appID int64) *protocolError {
	st, err := s.q.GetCodeState(ctx, codeHash)
	if errors.Is(err, pgx.ErrNoRows) {
		return invalidGrant("The authorization code is not valid.")
	}
	if err != nil {
		slog.ErrorContext(ctx, "read code state", "error", err)
		return serverError()
	}
	switch {
	case st.AppID != appID:
		return invalidGrant("The authorization code was issued to another client.")
	case st.UsedAt.Valid:
		if err := s.revokeGrant(ctx, st.GrantID); err != nil {
			slog.ErrorContext(ctx, "revoke grant after code reuse", "error", err)
			return serverError()
		}
		slog.WarnContext(ctx, "authorization code reused: tokens issued from it revoked", "grant_id", st.GrantID)
		return invalidGrant("The authorization code was already used; the tokens issued from it are revoked.")
	case !s.now().Before(st.ExpiresAt.Time):
		return invalidGrant("The authorization code has expired.")
	}
	return invalidGrant("The code_verifier or redirect_uri does not match the authorization request.")
}

// refresh is the refresh_token grant, rotating the refresh token (RFC 9700
// §4.14.2): the old one is marked used, a new one is issued, and presenting
// a used one again revokes the whole family.
func (s *Server) refresh(ctx context.Context, app identity.App, r *http.Request) (*tokenResponse, *protocolError) {
	form := r.PostForm
	token := form.Get("refresh_token")
	if token == "" {
		return nil, invalidRequest("refresh_token is required.")
	}
	catalog, err := s.ids.Scopes(ctx)
	if err != nil {
		return nil, serverError()
	}
	requested, err := catalog.Parse(form.Get("scope"))
	if err != nil {
		return nil, invalidScope("The scope parameter names an unknown scope.")
	}
	aid, _ := identity.ParseID(app.ID)
	hash := identity.HashToken(token)
	access, accessHash := identity.NewToken(identity.PrefixAccessToken)
	next, nextHash := identity.NewToken(identity.PrefixRefreshToken)
	now := s.now()

	var (
		refused  *protocolError
		userID   int64
		scopes   []string
		revoked  [][]byte
		authTime time.Time
	)
	err = s.ids.InTx(ctx, func(tx *identity.Service) error {
		q := tx.Queries()
		row, err := q.LockRefreshToken(ctx, hash)
		if errors.Is(err, pgx.ErrNoRows) {
			refused = invalidGrant("The refresh token is not valid.")
			return nil
		}
		if err != nil {
			return fmt.Errorf("lock refresh token: %w", err)
		}
		switch {
		case row.AppID != aid:
			refused = invalidGrant("The refresh token was issued to another client.")
			return nil
		case row.RevokedAt.Valid || row.GrantRevokedAt.Valid:
			refused = invalidGrant("The refresh token has been revoked.")
			return nil
		case row.UsedAt.Valid:
			// Reuse of a rotated token: whoever holds the family may be an
			// attacker, so all of it goes, access tokens included.
			if revoked, err = revokeFamily(ctx, q, row.GrantID); err != nil {
				return err
			}
			slog.WarnContext(ctx, "refresh token reused: token family revoked", "grant_id", row.GrantID)
			refused = invalidGrant("The refresh token was already used; every token of this authorization is revoked.")
			return nil
		case !now.Before(row.ExpiresAt.Time):
			refused = invalidGrant("The refresh token has expired.")
			return nil
		}
		scopes = row.Scopes
		if len(requested) > 0 {
			if !identity.ContainsAll(row.Scopes, requested) {
				// Refused before anything changes: the token stays usable.
				refused = invalidScope("A refresh cannot add scopes beyond those originally granted.")
				return nil
			}
			scopes = requested
		}
		userID = row.UserID
		// The app's audience may have changed since the grant: a Tester
		// removed from a development app, or a scope App Review no longer
		// approves for a live app. A refresh re-checks both, so access ends
		// within an access token's life, not a refresh token's 60 days.
		may, err := s.ids.Apps.MayAuthorize(ctx, app, identity.FormatID(row.UserID))
		if err != nil {
			return err
		}
		if !may {
			refused = invalidGrant("The user may no longer authorize this app.")
			return nil
		}
		grantable, err := s.ids.Apps.GrantableScopes(ctx, app)
		if err != nil {
			return err
		}
		scopes = slices.DeleteFunc(slices.Clone(scopes), func(sc string) bool { return !slices.Contains(grantable, sc) })
		if len(scopes) == 0 {
			refused = invalidGrant("None of the granted scopes is approved for this app any more.")
			return nil
		}
		if err := q.MarkRefreshTokenUsed(ctx, hash); err != nil {
			return fmt.Errorf("mark refresh token used: %w", err)
		}
		grant := row.GrantID
		if err := q.InsertCredential(ctx, coredb.InsertCredentialParams{TokenHash: accessHash,
			Kind: int16(pluginv1.TokenKind_TOKEN_KIND_USER), AppID: &aid, UserID: &userID, Scopes: scopes,
			GrantID: &grant, ExpiresAt: timestamptz(now.Add(identity.AccessTokenTTL))}); err != nil {
			return fmt.Errorf("store access token: %w", err)
		}
		// The new refresh token keeps the original grant's scopes (RFC 6749 §6).
		return q.InsertRefreshToken(ctx, coredb.InsertRefreshTokenParams{TokenHash: nextHash, GrantID: grant,
			AppID: aid, UserID: userID, Scopes: row.Scopes, ExpiresAt: timestamptz(now.Add(identity.RefreshTokenTTL))})
	})
	s.authn.Forget(revoked...)
	if err != nil {
		slog.ErrorContext(ctx, "refresh", "error", err)
		return nil, serverError()
	}
	if refused != nil {
		return nil, refused
	}
	res := &tokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int(identity.AccessTokenTTL.Seconds()),
		RefreshToken: next, Scope: strings.Join(scopes, " ")}
	if slices.Contains(scopes, identity.ScopeOpenID) {
		tok, err := s.idToken(ctx, app, userID, scopes, "", authTime, access, now)
		if err != nil {
			slog.ErrorContext(ctx, "issue id_token", "error", err)
			return nil, serverError()
		}
		res.IDToken = tok
	}
	return res, nil
}

// clientCredentials issues a system user token for the app itself (RFC 6749
// §4.4), usable on the Pages linked to the app. No refresh token is issued.
func (s *Server) clientCredentials(ctx context.Context, app identity.App, r *http.Request) (*tokenResponse, *protocolError) {
	catalog, err := s.ids.Scopes(ctx)
	if err != nil {
		return nil, serverError()
	}
	requested, err := catalog.Parse(r.PostForm.Get("scope"))
	if err != nil {
		return nil, invalidScope("The scope parameter names an unknown scope.")
	}
	grantable, err := s.ids.Apps.GrantableScopes(ctx, app)
	if err != nil {
		slog.ErrorContext(ctx, "grantable scopes", "error", err)
		return nil, serverError()
	}
	grantable = slices.DeleteFunc(grantable, func(sc string) bool { return sc == identity.ScopeOpenID })
	scopes := requested
	if len(scopes) == 0 {
		scopes = grantable
	}
	for _, sc := range scopes {
		if !slices.Contains(grantable, sc) {
			return nil, invalidScope(fmt.Sprintf("The scope %s cannot be granted to a system user token of this app.", sc))
		}
	}
	aid, _ := identity.ParseID(app.ID)
	access, err := issueAccessToken(ctx, s.ids, aid, nil, scopes, s.now())
	if err != nil {
		slog.ErrorContext(ctx, "issue system user token", "error", err)
		return nil, serverError()
	}
	return &tokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int(identity.AccessTokenTTL.Seconds()),
		Scope: strings.Join(scopes, " ")}, nil
}

// revokeGrant revokes a token family in its own transaction and forgets
// its access tokens from the authentication cache.
func (s *Server) revokeGrant(ctx context.Context, grantID int64) error {
	var hashes [][]byte
	err := s.ids.InTx(ctx, func(tx *identity.Service) error {
		var err error
		hashes, err = revokeFamily(ctx, tx.Queries(), grantID)
		return err
	})
	s.authn.Forget(hashes...)
	return err
}

// revokeFamily revokes a grant and every token issued from it. The grant is
// revoked first: its row lock serialises this against a rotation in flight.
func revokeFamily(ctx context.Context, q *coredb.Queries, grantID int64) ([][]byte, error) {
	if _, err := q.RevokeGrant(ctx, grantID); err != nil {
		return nil, fmt.Errorf("revoke grant: %w", err)
	}
	gid := grantID
	hashes, err := q.RevokeGrantCredentials(ctx, &gid)
	if err != nil {
		return nil, fmt.Errorf("revoke access tokens: %w", err)
	}
	if _, err := q.RevokeGrantRefreshTokens(ctx, grantID); err != nil {
		return nil, fmt.Errorf("revoke refresh tokens: %w", err)
	}
	return hashes, nil
}

// idClaims are the id_token's claims (OIDC Core §2).
type idClaims struct {
	Issuer   string `json:"iss"`
	Subject  string `json:"sub"`
	Audience string `json:"aud"`
	Expiry   int64  `json:"exp"`
	IssuedAt int64  `json:"iat"`
	AuthTime int64  `json:"auth_time,omitempty"`
	Nonce    string `json:"nonce,omitempty"`
	AtHash   string `json:"at_hash,omitempty"`
	Name     string `json:"name,omitempty"`
}

func (s *Server) idToken(ctx context.Context, app identity.App, userID int64, scopes []string, nonce string, authTime time.Time, access string, now time.Time) (string, error) {
	c := idClaims{Issuer: s.issuer, Subject: identity.FormatID(userID), Audience: app.ClientID,
		Expiry: now.Add(identity.AccessTokenTTL).Unix(), IssuedAt: now.Unix(), Nonce: nonce, AtHash: atHash(access)}
	if !authTime.IsZero() {
		c.AuthTime = authTime.Unix()
	}
	if slices.Contains(scopes, identity.ScopePublicProfile) {
		u, err := s.ids.Users.User(ctx, c.Subject)
		if err != nil {
			return "", err
		}
		c.Name = u.Name
	}
	return s.keys.sign(c)
}

// atHash is the id_token's access token hash (OIDC Core §3.1.3.6): the left
// half of SHA-256 of the token, base64url.
func atHash(access string) string {
	sum := sha256.Sum256([]byte(access))
	return base64.RawURLEncoding.EncodeToString(sum[:len(sum)/2])
}

func timestamptz(t time.Time) pgtype.Timestamptz { return pgtype.Timestamptz{Time: t, Valid: true} }
