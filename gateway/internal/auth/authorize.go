package auth

import (
	"context"
	"net/http"
	"slices"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// StaffRequired: the method is for platform staff only.
func StaffRequired() *apierr.Error {
	return &apierr.Error{HTTPStatus: http.StatusForbidden, Code: 200, Subcode: 2069004, Type: apierr.TypeOAuth,
		Message: "Only platform staff can make this call, signed in with a session."}
}

// AdminTokenRequired: the method takes the operator's admin token only.
func AdminTokenRequired() *apierr.Error {
	return &apierr.Error{HTTPStatus: http.StatusForbidden, Code: 200, Subcode: 2069005, Type: apierr.TypeOAuth,
		Message: "This call requires the operator's admin token."}
}

// KindNotAccepted: the method does not accept this kind of credential.
func KindNotAccepted() *apierr.Error {
	return &apierr.Error{HTTPStatus: http.StatusForbidden, Code: 200, Subcode: 2069006, Type: apierr.TypeOAuth,
		Message: "This kind of credential cannot make this call."}
}

// defaultKinds are accepted when a method lists none: every kind but ADMIN.
var defaultKinds = []pluginv1.TokenKind{
	pluginv1.TokenKind_TOKEN_KIND_USER, pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER,
	pluginv1.TokenKind_TOKEN_KIND_APP_KEY, pluginv1.TokenKind_TOKEN_KIND_SESSION,
}

// Authorize enforces a method's Access option for principal p (nil when
// anonymous) on the Page pageID (the value of access.page_field in the
// request; "" when the method names no Page). It returns nil or exactly one
// CONTRACT §3 error, checked in this order: credential present (104), kind
// accepted (2069001 and our 2069005/2069006), staff (2069004), scopes
// (2069002), Page role (2069003, or 2018303 for an app alone) and product
// on the Page link (2018303). Rules that need a product's own data (session
// window, opt-in, Page published) are the plugin's.
func (a *Authenticator) Authorize(ctx context.Context, p *Principal, access *pluginv1.Access, pageID string) error {
	if access.GetPublic() {
		return nil
	}
	if p == nil {
		return apierr.NoToken()
	}
	kinds := access.GetTokenKinds()
	if len(kinds) == 0 {
		kinds = defaultKinds
		if access.GetStaff() {
			kinds = []pluginv1.TokenKind{pluginv1.TokenKind_TOKEN_KIND_SESSION}
		}
	}
	if !slices.Contains(kinds, p.Kind) {
		return kindRefusal(kinds, p.Kind)
	}
	if p.Kind == pluginv1.TokenKind_TOKEN_KIND_ADMIN {
		return nil // the operator, where a method lists ADMIN, may do anything it allows
	}
	if access.GetStaff() && !p.Staff {
		return StaffRequired()
	}
	// Sessions are first-party: scopes do not apply to them.
	if p.Kind != pluginv1.TokenKind_TOKEN_KIND_SESSION {
		for _, s := range access.GetScopes() {
			if !p.HasScope(s) {
				return apierr.MissingScope(s)
			}
		}
	}
	role, product := access.GetPageRole(), access.GetProduct()
	if role == pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED && product == "" {
		return nil
	}
	if pageID == "" {
		field := access.GetPageField()
		if field == "" {
			field = "page_id"
		}
		return apierr.Invalid(field, "The parameter %s is required.", field)
	}
	return a.authorizePage(ctx, p, role, product, pageID)
}

func kindRefusal(accepted []pluginv1.TokenKind, got pluginv1.TokenKind) error {
	if got == pluginv1.TokenKind_TOKEN_KIND_ADMIN {
		return KindNotAccepted()
	}
	if len(accepted) == 1 && accepted[0] == pluginv1.TokenKind_TOKEN_KIND_ADMIN {
		return AdminTokenRequired()
	}
	userish := slices.Contains(accepted, pluginv1.TokenKind_TOKEN_KIND_USER) ||
		slices.Contains(accepted, pluginv1.TokenKind_TOKEN_KIND_SESSION)
	if userish && (got == pluginv1.TokenKind_TOKEN_KIND_APP_KEY || got == pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER) {
		return apierr.UserTokenRequired()
	}
	return KindNotAccepted()
}

// authorizePage checks the caller's role on the Page and the product on the
// app's link, with one query.
func (a *Authenticator) authorizePage(ctx context.Context, p *Principal, role pluginv1.PageRole, product, pageID string) error {
	key := factsKey{page: pageID, user: p.UserID, app: p.AppID}
	now := a.now()
	facts, ok := a.facts.get(key, now)
	if !ok {
		var err error
		if facts, err = a.ids.PageFacts(ctx, pageID, p.UserID, p.AppID); err != nil {
			return apierr.Internal(err)
		}
		a.facts.put(key, facts, now)
	}
	if !facts.Exists {
		return apierr.NotFound("Page " + pageID)
	}
	hasUser, hasApp := p.UserID != "", p.AppID != ""
	manages := hasUser && facts.UserManages()
	switch role {
	case pluginv1.PageRole_PAGE_ROLE_LINKED:
		if !manages && !(hasApp && facts.AppLinked) {
			if hasApp {
				return apierr.NotLinked(product)
			}
			return apierr.NotPageAdmin()
		}
	case pluginv1.PageRole_PAGE_ROLE_ADMIN:
		if !hasUser {
			return apierr.UserTokenRequired()
		}
		if !manages {
			return apierr.NotPageAdmin()
		}
	case pluginv1.PageRole_PAGE_ROLE_OWNER:
		if !hasUser {
			return apierr.UserTokenRequired()
		}
		if facts.UserRole != pluginv1.PageRole_PAGE_ROLE_OWNER {
			return apierr.NotPageAdmin()
		}
	}
	// The product must be enabled on the app's link to the Page; a Page
	// manager's own token through the app needs the product enabled on the
	// app only ("or the caller uses the Page owner's token", interface §1.7).
	// A first-party session has no app and is not product-gated.
	if product != "" && hasApp {
		ok := slices.Contains(facts.LinkProducts, product) ||
			(manages && slices.Contains(facts.AppProducts, product))
		if !ok {
			return apierr.NotLinked(product)
		}
	}
	return nil
}
