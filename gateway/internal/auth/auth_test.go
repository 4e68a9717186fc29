package auth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

func TestMain(m *testing.M) { identitytest.Main(m) }

type bundle struct {
	*identitytest.World
	authn *auth.Authenticator
}

func setup(t testing.TB) *bundle {
	w := identitytest.NewWorld(t)
	return &bundle{World: w, authn: auth.New(w.IDs, auth.Options{})}
}

// issue stores a credential of kind directly, as the OAuth server would.
func (b *bundle) issue(t testing.TB, kind pluginv1.TokenKind, userID, appID string, scopes []string, ttl time.Duration) string {
	t.Helper()
	plain, hash := identity.NewToken("test_")
	p := coredb.InsertCredentialParams{TokenHash: hash, Kind: int16(kind), Scopes: scopes}
	if scopes == nil {
		p.Scopes = []string{}
	}
	if id, ok := identity.ParseID(userID); ok {
		p.UserID = &id
	}
	if id, ok := identity.ParseID(appID); ok {
		p.AppID = &id
	}
	if ttl != 0 {
		p.ExpiresAt = pgtype.Timestamptz{Time: time.Now().Add(ttl), Valid: true}
	}
	if err := b.IDs.Queries().InsertCredential(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return plain
}

func bearerRequest(token string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/graph", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

// wantAPIError checks err is the *apierr.Error with these numbers.
func wantAPIError(t *testing.T, err error, status, code, subcode int) {
	t.Helper()
	e, ok := apierr.As(err)
	if !ok {
		t.Fatalf("err = %v, want an *apierr.Error %d/%d", err, code, subcode)
	}
	if e.HTTPStatus != status || e.Code != code || e.Subcode != subcode {
		t.Fatalf("error = HTTP %d code %d/%d (%s), want HTTP %d code %d/%d", e.HTTPStatus, e.Code, e.Subcode, e.Message,
			status, code, subcode)
	}
}

func TestAuthenticateResolvesEveryKindOfCredential(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	key, err := b.IDs.Apps.CreateAppKey(ctx, b.App.ID)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := b.IDs.Sessions.CreateSession(ctx, b.Staff.ID)
	if err != nil {
		t.Fatal(err)
	}
	admin, generated, err := auth.EnsureAdminToken(ctx, b.IDs.Queries(), "")
	if err != nil || !generated {
		t.Fatalf("EnsureAdminToken = %v, %v", generated, err)
	}
	userTok := b.issue(t, pluginv1.TokenKind_TOKEN_KIND_USER, b.Consumer.ID, b.App.ID, []string{"svcchat:read"}, time.Hour)
	sysTok := b.issue(t, pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER, "", b.App.ID, []string{"svcchat:send"}, time.Hour)

	for _, tc := range []struct {
		name  string
		token string
		want  auth.Principal
	}{
		{"user access token", userTok, auth.Principal{Kind: pluginv1.TokenKind_TOKEN_KIND_USER, UserID: b.Consumer.ID, AppID: b.App.ID, Scopes: []string{"svcchat:read"}}},
		{"system user token", sysTok, auth.Principal{Kind: pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER, AppID: b.App.ID, Scopes: []string{"svcchat:send"}}},
		{"app API key", key, auth.Principal{Kind: pluginv1.TokenKind_TOKEN_KIND_APP_KEY, AppID: b.App.ID, Scopes: []string{}}},
		{"session of a staff user", sess.Token, auth.Principal{Kind: pluginv1.TokenKind_TOKEN_KIND_SESSION, UserID: b.Staff.ID, Staff: true, Scopes: []string{}}},
		{"operator admin token", admin, auth.Principal{Kind: pluginv1.TokenKind_TOKEN_KIND_ADMIN, Scopes: []string{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := b.authn.Authenticate(ctx, bearerRequest(tc.token))
			if err != nil {
				t.Fatal(err)
			}
			got := *p
			got.ExpiresAt = time.Time{}
			if got.Kind != tc.want.Kind || got.UserID != tc.want.UserID || got.AppID != tc.want.AppID ||
				got.Staff != tc.want.Staff || got.Live || strings.Join(got.Scopes, " ") != strings.Join(tc.want.Scopes, " ") {
				t.Errorf("principal = %+v, want %+v", got, tc.want)
			}
		})
	}

	t.Run("the console session cookie", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: sess.Token})
		p, err := b.authn.Authenticate(ctx, r)
		if err != nil || p.Kind != pluginv1.TokenKind_TOKEN_KIND_SESSION || p.UserID != b.Staff.ID {
			t.Fatalf("principal = %+v, %v", p, err)
		}
	})
	t.Run("the cookie carries sessions only", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: userTok})
		_, err := b.authn.Authenticate(ctx, r)
		wantAPIError(t, err, 401, 190, 467)
	})
	t.Run("a live app's credentials say so", func(t *testing.T) {
		if _, err := b.IDs.Review.SubmitForReview(ctx, b.App.ID, []string{"public_profile"}, 90); err != nil {
			t.Fatal(err)
		}
		live, err := b.IDs.Review.GoLive(ctx, b.App.ID)
		if err != nil {
			t.Fatal(err)
		}
		fresh := auth.New(b.IDs, auth.Options{CacheTTL: -1})
		p, err := fresh.Authenticate(ctx, bearerRequest(live.APIKey))
		if err != nil || !p.Live {
			t.Fatalf("principal = %+v, %v", p, err)
		}
		// Development keys stop at going live.
		_, err = fresh.Authenticate(ctx, bearerRequest(key))
		wantAPIError(t, err, 401, 190, 467)
	})
}

