package oauth

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/identity"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// metadata is the discovery document (OIDC Discovery 1.0, RFC 8414).
type metadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	JWKSURI                           string   `json:"jwks_uri"`
	UserinfoEndpoint                  string   `json:"userinfo_endpoint"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	IntrospectionEndpoint             string   `json:"introspection_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	SubjectTypesSupported             []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported  []string `json:"id_token_signing_alg_values_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	RevocationAuthMethodsSupported    []string `json:"revocation_endpoint_auth_methods_supported"`
	IntrospectionAuthMethodsSupported []string `json:"introspection_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	ClaimsSupported                   []string `json:"claims_supported"`
	PromptValuesSupported             []string `json:"prompt_values_supported"`
	AuthorizationResponseISSSupported bool     `json:"authorization_response_iss_parameter_supported"`
}

func (s *Server) discovery(w http.ResponseWriter, r *http.Request) {
	// The catalog: the gateway's own scopes and those its plugins declared
	// (the gateway's own alone when the database cannot be read).
	scopes := identity.CoreScopes()
	if catalog, err := s.ids.Scopes(r.Context()); err == nil {
		scopes = catalog.All()
	}
	clientAuth := []string{"client_secret_basic", "client_secret_post"}
	m := metadata{
		Issuer:                            s.issuer,
		AuthorizationEndpoint:             s.issuer + PathAuthorize,
		TokenEndpoint:                     s.issuer + PathToken,
		JWKSURI:                           s.issuer + PathJWKS,
		UserinfoEndpoint:                  s.issuer + PathUserinfo,
		RevocationEndpoint:                s.issuer + PathRevoke,
		IntrospectionEndpoint:             s.issuer + PathIntrospect,
		ScopesSupported:                   scopes,
		ResponseTypesSupported:            []string{"code"},
		ResponseModesSupported:            []string{"query"},
		GrantTypesSupported:               []string{"authorization_code", "refresh_token", "client_credentials"},
		SubjectTypesSupported:             []string{"public"},
		IDTokenSigningAlgValuesSupported:  []string{algRS256},
		TokenEndpointAuthMethodsSupported: clientAuth,
		RevocationAuthMethodsSupported:    clientAuth,
		IntrospectionAuthMethodsSupported: clientAuth,
		CodeChallengeMethodsSupported:     []string{"S256"},
		ClaimsSupported:                   []string{"iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "at_hash", "name"},
		PromptValuesSupported:             []string{"none", "consent", "login"},
		AuthorizationResponseISSSupported: true,
	}
	public(w)
	apierr.WriteJSON(w, http.StatusOK, m, cachedFiveMinutes)
}

func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	public(w)
	apierr.WriteJSON(w, http.StatusOK, s.keys.jwks(), cachedFiveMinutes)
}

// public lets browser clients read discovery and keys.
func public(w http.ResponseWriter) { w.Header().Set("Access-Control-Allow-Origin", "*") }

// cachedFiveMinutes: discovery and keys change rarely; clients and proxies
// may keep them five minutes.
var cachedFiveMinutes = apierr.CacheControl("public, max-age=300")

// userinfo serves the OIDC UserInfo endpoint for user access tokens with
// the openid scope. Errors follow RFC 6750 §3.
func (s *Server) userinfo(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	challenge := func(status int, code, desc string) {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error=%q, error_description=%q`, code, desc))
		apierr.WriteJSON(w, status, map[string]string{"error": code, "error_description": desc})
	}
	token, ok := bearerToken(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="svc"`)
		apierr.WriteJSON(w, http.StatusUnauthorized, map[string]string{"error": errInvalidRequest,
			"error_description": "A bearer access token is required."})
		return
	}
	p, err := s.authn.AuthenticateToken(ctx, token)
	if err != nil {
		if e, ok := apierr.As(err); ok && e.HTTPStatus >= 500 {
			slog.ErrorContext(ctx, "userinfo", "error", err)
			writeProtocolError(w, serverError())
			return
		}
		challenge(http.StatusUnauthorized, errInvalidToken, "The access token is invalid, expired or revoked.")
		return
	}
	if p.Kind != pluginv1.TokenKind_TOKEN_KIND_USER {
		challenge(http.StatusUnauthorized, errInvalidToken, "A user access token is required.")
		return
	}
	if !slices.Contains(p.Scopes, identity.ScopeOpenID) {
		challenge(http.StatusForbidden, errInsufficientScope, "The access token lacks the openid scope.")
		return
	}
	claims := map[string]string{"sub": p.UserID}
	if slices.Contains(p.Scopes, identity.ScopePublicProfile) {
		u, err := s.ids.Users.User(ctx, p.UserID)
		if err != nil {
			slog.ErrorContext(ctx, "userinfo: read user", "error", err)
			writeProtocolError(w, serverError())
			return
		}
		claims["name"] = u.Name
	}
	apierr.WriteJSON(w, http.StatusOK, claims)
}

// bearerToken reads the access token of a UserInfo request: the
// Authorization header's, or the form's (RFC 6750 §2.2).
func bearerToken(r *http.Request) (string, bool) {
	if token, _ := auth.BearerToken(r); token != "" {
		return token, true
	}
	if r.Method == http.MethodPost && isFormContentType(r.Header.Get("Content-Type")) {
		if err := r.ParseForm(); err == nil && r.PostForm.Get("access_token") != "" {
			return r.PostForm.Get("access_token"), true
		}
	}
	return "", false
}
