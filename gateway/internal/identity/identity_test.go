package identity_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

func TestMain(m *testing.M) { identitytest.Main(m) }

func TestPasswordsAreHashedWithArgon2id(t *testing.T) {
	t.Parallel()
	h, err := identity.HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q is not an argon2id PHC string with our parameters", h)
	}
	for _, tc := range []struct {
		password string
		want     bool
	}{{"correct horse", true}, {"correct hors", false}, {"", false}} {
		ok, err := identity.CheckPassword(h, tc.password)
		if err != nil || ok != tc.want {
			t.Errorf("CheckPassword(%q) = %v, %v; want %v", tc.password, ok, err, tc.want)
		}
	}
	h2, _ := identity.HashPassword("correct horse")
	if h == h2 {
		t.Error("two hashes of one password are equal: the salt is not random")
	}
}

func TestSignIn(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, username, password string
		ok                       bool
	}{
		{"right password signs in", w.Owner.Username, w.Owner.Password, true},
		{"username is case-insensitive", strings.ToUpper(w.Owner.Username), w.Owner.Password, true},
		{"wrong password is refused", w.Owner.Username, w.Owner.Password + "x", false},
		{"unknown user is refused the same way", "nobody", w.Owner.Password, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := w.IDs.Sessions.SignIn(ctx, "192.0.2.1", tc.username, tc.password)
			if !tc.ok {
				if !errors.Is(err, identity.ErrWrongPassword) {
					t.Fatalf("err = %v, want ErrWrongPassword", err)
				}
				return
			}
			if err != nil || s.UserID != w.Owner.ID || !strings.HasPrefix(s.Token, identity.PrefixSessionToken) {
				t.Fatalf("SignIn = %+v, %v", s, err)
			}
			if d := time.Until(s.ExpiresAt); d < identity.SessionTTL-time.Minute || d > identity.SessionTTL {
				t.Errorf("session expires in %v, want %v", d, identity.SessionTTL)
			}
		})
	}
	if _, err := w.IDs.Users.CreateUser(ctx, identity.NewUser{Username: "OWNER", Password: "x"}); !errors.Is(err, identity.ErrUsernameTaken) {
		t.Errorf("duplicate username (other case): err = %v, want ErrUsernameTaken", err)
	}
}

func TestIDsAreDecimalStrings(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	for _, id := range []string{w.Owner.ID, w.Page.ID, w.App.ID} {
		if _, ok := identity.ParseID(id); !ok || strings.TrimLeft(id, "0123456789") != "" {
			t.Errorf("id %q is not a decimal string", id)
		}
	}
	if w.App.ClientID != w.App.ID {
		t.Errorf("client id %q differs from app id %q", w.App.ClientID, w.App.ID)
	}
	for _, bad := range []string{"", "0", "-1", "+5", "012", "1e3", "99999999999999999999", "abc"} {
		if _, ok := identity.ParseID(bad); ok {
			t.Errorf("ParseID(%q) accepted", bad)
		}
	}
}

func TestPageAccess(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	other, err := w.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: "Unlinked", RedirectURIs: []string{identitytest.RedirectURI}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                  string
		page, user, app       string
		wantExists, wantLink  bool
		wantRole              pluginv1.PageRole
		wantProducts          []string
		wantPublished, wantCS bool
	}{
		{"owner of the Page", w.Page.ID, w.Owner.ID, "", true, false, pluginv1.PageRole_PAGE_ROLE_OWNER, nil, true, true},
		{"admin of the Page", w.Page.ID, w.PageAdmin.ID, "", true, false, pluginv1.PageRole_PAGE_ROLE_ADMIN, nil, true, true},
		{"consumer has no role", w.Page.ID, w.Consumer.ID, "", true, false, pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED, nil, true, true},
		{"linked app with svcchat", w.Page.ID, "", w.App.ID, true, true, pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED, []string{"svcchat"}, true, true},
		{"unlinked app", w.Page.ID, "", other.ID, true, false, pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED, nil, true, true},
		{"Page without chat surfacing", w.OtherPage.ID, w.Stranger.ID, w.App.ID, true, false, pluginv1.PageRole_PAGE_ROLE_OWNER, nil, true, false},
		{"no such Page", "999", w.Owner.ID, w.App.ID, false, false, pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED, nil, false, false},
		{"malformed Page id", "page-1", w.Owner.ID, "", false, false, pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED, nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := w.IDs.Pages.PageFacts(ctx, tc.page, tc.user, tc.app)
			if err != nil {
				t.Fatal(err)
			}
			if got.Exists != tc.wantExists || got.AppLinked != tc.wantLink || got.UserRole != tc.wantRole ||
				!slices.Equal(got.LinkProducts, tc.wantProducts) || got.Published != tc.wantPublished ||
				got.ChatSurfacing != tc.wantCS {
				t.Errorf("PageFacts = %+v", got)
			}
		})
	}
}