func TestAuthenticateRefusesBadCredentials(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	expired := b.issue(t, pluginv1.TokenKind_TOKEN_KIND_USER, b.Consumer.ID, b.App.ID, nil, -time.Second)
	revoked := b.issue(t, pluginv1.TokenKind_TOKEN_KIND_USER, b.Consumer.ID, b.App.ID, nil, time.Hour)
	if _, err := b.authn.Authenticate(ctx, bearerRequest(revoked)); err != nil {
		t.Fatal(err) // now cached
	}
	if ok, err := b.authn.Revoke(ctx, revoked); !ok || err != nil {
		t.Fatalf("Revoke = %v, %v", ok, err)
	}
	for _, tc := range []struct {
		name          string
		header        string
		code, subcode int
	}{
		{"unknown token is 190/467", "Bearer nope", 190, 467},
		{"revoked token is 190/467 at once", "Bearer " + revoked, 190, 467},
		{"expired token is 190/463", "Bearer " + expired, 190, 463},
		{"empty bearer is 190/467", "Bearer ", 190, 467},
		{"another scheme is 190/467", "Basic dXNlcjpwYXNz", 190, 467},
		{"an oversized token is 190/467", "Bearer " + strings.Repeat("a", 600), 190, 467},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header.Set("Authorization", tc.header)
			p, err := b.authn.Authenticate(ctx, r)
			if p != nil {
				t.Errorf("principal = %+v", p)
			}
			wantAPIError(t, err, 401, tc.code, tc.subcode)
		})
	}
	t.Run("no credential is no principal and no error", func(t *testing.T) {
		p, err := b.authn.Authenticate(ctx, bearerRequest(""))
		if p != nil || err != nil {
			t.Errorf("Authenticate = %+v, %v", p, err)
		}
	})
}

func TestRevocationElsewhereIsSeenWithinTheCacheBound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	clock := time.Now()
	here := auth.New(b.IDs, auth.Options{Now: func() time.Time { return clock }})
	there := auth.New(b.IDs, auth.Options{}) // another gateway
	tok := b.issue(t, pluginv1.TokenKind_TOKEN_KIND_USER, b.Consumer.ID, b.App.ID, nil, time.Hour)
	if _, err := here.AuthenticateToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if _, err := there.Revoke(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if _, err := here.AuthenticateToken(ctx, tok); err != nil {
		t.Fatalf("within the cache bound the cached answer may stand: %v", err)
	}
	clock = clock.Add(auth.DefaultCacheTTL)
	_, err := here.AuthenticateToken(ctx, tok)
	wantAPIError(t, err, 401, 190, 467)
}

