package oauth

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/identity"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// PathExplorerToken is where the developer console's Graph explorer
// exchanges the authorization code it received for an access token, on the
// server: the app's client secret is never in a browser (the interface's
// §5.2c), so the page sends only the code, its PKCE verifier, the app and
// the redirect URI, with the developer's session.
const PathExplorerToken = "/api/developers/explorer/token"

// ExplorerCallbackPath is the path of the explorer's redirect URI (on
// whatever origin the console is browsed at): the only redirect URI whose
// codes PathExplorerToken redeems.
const ExplorerCallbackPath = "/developers/console/explorer/callback"

// explorerTokenRequest is the body of PathExplorerToken.
type explorerTokenRequest struct {
	AppID        string `json:"app_id"`
	Code         string `json:"code"`
	CodeVerifier string `json:"code_verifier"`
	RedirectURI  string `json:"redirect_uri"`
}

// explorerTokenResponse is all the page gets: the access token, its
// scopes and its lifetime. No refresh token (the one the redemption issues
// is revoked at once) and no id_token: the explorer needs neither.
type explorerTokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
	Scope       string `json:"scope"`
}

// explorerToken serves POST PathExplorerToken. Who may: a first-party
// session (the console's cookie, with its CSRF token as for every cookie
// request that changes something, which the gateway's authentication
// checks) of a user on the app's team, any role (auth.AuthorizeApp, the
// rule of every app node); otherwise the CONTRACT §3 refusal (104, 2069001,
// 2069004, 2069008). The code is then redeemed as at the token endpoint,
// the app standing authenticated by that rule instead of its secret, and
// only if the signed-in user authorized it; a refused code answers the
// token endpoint's RFC 6749 error.
func (s *Server) explorerToken(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, err := auth.Caller(ctx)
	if err != nil {
		apierr.Write(w, r, err)
		return
	}
	if p == nil {
		apierr.Write(w, r, apierr.NoToken())
		return
	}
	if p.Kind != pluginv1.TokenKind_TOKEN_KIND_SESSION {
		apierr.Write(w, r, auth.FirstPartyOnly())
		return
	}
	var req explorerTokenRequest
	if err := auth.DecodeStrict(r.Body, &req); err != nil {
		apierr.Write(w, r, err)
		return
	}
	if req.AppID == "" {
		apierr.Write(w, r, apierr.Invalid("app_id", "Invalid parameter: app_id is required."))
		return
	}
	if err := s.authn.AuthorizeApp(ctx, p, pluginv1.AppRole_APP_ROLE_MEMBER, req.AppID); err != nil {
		apierr.Write(w, r, err)
		return
	}
	if u, err := url.Parse(req.RedirectURI); req.RedirectURI != "" && (err != nil || u.Path != ExplorerCallbackPath || u.RawQuery != "" || u.Fragment != "") {
		apierr.Write(w, r, apierr.Invalid("redirect_uri", "Invalid parameter: redirect_uri must be the explorer's callback, <origin>%s.", ExplorerCallbackPath))
		return
	}
	app, err := s.ids.Apps.App(ctx, req.AppID)
	if err != nil {
		apierr.Write(w, r, apierr.Internal(err))
		return
	}
	res, row, e := s.redeemCode(ctx, app, req.Code, req.RedirectURI, req.CodeVerifier)
	if e == nil {
		e = s.keepExplorerGrant(ctx, p, row.GrantID, row.UserID)
	}
	if e != nil {
		if e.status >= 500 {
			slog.ErrorContext(ctx, "explorer token failed", "app_id", app.ID, "error", e.description)
		} else {
			slog.InfoContext(ctx, "explorer token refused", "app_id", app.ID, "error", e.code, "reason", e.description)
		}
		writeProtocolError(w, e)
		return
	}
	apierr.WriteJSON(w, http.StatusOK, explorerTokenResponse{AccessToken: res.AccessToken, TokenType: res.TokenType,
		ExpiresIn: res.ExpiresIn, Scope: res.Scope})
}

// keepExplorerGrant settles what a redemption for the explorer issued: the
// refresh token, which nobody will ever hold, is revoked; and a code that
// another user authorized (the explorer signs in with the same session that
// calls here, so it is never its own) revokes the whole grant and is
// refused: the explorer hands out only the signed-in user's tokens.
func (s *Server) keepExplorerGrant(ctx context.Context, p *auth.Principal, grantID, userID int64) *protocolError {
	if identity.FormatID(userID) != p.UserID {
		if err := s.revokeGrant(ctx, grantID); err != nil {
			slog.ErrorContext(ctx, "revoke another user's explorer grant", "error", err)
			return serverError()
		}
		return invalidGrant("The authorization code was issued to another user than the one signed in.")
	}
	if _, err := s.q.RevokeGrantRefreshTokens(ctx, grantID); err != nil {
		slog.ErrorContext(ctx, "revoke the explorer's refresh token", "error", err)
		return serverError()
	}
	return nil
}
