package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/identity"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// StaffRequired: the method is for platform staff only (CONTRACT §3, 2069005).
func StaffRequired() *apierr.Error {
	return &apierr.Error{HTTPStatus: http.StatusForbidden, Code: 200, Subcode: 2069005, Type: apierr.TypeOAuth,
		Message: "Only platform staff can make this call, signed in with a session."}
}

// AdminTokenRequired: the method takes the operator's admin token only. It
// is a kind of credential the method does not accept, hence 2069006.
func AdminTokenRequired() *apierr.Error {
	return &apierr.Error{HTTPStatus: http.StatusForbidden, Code: 200, Subcode: 2069006, Type: apierr.TypeOAuth,
		Message: "This call requires the operator's admin token."}
}

// FirstPartyOnly: the call is first-party (creating apps, changing an
// app's team, keys, review or mode; mobile endpoints): only the user's own
// session may make it, never a credential an app holds. CONTRACT §4 counts
// it as the wrong kind of credential, 2069001.
func FirstPartyOnly() *apierr.Error {
	return &apierr.Error{HTTPStatus: http.StatusForbidden, Code: 200, Subcode: 2069001, Type: apierr.TypeOAuth,
		Message: "Only the user's own signed-in session can make this call; app keys and access tokens cannot."}
}

// NotOnTeam: the caller's standing on the app does not allow the call
// (CONTRACT §3 and §4, 2069004): another app's key or token, a user token
// issued to another app, or a team role below the one needed.
func NotOnTeam(why string) *apierr.Error {
	return &apierr.Error{HTTPStatus: http.StatusForbidden, Code: 200, Subcode: 2069004, Type: apierr.TypeOAuth,
		Message: why}
}

// Target names what a call acts on, read from its request: the Page of the
// method's page_field and the app of its app_field ("" when absent).
type Target struct {
	PageID     string
	AppID      string
	BusinessID string
}

// TargetOf reads the ids the access rule refers to from the request.
func TargetOf(req proto.Message, access *pluginv1.Access) Target {
	var t Target
	if access.GetPageRole() != pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED || access.GetProduct() != "" {
		t.PageID = stringField(req, access.GetPageField(), "page_id")
	}
	if access.GetAppRole() != pluginv1.AppRole_APP_ROLE_UNSPECIFIED {
		t.AppID = stringField(req, access.GetAppField(), "app_id")
	}
	if access.GetBusinessRole() != pluginv1.BusinessRole_BUSINESS_ROLE_UNSPECIFIED {
		t.BusinessID = stringField(req, access.GetBusinessField(), "business_id")
	}
	return t
}

