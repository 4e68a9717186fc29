package auth

import (
	"context"
	"slices"
	"time"

	"github.com/svcplatform/svc/gateway/internal/identity"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Principal is the caller of one request, resolved from its credential.
// Treat it as read-only: it may be shared between requests.
type Principal struct {
	// Kind is the kind of credential presented.
	Kind pluginv1.TokenKind
	// UserID is the user acting (user tokens, sessions); "" for apps alone.
	UserID string
	// AppID is the app acting (user tokens, system user tokens, app keys).
	AppID string
	// Scopes granted to the credential (user and system user tokens).
	Scopes []string
	// Live: the app is in live mode.
	Live bool
	// Staff: the user is platform staff.
	Staff bool
	// Plugin names the plugin acting as itself (Kind TOKEN_KIND_PLUGIN).
	Plugin string
	// ExpiresAt is when the credential expires; zero if it does not.
	ExpiresAt time.Time
	// CheckupDue is when the app's data use checkup is due; zero when it
	// has none. Past it a live app's credential is suspended (Suspended).
	CheckupDue time.Time
	// Pages are the Pages the person chose for the app on the consent page
	// (granular consent, CONTRACT §17), read from the consent with the
	// token; nil when no choice was made (every Page the user holds a role
	// on). Only user access tokens carry one.
	Pages *PageChoice
	// wire is the principal in its wire form, made once when an
	// authenticated credential is cached, so that each call of its
	// requests does not build it again; nil for principals made otherwise.
	wire *pluginv1.Principal
}

// Suspended reports whether, at now, the credential belongs to a live app
// whose data use checkup is overdue (CONTRACT §17): it then keeps only
// public_profile until a team Admin certifies. Sessions and the admin
// token belong to no app and are never suspended.
func (p *Principal) Suspended(now time.Time) bool {
	return p.Live && p.AppID != "" && identity.CheckupOverdueAt(p.CheckupDue, now)
}

// HasScope reports whether the credential carries scope.
func (p *Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

// PageChoice is the Pages a person chose for an app: the app's tokens of
// that person act on these Pages only.
type PageChoice struct {
	IDs []string
}

// Allows reports whether the choice includes pageID; a nil choice (none
// made) allows every Page.
func (c *PageChoice) Allows(pageID string) bool { return c == nil || slices.Contains(c.IDs, pageID) }

func (c *PageChoice) proto() *pluginv1.PageChoice {
	if c == nil {
		return nil
	}
	return &pluginv1.PageChoice{PageIds: slices.Clone(c.IDs)}
}

func pageChoiceOf(w *pluginv1.PageChoice) *PageChoice {
	if w == nil {
		return nil
	}
	return &PageChoice{IDs: slices.Clone(w.GetPageIds())}
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

type authErrKey struct{}

// WithError returns ctx carrying the refusal of a credential that failed to
// authenticate, so that it is answered, in the caller's protocol, by
// whatever needs a principal; public endpoints ignore it.
func WithError(ctx context.Context, err error) context.Context {
	return context.WithValue(ctx, authErrKey{}, err)
}

// Caller returns the request's principal (nil for an anonymous one), or the
// refusal of the credential it presented (190/467, 190/463).
func Caller(ctx context.Context) (*Principal, error) {
	if err, ok := ctx.Value(authErrKey{}).(error); ok {
		return nil, err
	}
	return FromContext(ctx), nil
}

// FromContext returns the request's principal, or nil for an anonymous one.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// FromProto is the principal of the plugin protocol's wire form (an
// InvokeRequest's, e.g. a plugin's Host call as the host resolved it); nil
// for an anonymous caller.
func FromProto(p *pluginv1.Principal) *Principal {
	if p.GetTokenKind() == pluginv1.TokenKind_TOKEN_KIND_UNSPECIFIED {
		return nil
	}
	return &Principal{Kind: p.GetTokenKind(), UserID: p.GetUserId(), AppID: p.GetAppId(), Scopes: slices.Clone(p.GetScopes()),
		Live: p.GetLive(), Staff: p.GetStaff(), Plugin: p.GetPlugin(), Pages: pageChoiceOf(p.GetPageChoice())}
}

// Proto is the principal as the plugin protocol carries it to a plugin
// (InvokeRequest.principal); nil stays nil for anonymous calls. The wire
// form of an authenticated credential is made once and shared by its
// requests' calls: treat it as read-only, like the Principal.
func (p *Principal) Proto() *pluginv1.Principal {
	if p == nil {
		return nil
	}
	if p.wire != nil {
		return p.wire
	}
	return p.newProto()
}

func (p *Principal) newProto() *pluginv1.Principal {
	return &pluginv1.Principal{TokenKind: p.Kind, UserId: p.UserID, AppId: p.AppID,
		Scopes: slices.Clone(p.Scopes), Live: p.Live, Staff: p.Staff, Plugin: p.Plugin, PageChoice: p.Pages.proto()}
}