func TestAuthorizeEnforcesTheErrorTable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	otherApp, err := b.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: "Unlinked", Products: []string{"svcchat"}})
	if err != nil {
		t.Fatal(err)
	}
	noProductApp, err := b.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: "No product"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.IDs.Apps.LinkPage(ctx, noProductApp.ID, b.Page.ID, []string{"svcchat"}); err != nil {
		t.Fatal(err)
	}
	principal := func(tok string) *auth.Principal {
		p, err := b.authn.AuthenticateToken(ctx, tok)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	user := func(u identitytest.Person, app string, scopes ...string) *auth.Principal {
		return principal(b.issue(t, pluginv1.TokenKind_TOKEN_KIND_USER, u.ID, app, scopes, time.Hour))
	}
	system := func(app string, scopes ...string) *auth.Principal {
		return principal(b.issue(t, pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER, "", app, scopes, time.Hour))
	}
	key, _ := b.IDs.Apps.CreateAppKey(ctx, b.App.ID)
	appKey := principal(key)
	sess := func(u identitytest.Person) *auth.Principal {
		s, err := b.IDs.Sessions.CreateSession(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		return principal(s.Token)
	}
	adminPlain, _, _ := auth.EnsureAdminToken(ctx, b.IDs.Queries(), "")
	admin := principal(adminPlain)

	K := func(ks ...pluginv1.TokenKind) []pluginv1.TokenKind { return ks }
	USER, SESSION, ADMIN, APPKEY := pluginv1.TokenKind_TOKEN_KIND_USER, pluginv1.TokenKind_TOKEN_KIND_SESSION,
		pluginv1.TokenKind_TOKEN_KIND_ADMIN, pluginv1.TokenKind_TOKEN_KIND_APP_KEY
	LINKED, ADMINROLE, OWNER := pluginv1.PageRole_PAGE_ROLE_LINKED, pluginv1.PageRole_PAGE_ROLE_ADMIN, pluginv1.PageRole_PAGE_ROLE_OWNER
	// Access options as the plugins declare them.
	mePages := &pluginv1.Access{TokenKinds: K(USER, SESSION), AnyScopes: []string{"pages:read", "pages:manage"}}
	postWrite := &pluginv1.Access{TokenKinds: K(USER), Scopes: []string{"pages:manage"}, PageRole: ADMINROLE}
	send := &pluginv1.Access{Scopes: []string{"svcchat:send"}, PageRole: LINKED, Product: "svcchat"}
	handoverMobile := &pluginv1.Access{TokenKinds: K(SESSION), PageRole: OWNER}
	queue := &pluginv1.Access{Staff: true}
	plugins := &pluginv1.Access{TokenKinds: K(ADMIN)}
	completions := &pluginv1.Access{TokenKinds: K(APPKEY, USER)}
	changelog := &pluginv1.Access{Public: true}

	page := b.Page.ID
	for _, tc := range []struct {
		name    string
		p       *auth.Principal
		access  *pluginv1.Access
		page    string
		status  int
		code    int
		subcode int
	}{
		{"a public method needs no credential", nil, changelog, "", 0, 0, 0},
		{"no token is 104", nil, mePages, "", 401, 104, 0},
		{"an app key where a user token is needed is 2069001", appKey, mePages, "", 403, 200, 2069001},
		{"a system user token where a user token is needed is 2069001", system(b.App.ID, "pages:manage"), postWrite, page, 403, 200, 2069001},
		{"a user token with pages:read for me/pages is accepted", user(b.Consumer, b.App.ID, "pages:read"), mePages, "", 0, 0, 0},
		{"a user token with pages:manage for me/pages is accepted", user(b.Consumer, b.App.ID, "pages:manage"), mePages, "", 0, 0, 0},
		{"a user token with neither of any_scopes is 2069002", user(b.Consumer, b.App.ID, "openid"), mePages, "", 403, 10, 2069002},
		{"a session for me/pages is accepted", sess(b.Consumer), mePages, "", 0, 0, 0},
		{"a token without the scope is 2069002", user(b.Owner, b.App.ID, "pages:read"), postWrite, page, 403, 10, 2069002},
		{"the Page owner with pages:manage may post", user(b.Owner, b.App.ID, "pages:manage"), postWrite, page, 0, 0, 0},
		{"a Page admin with pages:manage may post", user(b.PageAdmin, b.App.ID, "pages:manage"), postWrite, page, 0, 0, 0},
		{"a user who does not manage the Page is 2069003", user(b.Consumer, b.App.ID, "pages:manage"), postWrite, page, 403, 200, 2069003},
		{"the Page id is required when a role is", user(b.Owner, b.App.ID, "pages:manage"), postWrite, "", 400, 100, 0},
		{"a Page that does not exist is 100/33", user(b.Owner, b.App.ID, "pages:manage"), postWrite, "424242", 404, 100, 33},
		{"a linked app's system token may send", system(b.App.ID, "svcchat:send"), send, page, 0, 0, 0},
		{"a consumer's token through the linked app may send", user(b.Consumer, b.App.ID, "svcchat:send"), send, page, 0, 0, 0},
		{"an unlinked app is 2018303", system(otherApp.ID, "svcchat:send"), send, page, 403, 10, 2018303},
		{"a user token through an unlinked app is 2018303", user(b.Consumer, otherApp.ID, "svcchat:send"), send, page, 403, 10, 2018303},
		{"the Page owner's token through an unlinked app with svcchat may send", user(b.Owner, otherApp.ID, "svcchat:send"), send, page, 0, 0, 0},
		{"a linked app without the product enabled is 2018303", system(noProductApp.ID, "svcchat:send"), send, page, 403, 10, 2018303},
		{"an app key lacks scopes: 2069002", appKey, send, page, 403, 10, 2069002},
		{"a session ignores scopes but needs the role", sess(b.Consumer), send, page, 403, 200, 2069003},
		{"the owner's session on mobile handover", sess(b.Owner), handoverMobile, page, 0, 0, 0},
		{"an admin's session where the owner is needed is 2069003", sess(b.PageAdmin), handoverMobile, page, 403, 200, 2069003},
		{"a user token where only sessions go is first-party only: 2069001", user(b.Owner, b.App.ID), handoverMobile, page, 403, 200, 2069001},
		{"an app key where only sessions go is 2069001", appKey, handoverMobile, page, 403, 200, 2069001},
		{"staff-only: a staff session passes", sess(b.Staff), queue, "", 0, 0, 0},
		{"staff-only: another user's session is 2069005", sess(b.Owner), queue, "", 403, 200, 2069005},
		{"staff-only: an app key is 2069001", appKey, queue, "", 403, 200, 2069001},
		{"the admin token where ADMIN is listed", admin, plugins, "", 0, 0, 0},
		{"a user's session where only ADMIN goes is 2069006", sess(b.Staff), plugins, "", 403, 200, 2069006},
		{"an app key where only ADMIN goes is 2069006", appKey, plugins, "", 403, 200, 2069006},
		{"the admin token is refused where ADMIN is not listed", admin, mePages, "", 403, 200, 2069006},
		{"the admin token is refused by default kinds", admin, send, page, 403, 200, 2069006},
		{"an app key for chat completions", appKey, completions, "", 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := b.authn.Authorize(ctx, tc.p, tc.access, auth.Target{PageID: tc.page})
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("Authorize = %v, want nil", err)
				}
				return
			}
			wantAPIError(t, err, tc.status, tc.code, tc.subcode)
		})
	}
}

