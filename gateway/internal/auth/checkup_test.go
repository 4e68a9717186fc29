package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// liveApp takes the World's app live with public_profile and pages:read
// approved.
func (b *bundle) liveApp(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if _, err := b.IDs.Review.SubmitForReview(ctx, b.App.ID, []string{"public_profile", "pages:read"}, 90); err != nil {
		t.Fatal(err)
	}
	if _, err := b.IDs.Review.GoLive(ctx, b.App.ID); err != nil {
		t.Fatal(err)
	}
}

// While a live app's checkup is overdue its credentials keep only
// public_profile (CONTRACT §17), row by row over the access rules a call
// may declare; a session is first-party and not the app's.
func TestAnOverdueCheckupLeavesTheAppsCredentialsOnlyPublicProfile(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.liveApp(t)
	ctx := context.Background()
	user := b.issue(t, pluginv1.TokenKind_TOKEN_KIND_USER, b.Owner.ID, b.App.ID, []string{"public_profile", "pages:read"}, time.Hour)
	key := b.issue(t, pluginv1.TokenKind_TOKEN_KIND_APP_KEY, "", b.App.ID, nil, 0)
	system := b.issue(t, pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER, "", b.App.ID, []string{"public_profile"}, time.Hour)
	session := b.issue(t, pluginv1.TokenKind_TOKEN_KIND_SESSION, b.Owner.ID, "", nil, time.Hour)

	me := &pluginv1.Access{TokenKinds: []pluginv1.TokenKind{pluginv1.TokenKind_TOKEN_KIND_USER, pluginv1.TokenKind_TOKEN_KIND_SESSION}}
	people := []pluginv1.TokenKind{pluginv1.TokenKind_TOKEN_KIND_USER, pluginv1.TokenKind_TOKEN_KIND_SESSION}
	profile := &pluginv1.Access{TokenKinds: people, Scopes: []string{"public_profile"}}
	pages := &pluginv1.Access{TokenKinds: people, AnyScopes: []string{"pages:read", "pages:manage"}}
	apps := []pluginv1.TokenKind{pluginv1.TokenKind_TOKEN_KIND_APP_KEY, pluginv1.TokenKind_TOKEN_KIND_USER,
		pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER}
	completions := &pluginv1.Access{TokenKinds: apps}
	appProfile := &pluginv1.Access{TokenKinds: apps, Scopes: []string{"public_profile"}}
	page := &pluginv1.Access{PageRole: pluginv1.PageRole_PAGE_ROLE_LINKED}
	app := &pluginv1.Access{AppRole: pluginv1.AppRole_APP_ROLE_MEMBER}
	anyKind := &pluginv1.Access{}
	rows := []struct {
		name   string
		token  string
		access *pluginv1.Access
		passes bool // while overdue
	}{
		{"a user token reads me", user, me, true},
		{"a user token makes a call needing public_profile", user, profile, true},
		{"a user token makes a call needing pages:read", user, pages, false},
		{"a user token acts on a Page", user, page, false},
		{"a user token acts on the app", user, app, false},
		{"a user token makes a call declaring nothing", user, anyKind, false},
		{"a user token makes a call app keys make too (chat completions)", user, completions, false},
		{"a user token makes a call app keys make too, needing public_profile", user, appProfile, false},
		{"the app key acts on a Page it is linked to", key, page, false},
		{"the app key acts on its app", key, app, false},
		{"the app key makes a call declaring nothing", key, anyKind, false},
		{"a system user token makes a call needing public_profile", system, appProfile, false},
		{"a team member's session acts on the app", session, app, true},
	}
	target := auth.Target{PageID: b.Page.ID, AppID: b.App.ID}
	check := func(overdue bool) {
		t.Helper()
		for _, r := range rows {
			p, err := b.authn.AuthenticateToken(ctx, r.token)
			if err != nil {
				t.Fatalf("%s: %v", r.name, err)
			}
			err = b.authn.Authorize(ctx, p, r.access, target)
			switch {
			case !overdue || r.passes:
				if err != nil {
					t.Errorf("%s (overdue %v): refused: %v", r.name, overdue, err)
				}
			default:
				if e, ok := apierr.As(err); !ok || e.HTTPStatus != 403 || e.Code != 10 || e.Subcode != 2069002 {
					t.Errorf("%s (overdue): %v, want 403 10/2069002", r.name, err)
				}
			}
		}
	}
	check(false)
	if _, err := b.IDs.Apps.SetDataUseCheckupDue(ctx, b.App.ID, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	b.authn.ForgetApp(b.App.ID)
	check(true)
	// A team Admin certifies: the app's credentials work again at once.
	if _, err := b.IDs.Apps.CertifyDataUse(ctx, b.App.ID, b.Owner.ID,
		map[string]string{"public_profile": "Greets people by name.", "pages:read": "Lists the shops."}); err != nil {
		t.Fatal(err)
	}
	b.authn.ForgetApp(b.App.ID)
	check(false)
}

// The due time passing suspends the app with no new lookup: a principal
// cached before it is judged at each call by the clock.
func TestTheDueTimePassingSuspendsACachedCredentialAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.liveApp(t)
	ctx := context.Background()
	now := time.Now()
	clock := func() time.Time { return now }
	authn := auth.New(b.IDs, auth.Options{CacheTTL: time.Hour, Now: clock})
	if _, err := b.IDs.Apps.SetDataUseCheckupDue(ctx, b.App.ID, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	key := b.issue(t, pluginv1.TokenKind_TOKEN_KIND_APP_KEY, "", b.App.ID, nil, 0)
	app := &pluginv1.Access{AppRole: pluginv1.AppRole_APP_ROLE_MEMBER}
	p, err := authn.AuthenticateToken(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := authn.Authorize(ctx, p, app, auth.Target{AppID: b.App.ID}); err != nil {
		t.Fatalf("before the due time: %v", err)
	}
	now = now.Add(time.Second)
	p, err = authn.AuthenticateToken(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	wantAPIError(t, authn.Authorize(ctx, p, app, auth.Target{AppID: b.App.ID}), 403, 10, 2069002)
	wantAPIError(t, authn.AuthorizeApp(ctx, p, pluginv1.AppRole_APP_ROLE_MEMBER, b.App.ID), 403, 10, 2069002)
}

// A development app is never suspended, whatever its due time says: the
// checkup binds live apps.
func TestADevelopmentAppIsNotSuspendedByAPastDueTime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if _, err := b.IDs.Apps.SetDataUseCheckupDue(ctx, b.App.ID, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	key := b.issue(t, pluginv1.TokenKind_TOKEN_KIND_APP_KEY, "", b.App.ID, nil, 0)
	p, err := b.authn.AuthenticateToken(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.authn.Authorize(ctx, p, &pluginv1.Access{AppRole: pluginv1.AppRole_APP_ROLE_MEMBER}, auth.Target{AppID: b.App.ID}); err != nil {
		t.Fatalf("a development app's key: %v", err)
	}
}
