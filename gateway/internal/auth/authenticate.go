package auth

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// SessionCookie is the name of the console and login-page session cookie.
const SessionCookie = "svc_session"

// DefaultCacheTTL bounds how long a revocation made on another gateway may
// go unnoticed here.
const DefaultCacheTTL = 2 * time.Second

// Options configure an Authenticator.
type Options struct {
	// CacheTTL is how long an authenticated credential is remembered;
	// 0 means DefaultCacheTTL, negative disables the cache.
	CacheTTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Authenticator resolves credentials and enforces access rules.
type Authenticator struct {
	ids   *identity.Service
	q     *coredb.Queries
	cache *credentialCache
	facts *factsCache
	now   func() time.Time
}

// New returns an Authenticator over the identity store.
func New(ids *identity.Service, opts Options) *Authenticator {
	if opts.CacheTTL == 0 {
		opts.CacheTTL = DefaultCacheTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Authenticator{ids: ids, q: ids.Queries(), cache: newCredentialCache(opts.CacheTTL),
		facts: newFactsCache(opts.CacheTTL), now: opts.Now}
}

// Authenticate resolves the request's credential: the Authorization header's
// bearer token, else the session cookie. It returns nil, nil when the
// request carries no credential, and an *apierr.Error for a bad one:
// 190/467 unknown, malformed or revoked, 190/463 expired; and 2069008 for a
// cookie request that changes something without the session's CSRF token
// or from another origin (CSRFHeader).
func (a *Authenticator) Authenticate(ctx context.Context, r *http.Request) (*Principal, error) {
	if token, present := BearerToken(r); present {
		if token == "" {
			return nil, apierr.InvalidToken()
		}
		return a.AuthenticateToken(ctx, token)
	}
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
		p, err := a.AuthenticateToken(ctx, c.Value)
		if err != nil {
			return nil, err
		}
		// The cookie carries sessions only: a token pasted into it is refused.
		if p.Kind != pluginv1.TokenKind_TOKEN_KIND_SESSION {
			return nil, apierr.InvalidToken()
		}
		// A browser sends the cookie whoever made the page: a request that
		// changes something must prove it comes from our own pages.
		if err := checkCookieRequest(r, c.Value); err != nil {
			return nil, err
		}
		return p, nil
	}
	return nil, nil
}

// BearerToken is the one reading of a request's Authorization header: the
// token of "Bearer <token>" (the scheme in any case, RFC 6750 §2.1), and
// whether the header is there at all. A header that is there but is not a
// bearer token answers "", true.
func BearerToken(r *http.Request) (token string, present bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	return strings.TrimSpace(token), true
}

// AccessToken resolves a Graph request's access_token parameter (the query's
// or a form body's, Meta's habit, CONTRACT §20), which stands in for the
// Authorization header: ahead of the session cookie, as the header is. It
// returns ctx carrying the token's principal, or its refusal for whatever
// needs a principal, as the middleware does for the header. With the header
// there too the two must name the same token (then the header's principal,
// already resolved, stands); different ones are refused at once, 400 with
// code 100 naming access_token, as Meta does: which of the two would be
// the caller is not guessed.
func (a *Authenticator) AccessToken(ctx context.Context, r *http.Request, token string) (context.Context, error) {
	if header, present := BearerToken(r); present {
		if header != token {
			return ctx, apierr.Invalid("access_token", "Invalid parameter: access_token and the Authorization header carry different tokens; send one.")
		}
		return ctx, nil
	}
	var p *Principal
	var err error = apierr.InvalidToken()
	if token != "" {
		p, err = a.AuthenticateToken(ctx, token)
	}
	// A cookie's principal, or its refusal (a missing CSRF token), is
	// replaced: the parameter is the request's credential.
	return WithError(WithPrincipal(ctx, p), err), nil
}

// AuthenticateToken resolves one bearer token.
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*Principal, error) {
	if len(token) > 512 {
		return nil, apierr.InvalidToken()
	}
	sum := identity.TokenHash(token)
	now := a.now()
	if p, ok := a.cache.get(sum, now); ok {
		return p, nil
	}
	return a.authenticateMiss(ctx, sum, now)
}