// TestAuthorizeAppRoleFollowsWhoMayManageAnApp checks CONTRACT §4 row by
// row: an app acts only on itself, a user token only on the app it was
// issued to and within the user's team role, a session by team role.
func TestAuthorizeAppRoleFollowsWhoMayManageAnApp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	// The Page admin builds a second app of her own; the owner stays off it.
	mine, err := b.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: "Admin's own app", AdminID: b.PageAdmin.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.IDs.Apps.SetTeamRole(ctx, b.App.ID, b.PageAdmin.ID, identity.TeamDeveloper); err != nil {
		t.Fatal(err)
	}
	if err := b.IDs.Apps.SetTeamRole(ctx, b.App.ID, b.Stranger.ID, identity.TeamTester); err != nil {
		t.Fatal(err)
	}
	principal := func(tok string) *auth.Principal {
		p, err := b.authn.AuthenticateToken(ctx, tok)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	user := func(u identitytest.Person, app string) *auth.Principal {
		return principal(b.issue(t, pluginv1.TokenKind_TOKEN_KIND_USER, u.ID, app, []string{"public_profile"}, time.Hour))
	}
	sess := func(u identitytest.Person) *auth.Principal {
		s, err := b.IDs.Sessions.CreateSession(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		return principal(s.Token)
	}
	key, _ := b.IDs.Apps.CreateAppKey(ctx, b.App.ID)
	appKey := principal(key)
	system := principal(b.issue(t, pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER, "", b.App.ID, nil, time.Hour))
	access := func(r pluginv1.AppRole) *pluginv1.Access { return &pluginv1.Access{AppRole: r} }
	MEMBER, DEV, ADMIN := pluginv1.AppRole_APP_ROLE_MEMBER, pluginv1.AppRole_APP_ROLE_DEVELOPER, pluginv1.AppRole_APP_ROLE_ADMIN
	app, other := b.App.ID, mine.ID
	for _, tc := range []struct {
		name    string
		p       *auth.Principal
		role    pluginv1.AppRole
		app     string
		status  int
		subcode int
	}{
		{"the app's key acts on its own app", appKey, ADMIN, app, 0, 0},
		{"the app's key cannot act on another app", appKey, MEMBER, other, 403, 2069004},
		{"the app's system token acts on its own app", system, DEV, app, 0, 0},
		{"the app's system token cannot act on another app", system, MEMBER, other, 403, 2069004},
		{"a team admin's token of the app acts as admin", user(b.Owner, app), ADMIN, app, 0, 0},
		{"a developer's token of the app acts as developer", user(b.PageAdmin, app), DEV, app, 0, 0},
		{"a developer's token of the app is not an admin", user(b.PageAdmin, app), ADMIN, app, 403, 2069004},
		{"a tester's token of the app is a member only", user(b.Stranger, app), DEV, app, 403, 2069004},
		{"a tester's token of the app is a member", user(b.Stranger, app), MEMBER, app, 0, 0},
		{"a user token of app X cannot manage the user's app Y, even as its admin", user(b.PageAdmin, app), MEMBER, other, 403, 2069004},
		{"a user off the team is refused", user(b.Consumer, app), MEMBER, app, 403, 2069004},
		{"a session acts by team role on any of the user's apps", sess(b.PageAdmin), ADMIN, other, 0, 0},
		{"a session below the role is refused", sess(b.PageAdmin), ADMIN, app, 403, 2069004},
		{"a session off the team is refused", sess(b.Consumer), MEMBER, app, 403, 2069004},
		{"an app that does not exist is 100/33", sess(b.Owner), MEMBER, "424242", 404, 33},
		{"an app id of any form that names nothing is 100/33", appKey, MEMBER, "not-an-id", 404, 33},
		{"the app id is required when a role is", appKey, MEMBER, "", 400, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := b.authn.Authorize(ctx, tc.p, access(tc.role), auth.Target{AppID: tc.app})
			if tc.status == 0 {
				if err != nil {
					t.Fatalf("Authorize = %v, want nil", err)
				}
				return
			}
			code := 200
			switch tc.status {
			case 404, 400:
				code = 100
			}
			wantAPIError(t, err, tc.status, code, tc.subcode)
		})
	}
}