func TestLinkProductNeedsTheAppToHaveIt(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	if err := w.IDs.Apps.LinkPage(ctx, w.App.ID, w.Page.ID, []string{"svcchat", "book"}); err != nil {
		t.Fatal(err)
	}
	f, err := w.IDs.Pages.PageFacts(ctx, w.Page.ID, "", w.App.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.LinkProducts, []string{"svcchat"}) {
		t.Errorf("link products = %v, want only svcchat (book is not enabled on the app)", f.LinkProducts)
	}
}

func TestAppReview(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	app := w.App.ID

	if _, err := w.IDs.Review.GoLive(ctx, app); !errors.Is(err, identity.ErrReviewRequired) {
		t.Fatalf("going live without review: err = %v, want ErrReviewRequired", err)
	}
	key, _ := w.IDs.Apps.CreateAppKey(ctx, app)
	if !strings.HasPrefix(key, identity.PrefixTestKey) {
		t.Errorf("development key %q lacks %s", key, identity.PrefixTestKey)
	}

	t.Run("basic scope below score 85 is rejected by the automated review", func(t *testing.T) {
		rs, err := w.IDs.Review.SubmitForReview(ctx, app, []string{identity.ScopePublicProfile}, 84)
		if err != nil || len(rs) != 1 || rs[0].Status != identity.ReviewRejected || rs[0].Reason == "" {
			t.Fatalf("review = %+v, %v", rs, err)
		}
	})
	t.Run("basic scopes at score 85 are approved by the automated review", func(t *testing.T) {
		rs, err := w.IDs.Review.SubmitForReview(ctx, app, []string{identity.ScopePublicProfile, identity.ScopePagesRead, identity.ScopeOpenID}, 85)
		if err != nil || len(rs) != 2 {
			t.Fatalf("review = %+v, %v", rs, err)
		}
		for _, r := range rs {
			if r.Status != identity.ReviewAutomatedApproved || r.Score == nil || *r.Score != 85 {
				t.Errorf("%s: %+v", r.Scope, r)
			}
		}
	})
	t.Run("an approved scope stays approved when submitted again", func(t *testing.T) {
		rs, err := w.IDs.Review.SubmitForReview(ctx, app, []string{identity.ScopePagesRead}, 10)
		if err != nil || rs[0].Status != identity.ReviewAutomatedApproved {
			t.Fatalf("review = %+v, %v", rs, err)
		}
	})
	t.Run("advanced scopes wait for staff", func(t *testing.T) {
		rs, err := w.IDs.Review.SubmitForReview(ctx, app, []string{"svcchat:send", "svcchat:read"}, 100)
		if err != nil || rs[0].Status != identity.ReviewPending || rs[1].Status != identity.ReviewPending {
			t.Fatalf("review = %+v, %v", rs, err)
		}
		q, err := w.IDs.Review.PendingScopeReviews(ctx, w.Staff.ID)
		if err != nil || len(q) != 2 {
			t.Fatalf("staff queue = %+v, %v", q, err)
		}
	})
	t.Run("only staff can see the queue or decide", func(t *testing.T) {
		if _, err := w.IDs.Review.PendingScopeReviews(ctx, w.Owner.ID); !errors.Is(err, identity.ErrNotStaff) {
			t.Errorf("queue by non-staff: err = %v", err)
		}
		if _, err := w.IDs.Review.ApproveScope(ctx, w.Owner.ID, app, "svcchat:send"); !errors.Is(err, identity.ErrNotStaff) {
			t.Errorf("approval by non-staff: err = %v", err)
		}
	})
	t.Run("staff approve one scope and reject another", func(t *testing.T) {
		r, err := w.IDs.Review.ApproveScope(ctx, w.Staff.ID, app, "svcchat:send")
		if err != nil || r.Status != identity.ReviewApproved || r.ReviewerID != w.Staff.ID {
			t.Fatalf("approve = %+v, %v", r, err)
		}
		r, err = w.IDs.Review.RejectScope(ctx, w.Staff.ID, app, "svcchat:read", "no use case shown")
		if err != nil || r.Status != identity.ReviewRejected || r.Reason != "no use case shown" {
			t.Fatalf("reject = %+v, %v", r, err)
		}
		if _, err := w.IDs.Review.ApproveScope(ctx, w.Staff.ID, app, "svcchat:read"); !errors.Is(err, identity.ErrNotPending) {
			t.Errorf("approving a decided review: err = %v, want ErrNotPending", err)
		}
	})
	t.Run("a live app can be granted openid and approved scopes only", func(t *testing.T) {
		if _, err := w.IDs.Review.GoLive(ctx, app); err != nil {
			t.Fatal(err)
		}
		a, err := w.IDs.Apps.App(ctx, app)
		if err != nil || !a.Live() {
			t.Fatalf("app = %+v, %v", a, err)
		}
		got, err := w.IDs.Apps.GrantableScopes(ctx, a)
		want := []string{identity.ScopeOpenID, identity.ScopePagesRead, identity.ScopePublicProfile, "svcchat:send"}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("grantable = %v, %v; want %v", got, err, want)
		}
		ok, err := w.IDs.Apps.MayAuthorize(ctx, a, w.Stranger.ID)
		if err != nil || !ok {
			t.Errorf("a live app is open to anyone: %v, %v", ok, err)
		}
	})
	t.Run("a live app's new keys are svc_live_ keys", func(t *testing.T) {
		key, err := w.IDs.Apps.CreateAppKey(ctx, app)
		if err != nil || !strings.HasPrefix(key, identity.PrefixLiveKey) {
			t.Errorf("key %q, %v", key, err)
		}
	})
}