// stringField reads the string field name (or fallback when name is "") of
// msg; "" when there is no such singular string field.
func stringField(req proto.Message, name, fallback string) string {
	if name == "" {
		name = fallback
	}
	msg := req.ProtoReflect()
	fd := msg.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() {
		return ""
	}
	return msg.Get(fd).String()
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

// Admit is the first step of every call (CONTRACT §15, authentication
// comes first): a method that is not public refuses a caller without a
// valid credential, 104 with none and the credential's own refusal (190)
// for a bad one, before anything of the request is read. A nil access
// stands for a method not known yet, hence not public.
func Admit(ctx context.Context, access *pluginv1.Access) error {
	if access.GetPublic() {
		return nil
	}
	p, err := Caller(ctx)
	if err != nil {
		return err
	}
	if p == nil {
		return apierr.NoToken()
	}
	return nil
}

// Authorize enforces a method's Access option for principal p (nil when
// anonymous) on the target the request names. It returns nil or exactly
// one CONTRACT §3 error, checked in this order: credential present (104),
// kind accepted (2069001, and our 2069006), staff (2069005), scopes, all
// of scopes and one of any_scopes (2069002), standing on the app (2069004), role on
// the business (2069003), Page role (2069003, or 2018303
// for an app alone) and product on the Page link (2018303). Rules that need
// a product's own data (session window, opt-in, Page published) are the
// plugin's.
func (a *Authenticator) Authorize(ctx context.Context, p *Principal, access *pluginv1.Access, target Target) error {
	_, err := a.AuthorizeFacts(ctx, p, access, target)
	return err
}

// ForgetPage drops what this gateway remembers of a Page's facts (settings,
// roles, links), after a change made through it: the next call on the Page
// reads them afresh, here and in the plugin it reaches. Other gateways see
// the change within the cache's bound (DefaultCacheTTL).
func (a *Authenticator) ForgetPage(pageID string) {
	a.facts.forget(func(k factsKey, _ cachedFacts) bool { return k.page == pageID })
}

// AuthorizeFacts is Authorize that also returns, when the rule names a Page
// and the call passes, the facts of that Page for p which the check read, in
// the form the gateway hands them to the plugin with the call (nil
// otherwise). The message is shared with other calls: never modify it.
func (a *Authenticator) AuthorizeFacts(ctx context.Context, p *Principal, access *pluginv1.Access, target Target) (*pluginv1.PageAccessResponse, error) {
	if access.GetPublic() {
		return nil, nil
	}
	if p == nil {
		return nil, apierr.NoToken()
	}
	kinds := access.GetTokenKinds()
	if len(kinds) == 0 {
		kinds = defaultKinds
		if access.GetStaff() {
			kinds = []pluginv1.TokenKind{pluginv1.TokenKind_TOKEN_KIND_SESSION}
		}
	}
	if !slices.Contains(kinds, p.Kind) {
		return nil, kindRefusal(kinds, p.Kind)
	}
	if p.Kind == pluginv1.TokenKind_TOKEN_KIND_ADMIN {
		return nil, nil // the operator, where a method lists ADMIN, may do anything it allows
	}
	if access.GetStaff() && !p.Staff {
		return nil, StaffRequired()
	}
	// Sessions are first-party, and a plugin acting as itself is the
	// platform's own: scopes do not apply to them.
	if p.Kind != pluginv1.TokenKind_TOKEN_KIND_SESSION && p.Kind != pluginv1.TokenKind_TOKEN_KIND_PLUGIN {
		if p.Suspended(a.now()) && !profileOnly(p, access) {
			return nil, CheckupOverdue(p.AppID)
		}
		for _, s := range access.GetScopes() {
			if !p.HasScope(s) {
				return nil, apierr.MissingScope(s)
			}
		}
		if anyOf := access.GetAnyScopes(); len(anyOf) > 0 && !slices.ContainsFunc(anyOf, p.HasScope) {
			return nil, apierr.MissingAnyScope(anyOf)
		}
	}
	if least := access.GetAppRole(); least != pluginv1.AppRole_APP_ROLE_UNSPECIFIED {
		if target.AppID == "" {
			field := access.GetAppField()
			if field == "" {
				field = "app_id"
			}
			return nil, apierr.Invalid(field, "The parameter %s is required.", field)
		}
		if err := a.AuthorizeApp(ctx, p, least, target.AppID); err != nil {
			return nil, err
		}
	}
	if least := access.GetBusinessRole(); least != pluginv1.BusinessRole_BUSINESS_ROLE_UNSPECIFIED {
		if target.BusinessID == "" {
			field := access.GetBusinessField()
			if field == "" {
				field = "business_id"
			}
			return nil, apierr.Invalid(field, "The parameter %s is required.", field)
		}
		if err := a.AuthorizeBusiness(ctx, p, least, target.BusinessID); err != nil {
			return nil, err
		}
	}
	role, product := access.GetPageRole(), access.GetProduct()
	if role == pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED && product == "" {
		return nil, nil
	}
	pageID := target.PageID
	if pageID == "" {
		field := access.GetPageField()
		if field == "" {
			field = "page_id"
		}
		return nil, apierr.Invalid(field, "The parameter %s is required.", field)
	}
	return a.authorizePage(ctx, p, role, product, pageID)
}

// CheckupOverdue: the app's data use checkup is overdue, so its tokens
// and key keep only public_profile (CONTRACT §17): a missing scope, 2069002.
func CheckupOverdue(appID string) *apierr.Error {
	e := apierr.MissingScope(identity.ScopePublicProfile)
	e.Message = "The app's data use checkup is overdue: until a team Admin certifies it (app/" + appID +
		"/data_use_checkup), the app's tokens and key keep only public_profile."
	return e
}

// profileOnly reports whether a suspended credential may make a call of
// access: what public_profile alone reaches, the person's own profile. So
// the call is a user token's, of a method only people's credentials may
// make (its token kinds list neither app keys nor system users: me, not
// chat completions), naming no Page, product or app standing, and needing
// no scope but public_profile. An app key or system user token holds no
// person's profile and makes no call while suspended.
func profileOnly(p *Principal, access *pluginv1.Access) bool {
	if p.Kind != pluginv1.TokenKind_TOKEN_KIND_USER {
		return false
	}
	kinds := access.GetTokenKinds()
	if len(kinds) == 0 || slices.Contains(kinds, pluginv1.TokenKind_TOKEN_KIND_APP_KEY) ||
		slices.Contains(kinds, pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER) {
		return false
	}
	if access.GetPageRole() != pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED || access.GetProduct() != "" ||
		access.GetAppRole() != pluginv1.AppRole_APP_ROLE_UNSPECIFIED {
		return false
	}
	for _, s := range access.GetScopes() {
		if s != identity.ScopePublicProfile {
			return false
		}
	}
	anyOf := access.GetAnyScopes()
	return len(anyOf) == 0 || slices.Contains(anyOf, identity.ScopePublicProfile)
}

func kindRefusal(accepted []pluginv1.TokenKind, got pluginv1.TokenKind) error {
	if got == pluginv1.TokenKind_TOKEN_KIND_ADMIN {
		return KindNotAccepted()
	}
	if len(accepted) == 1 && accepted[0] == pluginv1.TokenKind_TOKEN_KIND_ADMIN {
		return AdminTokenRequired()
	}
	// A first-party call says so, whatever credential an app holds.
	if slices.Equal(accepted, []pluginv1.TokenKind{pluginv1.TokenKind_TOKEN_KIND_SESSION}) && got != pluginv1.TokenKind_TOKEN_KIND_SESSION {
		return FirstPartyOnly()
	}
	userish := slices.Contains(accepted, pluginv1.TokenKind_TOKEN_KIND_USER) ||
		slices.Contains(accepted, pluginv1.TokenKind_TOKEN_KIND_SESSION)
	if userish && (got == pluginv1.TokenKind_TOKEN_KIND_APP_KEY || got == pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER) {
		return apierr.UserTokenRequired()
	}
	return KindNotAccepted()
}

// AuthorizePage is the Page role rule alone, for a question that does not
// come with a method's access rule: a plugin's host query naming the least
// role its action needs (Host.PageAccess with need), e.g. svcchat's reply
// and hand-over, which name a conversation and not its Page. It decides as
// for a method declaring page_role least (authorizePage, no product), and
// returns the facts of the Page for p, shared (never modify them), or the
// refusal.
func (a *Authenticator) AuthorizePage(ctx context.Context, p *Principal, least pluginv1.PageRole, pageID string) (*pluginv1.PageAccessResponse, error) {
	if _, known := pluginv1.PageRole_name[int32(least)]; !known || least == pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED {
		return nil, fmt.Errorf("auth: %d is no least Page role", least)
	}
	if p == nil {
		return nil, apierr.NoToken()
	}
	return a.authorizePage(ctx, p, least, "", pageID)
}

// noPageRole: the user has no role on the Page.
func noPageRole() error {
	return apierr.PageRoleTooLow("The user must have a role on the Page (owner, admin or editor).")
}

// authorizePage checks the caller's role on the Page and the product on the
// app's link, with one query. It is the one place that says what each Page
// role may do (docs/design/auth.md, "Page roles"): a method declares the
// least role it needs, and
//
//   - LINKED passes anyone with a role on the Page (owner, admin, editor)
//     and an app linked to it;
//   - EDITOR passes anyone with a role on the Page;
//   - ADMIN passes owners and admins;
//   - OWNER passes owners.
//
// A user access token acts only on the Pages the person chose for its app
// (granular consent, CONTRACT §17): any other Page, whatever the role, is
// refused first, 2069007, without reading its facts.
func (a *Authenticator) authorizePage(ctx context.Context, p *Principal, role pluginv1.PageRole, product, pageID string) (*pluginv1.PageAccessResponse, error) {
	if !p.Pages.Allows(pageID) {
		return nil, apierr.PageNotChosen()
	}
	key := factsKey{page: pageID, user: p.UserID, app: p.AppID}
	now := a.now()
	entry, ok := a.facts.get(key, now)
	if !ok {
		var err error
		entry, err = a.facts.fill(ctx, key, now, func() (cachedFacts, time.Time, error) {
			f, err := a.ids.Pages.PageFacts(ctx, pageID, p.UserID, p.AppID)
			if err != nil {
				return cachedFacts{}, time.Time{}, apierr.Internal(err)
			}
			return factsOf(pageID, f), time.Time{}, nil
		})
		if err != nil {
			return nil, err
		}
	}
	facts := entry.f
	if !facts.Exists {
		return nil, apierr.NotFound("Page " + pageID)
	}
	hasUser, hasApp := p.UserID != "", p.AppID != ""
	member := hasUser && facts.UserHasRole()
	switch role {
	case pluginv1.PageRole_PAGE_ROLE_LINKED:
		if !member && !(hasApp && facts.AppLinked) {
			if hasApp {
				return nil, apierr.NotLinked(product)
			}
			return nil, noPageRole()
		}
	case pluginv1.PageRole_PAGE_ROLE_EDITOR:
		if !hasUser {
			return nil, apierr.UserTokenRequired()
		}
		if !member {
			return nil, noPageRole()
		}
	case pluginv1.PageRole_PAGE_ROLE_ADMIN:
		if !hasUser {
			return nil, apierr.UserTokenRequired()
		}
		if !facts.UserManages() {
			return nil, apierr.NotPageAdmin()
		}
	case pluginv1.PageRole_PAGE_ROLE_OWNER:
		if !hasUser {
			return nil, apierr.UserTokenRequired()
		}
		if facts.UserRole != pluginv1.PageRole_PAGE_ROLE_OWNER {
			return nil, apierr.PageRoleTooLow("The user must be an owner of the Page.")
		}
	}
	// The product must be enabled on the app's link to the Page; the token
	// of one of the Page's people (an editor too: they reply in its threads)
	// through the app needs the product enabled on the app only ("or the
	// caller uses the Page owner's token", interface §1.7). A first-party
	// session has no app and is not product-gated.
	if product != "" && hasApp {
		ok := slices.Contains(facts.LinkProducts, product) ||
			(member && slices.Contains(facts.AppProducts, product))
		if !ok {
			return nil, apierr.NotLinked(product)
		}
	}
	return entry.wire, nil
}

// AuthorizeApp applies "who may manage an app" (CONTRACT §4): the app's own
// key or client_credentials token stands for the app and may do anything an
// app node allows, on that app only; a user token counts only for the app it
// was issued to, and then as far as the user's team role goes; a first-party
// session counts the user's team role. So an app holding some user's token
// can never reach that user's other apps.
func (a *Authenticator) AuthorizeApp(ctx context.Context, p *Principal, least pluginv1.AppRole, appID string) error {
	if p == nil {
		return apierr.NoToken()
	}
	// Managing an app is no call of public_profile's: a suspended app's
	// credential makes none (the webhook stream, a delivery's replay).
	if p.Suspended(a.now()) {
		return CheckupOverdue(p.AppID)
	}
	switch p.Kind {
	case pluginv1.TokenKind_TOKEN_KIND_APP_KEY, pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER:
		if p.AppID != appID {
			return a.appRefusal(ctx, appID, "An app's key or token acts only on that app.")
		}
		return nil
	case pluginv1.TokenKind_TOKEN_KIND_USER:
		if p.AppID != appID {
			return a.appRefusal(ctx, appID, "A user access token acts only on the app it was issued to.")
		}
	case pluginv1.TokenKind_TOKEN_KIND_SESSION:
	default:
		return KindNotAccepted()
	}
	if least == pluginv1.AppRole_APP_ROLE_GRANTEE {
		// A grant the user makes to the app needs no team role; the app
		// must still exist.
		return a.appExists(ctx, appID)
	}
	role, err := a.ids.Apps.TeamRole(ctx, appID, p.UserID)
	if err != nil {
		return apierr.Internal(err)
	}
	if teamRank(role) >= int(least) {
		return nil
	}
	return a.appRefusal(ctx, appID, "Your role on the app's team does not allow this call.")
}

// appRefusal answers 2069004 for an app that exists, and "does not exist"
// for one that does not, so that ids of unknown apps read the same as
// elsewhere (CONTRACT §1).
func (a *Authenticator) appRefusal(ctx context.Context, appID, why string) error {
	if err := a.appExists(ctx, appID); err != nil {
		return err
	}
	return NotOnTeam(why)
}

// appExists is nil for an app that exists, and "does not exist" (or an
// internal error) otherwise.
func (a *Authenticator) appExists(ctx context.Context, appID string) error {
	if _, err := a.ids.Apps.App(ctx, appID); errors.Is(err, identity.ErrNotFound) {
		return apierr.NotFound("App " + appID)
	} else if err != nil {
		return apierr.Internal(err)
	}
	return nil
}

// teamRank orders team roles as the AppRole enum does: tester (member) 1,
// developer 2, admin 3; no role 0.
func teamRank(r identity.TeamRole) int {
	switch r {
	case identity.TeamAdmin:
		return int(pluginv1.AppRole_APP_ROLE_ADMIN)
	case identity.TeamDeveloper:
		return int(pluginv1.AppRole_APP_ROLE_DEVELOPER)
	case identity.TeamTester:
		return int(pluginv1.AppRole_APP_ROLE_MEMBER)
	}
	return 0
}

// NotBusinessMember: the caller's user has no role on the business, or not
// the one the call needs. CONTRACT §3 has one refusal for "the user's role
// on the object does not allow it", the Page's: 403, code 200, 2069003.
func NotBusinessMember(why string) *apierr.Error {
	return apierr.PageRoleTooLow(why)
}

// AuthorizeBusiness applies "who may act on a business" (CONTRACT §17):
// only a person, with a role on it; EMPLOYEE passes admins and employees,
// ADMIN admins only. A business that does not exist is 404, as elsewhere.
// An app key or system user token acts for no person and is refused
// (2069001).
func (a *Authenticator) AuthorizeBusiness(ctx context.Context, p *Principal, least pluginv1.BusinessRole, businessID string) error {
	if p == nil {
		return apierr.NoToken()
	}
	if p.UserID == "" {
		return apierr.UserTokenRequired()
	}
	role, err := a.ids.Businesses.Role(ctx, businessID, p.UserID)
	if errors.Is(err, identity.ErrNotFound) {
		return apierr.NotFound("Business " + businessID)
	}
	if err != nil {
		return apierr.Internal(err)
	}
	switch {
	case role == identity.BusinessAdmin:
		return nil
	case role == identity.BusinessEmployee && least == pluginv1.BusinessRole_BUSINESS_ROLE_EMPLOYEE:
		return nil
	case role == identity.BusinessEmployee:
		return NotBusinessMember("The user must be an admin of the business.")
	}
	return NotBusinessMember("The user must have a role on the business (admin or employee).")
}