func TestContextCarriesThePrincipal(t *testing.T) {
	t.Parallel()
	p := &auth.Principal{UserID: "1"}
	if auth.FromContext(context.Background()) != nil {
		t.Error("empty context has a principal")
	}
	if got := auth.FromContext(auth.WithPrincipal(context.Background(), p)); got != p {
		t.Errorf("FromContext = %v", got)
	}
	full := &auth.Principal{Kind: pluginv1.TokenKind_TOKEN_KIND_USER, UserID: "1", AppID: "2", Scopes: []string{"pages:read"}, Live: true}
	if pp := full.Proto(); pp.GetTokenKind() != full.Kind || pp.GetUserId() != "1" || pp.GetAppId() != "2" ||
		pp.GetScopes()[0] != "pages:read" || !pp.GetLive() || pp.GetStaff() {
		t.Errorf("Proto = %v", pp)
	}
	if (*auth.Principal)(nil).Proto() != nil {
		t.Error("an anonymous principal has a proto form")
	}
}

func TestEnsureAdminToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	q := b.IDs.Queries()
	first, generated, err := auth.EnsureAdminToken(ctx, q, "")
	if err != nil || !generated || !strings.HasPrefix(first, identity.PrefixAdminToken) {
		t.Fatalf("first start: %q, %v, %v", first, generated, err)
	}
	again, generated, err := auth.EnsureAdminToken(ctx, q, "")
	if err != nil || generated || again != "" {
		t.Fatalf("second start: %q, %v, %v", again, generated, err)
	}
	if p, err := b.authn.AuthenticateToken(ctx, first); err != nil || p.Kind != pluginv1.TokenKind_TOKEN_KIND_ADMIN {
		t.Fatalf("generated token: %+v, %v", p, err)
	}
	configured := "operator-chosen-admin-token-7Hq2xZ9w"
	if _, _, err := auth.EnsureAdminToken(ctx, q, configured); err != nil {
		t.Fatal(err)
	}
	fresh := auth.New(b.IDs, auth.Options{CacheTTL: -1})
	if p, err := fresh.AuthenticateToken(ctx, configured); err != nil || p.Kind != pluginv1.TokenKind_TOKEN_KIND_ADMIN {
		t.Fatalf("configured token: %+v, %v", p, err)
	}
	_, err = fresh.AuthenticateToken(ctx, first)
	wantAPIError(t, err, 401, 190, 467)

	// The operator removes SVC_ADMIN_TOKEN: the configured token stops
	// working and a new one is generated.
	next, generated, err := auth.EnsureAdminToken(ctx, q, "")
	if err != nil || !generated || next == "" || next == first {
		t.Fatalf("start without the setting: %q, %v, %v", next, generated, err)
	}
	_, err = fresh.AuthenticateToken(ctx, configured)
	wantAPIError(t, err, 401, 190, 467)
	if p, err := fresh.AuthenticateToken(ctx, next); err != nil || p.Kind != pluginv1.TokenKind_TOKEN_KIND_ADMIN {
		t.Fatalf("token generated after the setting was removed: %+v, %v", p, err)
	}
}