// authenticateMiss is AuthenticateToken's path past the cache (apart, so
// that the hash escapes to the heap only there).
func (a *Authenticator) authenticateMiss(ctx context.Context, sum [32]byte, now time.Time) (*Principal, error) {
	return a.cache.fill(ctx, sum, now, func() (*Principal, time.Time, error) {
		p, err := a.lookupCredential(ctx, sum[:], now)
		if err != nil {
			return nil, time.Time{}, err
		}
		return p, p.ExpiresAt, nil
	})
}

// lookupCredential reads the credential whose hash is given: its principal,
// or why it is refused.
func (a *Authenticator) lookupCredential(ctx context.Context, hash []byte, now time.Time) (*Principal, error) {
	row, err := a.q.LookupCredential(ctx, hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, apierr.InvalidToken()
	}
	if err != nil {
		return nil, apierr.Internal(err)
	}
	if row.RevokedAt.Valid {
		return nil, apierr.InvalidToken()
	}
	p := Principal{Kind: pluginv1.TokenKind(row.Kind), Scopes: row.Scopes, Live: row.AppMode == string(identity.ModeLive),
		Staff: row.IsStaff}
	if row.ExpiresAt.Valid {
		p.ExpiresAt = row.ExpiresAt.Time
		if !now.Before(p.ExpiresAt) {
			return nil, apierr.ExpiredToken()
		}
	}
	if row.UserID != nil {
		p.UserID = identity.FormatID(*row.UserID)
	}
	if row.AppID != nil {
		p.AppID = identity.FormatID(*row.AppID)
	}
	if p.Scopes == nil {
		p.Scopes = []string{}
	}
	if row.CheckupDueAt.Valid {
		p.CheckupDue = row.CheckupDueAt.Time
	}
	if row.PagesChosen && p.Kind == pluginv1.TokenKind_TOKEN_KIND_USER {
		ids := make([]string, len(row.PageIds))
		for i, id := range row.PageIds {
			ids[i] = identity.FormatID(id)
		}
		p.Pages = &PageChoice{IDs: ids}
	}
	p.wire = p.newProto()
	return &p, nil
}

// Forget drops credentials from the cache by hash, after they were revoked.
func (a *Authenticator) Forget(hashes ...[]byte) {
	a.cache.forget(func(k [32]byte, _ *Principal) bool {
		for _, h := range hashes {
			if string(h) == string(k[:]) {
				return true
			}
		}
		return false
	})
}

// ForgetUser drops every cached credential of the user and the Page facts
// asked for them, so that a change to what the user's principal carries
// (platform staff, the Pages chosen for an app) is seen by the next request
// on this gateway, also where a plugin asks about a Page for the user and an
// app; other gateways see it within CacheTTL.
func (a *Authenticator) ForgetUser(userID string) {
	a.cache.forget(func(_ [32]byte, p *Principal) bool { return p.UserID == userID })
	// Their Pages as one of their apps sees them follow the Pages they
	// chose for it.
	a.facts.forget(func(k factsKey, _ cachedFacts) bool { return k.user == userID })
}

// ForgetApp drops every cached credential of the app, so that a change to
// what its principals carry (its data use checkup certified or moved) is
// seen by the next request on this gateway; other gateways see it within
// CacheTTL.
func (a *Authenticator) ForgetApp(appID string) {
	a.cache.forget(func(_ [32]byte, p *Principal) bool { return p.AppID == appID })
}

// Revoke revokes a bearer credential given in plain (a session at sign-out,
// an app key) and forgets it at once. It reports whether there was one.
func (a *Authenticator) Revoke(ctx context.Context, token string) (bool, error) {
	ok, err := a.ids.Sessions.RevokeCredential(ctx, token)
	a.Forget(identity.HashToken(token))
	return ok, err
}

// Middleware authenticates every request and puts its principal (nil when
// anonymous) in the context; a bad credential is refused with its error.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.Authenticate(r.Context(), r)
		if err != nil {
			apierr.Write(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}
