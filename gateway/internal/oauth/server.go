package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/internal/genericplan"
	"github.com/svcplatform/svc/internal/groupcommit"
)

// Options configure a Server.
type Options struct {
	// Issuer is the gateway's public URL (config.Config.PublicURL), without
	// a trailing slash.
	Issuer string
	// Identity is the identity store.
	Identity *identity.Service
	// Auth resolves session cookies and forgets revoked tokens.
	Auth *auth.Authenticator
	// KeySecret, when set, seals the id_token signing key in the database
	// with AES-256-GCM under a key derived from it.
	KeySecret []byte
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Server is the authorization server.
type Server struct {
	issuer string
	ids    *identity.Service
	q      *coredb.Queries
	// generic runs RedeemCodes with a generic plan (internal/genericplan).
	generic *coredb.Queries
	authn   *auth.Authenticator
	keys    *keySet
	now     func() time.Time
	secure  bool
	// clients remembers authenticated clients (clientcache.go).
	clients clientCache
	// redeems batches concurrent code redemptions (redeembatch.go).
	redeems *groupcommit.Batcher[*redemption]
}

// Router is where the server's handlers are registered (server.Server).
type Router interface {
	Handle(pattern string, h http.Handler)
}

// New builds the server, loading the id_token signing key or generating it
// on the installation's first start.
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.Issuer == "" || opts.Identity == nil || opts.Auth == nil {
		return nil, errors.New("oauth: Issuer, Identity and Auth are required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{
		issuer:  strings.TrimRight(opts.Issuer, "/"),
		ids:     opts.Identity,
		q:       opts.Identity.Queries(),
		generic: coredb.New(genericplan.New(opts.Identity.Pool(), 0)),
		authn:   opts.Auth,
		now:     opts.Now,
		secure:  strings.HasPrefix(opts.Issuer, "https://"),
	}
	s.redeems = groupcommit.New(s.redeemBatch, redeemBatches)
	keys, err := loadKeys(ctx, s.q, opts.KeySecret)
	if err != nil {
		return nil, fmt.Errorf("oauth signing key: %w", err)
	}
	s.keys = keys
	return s, nil
}

// Issuer is the issuer identifier (the gateway's public URL).
func (s *Server) Issuer() string { return s.issuer }

// Paths of the endpoints, relative to the issuer.
const (
	PathAuthorize  = "/oauth/authorize"
	PathToken      = "/api/oauth/token"
	PathRevoke     = "/api/oauth/revoke"
	PathIntrospect = "/api/oauth/introspect"
	PathUserinfo   = "/api/oauth/userinfo"
	PathJWKS       = "/oauth/jwks"
	PathLogin      = "/login"
	PathLogout     = "/logout"
	PathSignUp     = "/signup"
)

// Register adds every endpoint and page of the server to r.
func (s *Server) Register(r Router) {
	r.Handle("GET "+PathAuthorize, http.HandlerFunc(s.authorize))
	r.Handle("POST "+PathAuthorize, http.HandlerFunc(s.authorize))
	r.Handle("GET "+PathLogin, http.HandlerFunc(s.loginPage))
	r.Handle("POST "+PathLogin, http.HandlerFunc(s.login))
	r.Handle("POST "+PathLogout, http.HandlerFunc(s.logout))
	r.Handle("GET "+PathSignUp, http.HandlerFunc(s.signUpPage))
	r.Handle("POST "+PathSignUp, http.HandlerFunc(s.signUp))
	r.Handle("POST "+PathToken, http.HandlerFunc(s.token))
	r.Handle("POST "+PathExplorerToken, http.HandlerFunc(s.explorerToken))
	r.Handle("POST "+PathRevoke, http.HandlerFunc(s.revoke))
	r.Handle("POST "+PathIntrospect, http.HandlerFunc(s.introspect))
	r.Handle("GET "+PathUserinfo, http.HandlerFunc(s.userinfo))
	r.Handle("POST "+PathUserinfo, http.HandlerFunc(s.userinfo))
	r.Handle("GET "+PathJWKS, http.HandlerFunc(s.jwks))
	r.Handle("GET /.well-known/openid-configuration", http.HandlerFunc(s.discovery))
	r.Handle("GET /.well-known/oauth-authorization-server", http.HandlerFunc(s.discovery))
}