func TestAWeakConfiguredAdminTokenIsRefused(t *testing.T) {
	t.Parallel()
	for _, weak := range []string{"adm", "short-but-random-Zq8", strings.Repeat("a", 64), strings.Repeat("1234", 10)} {
		if err := auth.CheckAdminToken(weak); err == nil {
			t.Errorf("CheckAdminToken(%q) accepted a weak token", weak)
		}
	}
	if err := auth.CheckAdminToken("3f9a1c0e7b6d25849e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d"); err != nil {
		t.Errorf("a hex token of 64 characters: %v", err)
	}
}

func TestSessionEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := b.authn.SessionHandler()
	post := func(body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/api/mobile/auth/session", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, r)
		return rec
	}
	t.Run("a right password opens a session", func(t *testing.T) {
		body, _ := json.Marshal(map[string]string{"username": b.Consumer.Username, "password": b.Consumer.Password})
		rec := post(string(body))
		if rec.Code != 200 {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		var res struct{ SessionToken, UserID, ExpiresAt string }
		if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if res.UserID != b.Consumer.ID || res.SessionToken == "" {
			t.Errorf("response = %+v", res)
		}
		if _, err := time.Parse(time.RFC3339, res.ExpiresAt); err != nil {
			t.Errorf("expiresAt %q: %v", res.ExpiresAt, err)
		}
		p, err := b.authn.Authenticate(context.Background(), bearerRequest(res.SessionToken))
		if err != nil || p.Kind != pluginv1.TokenKind_TOKEN_KIND_SESSION || p.UserID != b.Consumer.ID {
			t.Fatalf("session principal = %+v, %v", p, err)
		}
		// Signing out revokes it.
		rec = httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodDelete, "/api/mobile/auth/session", nil)
		r.Header.Set("Authorization", "Bearer "+res.SessionToken)
		h.ServeHTTP(rec, r)
		if rec.Code != 200 {
			t.Fatalf("sign out: %d %s", rec.Code, rec.Body)
		}
		_, err = b.authn.Authenticate(context.Background(), bearerRequest(res.SessionToken))
		wantAPIError(t, err, 401, 190, 467)
	})
	for _, tc := range []struct {
		name, body    string
		status, code  int
		subcode       int
		messageNaming string
	}{
		{"a wrong password is refused", `{"username":"consumer","password":"wrong"}`, 401, 190, 2069007, ""},
		{"an unknown field is refused naming it", `{"username":"consumer","password":"x","remember":true}`, 400, 100, 0, "remember"},
		{"a missing password is refused naming it", `{"username":"consumer"}`, 400, 100, 0, "password"},
		{"a wrong type is refused naming the field", `{"username":1,"password":"x"}`, 400, 100, 0, "username"},
		{"not JSON is refused", `username=consumer`, 400, 100, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := post(tc.body)
			var env struct {
				Error struct {
					Message string `json:"message"`
					Code    int    `json:"code"`
					Subcode int    `json:"error_subcode"`
				} `json:"error"`
			}
			if err := json.NewDecoder(bytes.NewReader(rec.Body.Bytes())).Decode(&env); err != nil {
				t.Fatalf("body %s: %v", rec.Body, err)
			}
			if rec.Code != tc.status || env.Error.Code != tc.code || env.Error.Subcode != tc.subcode ||
				!strings.Contains(env.Error.Message, tc.messageNaming) {
				t.Errorf("got %d %s", rec.Code, rec.Body)
			}
		})
	}
}

func TestRepeatedWrongPasswordsAreThrottledWith429AndRetryAfter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := b.authn.SessionHandler()
	post := func(password string) *httptest.ResponseRecorder {
		body, _ := json.Marshal(map[string]string{"username": b.Stranger.Username, "password": password})
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/api/mobile/auth/session", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, r)
		return rec
	}
	for i := range 10 {
		if rec := post("wrong guess"); rec.Code != 401 {
			t.Fatalf("guess %d: status %d, want 401: %s", i+1, rec.Code, rec.Body)
		}
	}
	rec := post(b.Stranger.Password)
	if rec.Code != 429 {
		t.Fatalf("after ten wrong guesses even the right password: %d, want 429: %s", rec.Code, rec.Body)
	}
	var e struct {
		Error struct {
			Code        int  `json:"code"`
			IsTransient bool `json:"is_transient"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code != 17 || !e.Error.IsTransient {
		t.Fatalf("body %s (%v), want code 17, transient", rec.Body, err)
	}
	if ra, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || ra < 1 {
		t.Fatalf("Retry-After = %q", rec.Header().Get("Retry-After"))
	}
}