func TestDevelopmentModeAuthorization(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	if err := w.IDs.Apps.SetTeamRole(ctx, w.App.ID, w.PageAdmin.ID, identity.TeamTester); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		user string
		want bool
	}{
		{"team Admin may authorize", w.Owner.ID, true},
		{"team Tester may authorize", w.PageAdmin.ID, true},
		{"Test User may authorize", w.Consumer.ID, true},
		{"anyone else may not", w.Stranger.ID, false},
		{"staff are not special", w.Staff.ID, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := w.IDs.Apps.MayAuthorize(ctx, w.App.App, tc.user)
			if err != nil || got != tc.want {
				t.Errorf("MayAuthorize = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestRedirectURIValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		uri string
		ok  bool
	}{
		{"https://app.example/cb", true},
		{"http://127.0.0.1:8765/callback", true},
		{"http://localhost/cb", true},
		{"http://[::1]:9/cb", true},
		{"com.example.app:/oauth", true},
		{"http://app.example/cb", false},
		{"https://app.example/cb#frag", false},
		{"/relative", false},
		{"myapp:/cb", false},
		{"https:///nohost", false},
	} {
		err := identity.ValidRedirectURI(tc.uri)
		if (err == nil) != tc.ok {
			t.Errorf("ValidRedirectURI(%q) = %v, want ok=%v", tc.uri, err, tc.ok)
		}
	}
}

func TestDebugToken(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	key, err := w.IDs.Apps.CreateAppKey(ctx, w.App.ID)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := w.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: "Other"})
	otherKey, _ := w.IDs.Apps.CreateAppKey(ctx, other.ID)
	sess, _ := w.IDs.Sessions.CreateSession(ctx, w.Owner.ID)
	now := time.Now()

	d, err := w.IDs.Sessions.DebugToken(ctx, w.App.ID, key, now)
	if err != nil || !d.IsValid || d.Type != "APP" || d.AppID != w.App.ID || d.Application != "Demo App" ||
		d.ExpiresAt != nil || d.IssuedAt == nil {
		t.Errorf("own app key: %+v, %v", d, err)
	}
	for name, tok := range map[string]string{"another app's key": otherKey, "a session": sess.Token, "unknown": "nope"} {
		d, err := w.IDs.Sessions.DebugToken(ctx, w.App.ID, tok, now)
		if err != nil || d.IsValid || d.AppID != "" || d.UserID != "" {
			t.Errorf("%s: %+v, %v", name, d, err)
		}
	}
	if ok, err := w.IDs.Sessions.RevokeCredential(ctx, key); !ok || err != nil {
		t.Fatalf("revoke: %v, %v", ok, err)
	}
	if d, _ := w.IDs.Sessions.DebugToken(ctx, w.App.ID, key, now); d.IsValid || d.Type != "APP" {
		t.Errorf("revoked key: %+v", d)
	}
}

func TestMe(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	me, err := w.IDs.Users.Me(context.Background(), w.Consumer.ID)
	if err != nil || me.ID != w.Consumer.ID || me.Name != "Casey Consumer" {
		t.Errorf("Me = %+v, %v", me, err)
	}
}
