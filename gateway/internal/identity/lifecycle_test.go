package identity_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	"github.com/svcplatform/svc/gateway/internal/secretbox"
)

// clock is a time the test moves by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock               { return &clock{t: time.Now().UTC().Truncate(time.Second)} }
func authAt(w *identitytest.World, c *clock) *auth.Authenticator {
	return auth.New(w.IDs, auth.Options{CacheTTL: -1, Now: c.now})
}

func wantCode(t *testing.T, err error, status, code, subcode int) {
	t.Helper()
	e, ok := apierr.As(err)
	if !ok || e.HTTPStatus != status || e.Code != code || e.Subcode != subcode {
		t.Fatalf("err = %v, want HTTP %d code %d/%d", err, status, code, subcode)
	}
}

func TestARotatedAppKeyWorks24HoursMoreThenNever(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	c := newClock()
	w.IDs.SetClock(c.now)
	old, err := w.IDs.Apps.CreateAppKey(ctx, w.App.ID)
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.IDs.Apps.RotateAppKey(ctx, w.App.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Value, identity.PrefixTestKey) || r.Value == old {
		t.Fatalf("new key %q", r.Value)
	}
	if want := c.t.Add(identity.KeyOverlap); !r.PreviousExpiresAt.Equal(want) {
		t.Fatalf("previous key expires at %v, want %v", r.PreviousExpiresAt, want)
	}

	c.add(identity.KeyOverlap - time.Second)
	if p, err := authAt(w, c).AuthenticateToken(ctx, old); err != nil || p.AppID != w.App.ID {
		t.Fatalf("the old key a second before the overlap ends: %+v, %v", p, err)
	}
	c.add(time.Second)
	_, err = authAt(w, c).AuthenticateToken(ctx, old)
	wantCode(t, err, 401, 190, 463)
	c.add(365 * 24 * time.Hour)
	if _, err := authAt(w, c).AuthenticateToken(ctx, r.Value); err != nil {
		t.Fatalf("the new key does not expire: %v", err)
	}

	t.Run("a second rotation does not extend the first key's overlap", func(t *testing.T) {
		first, _ := w.IDs.Apps.CreateAppKey(ctx, w.App.ID)
		if _, err := w.IDs.Apps.RotateAppKey(ctx, w.App.ID); err != nil {
			t.Fatal(err)
		}
		c.add(time.Hour)
		if _, err := w.IDs.Apps.RotateAppKey(ctx, w.App.ID); err != nil {
			t.Fatal(err)
		}
		c.add(identity.KeyOverlap - time.Hour)
		_, err := authAt(w, c).AuthenticateToken(ctx, first)
		wantCode(t, err, 401, 190, 463)
	})
}

func TestARotatedClientSecretWorks24HoursMoreThenNever(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	c := newClock()
	w.IDs.SetClock(c.now)
	box, err := secretbox.New(secretbox.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	w.IDs.SetSealer(box)
	app, err := w.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: "Signed", AdminID: w.Owner.ID})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := w.IDs.Apps.SigningSecrets(ctx, app.ID); err != nil || s.Current != app.ClientSecret || s.Previous != "" {
		t.Fatalf("signing secrets before a rotation = %+v, %v", s, err)
	}
	r, err := w.IDs.Apps.RotateClientSecret(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	check := func(secret string) bool {
		a, err := w.IDs.Apps.App(ctx, app.ID)
		if err != nil {
			t.Fatal(err)
		}
		return a.CheckClientSecret(secret)
	}
	if !check(r.Value) || !check(app.ClientSecret) {
		t.Fatal("during the overlap both secrets authenticate the app")
	}
	s, err := w.IDs.Apps.SigningSecrets(ctx, app.ID)
	if err != nil || s.Current != r.Value || s.Previous != app.ClientSecret || !s.PreviousExpiresAt.Equal(r.PreviousExpiresAt) {
		t.Fatalf("signing secrets during the overlap = %+v, %v", s, err)
	}
	c.add(identity.KeyOverlap)
	if !check(r.Value) || check(app.ClientSecret) {
		t.Fatal("after the overlap only the new secret authenticates the app")
	}
	if s, err := w.IDs.Apps.SigningSecrets(ctx, app.ID); err != nil || s.Current != r.Value || s.Previous != "" {
		t.Fatalf("signing secrets after the overlap = %+v, %v", s, err)
	}
	if check("") || check("svccs_guess") {
		t.Fatal("an empty or wrong secret authenticates")
	}
}

func TestTheLastAdminCannotBeRemovedOrDemoted(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	app := w.App.ID // Owner is its only Admin
	if err := w.IDs.Apps.RemoveTeamMember(ctx, app, w.Owner.ID); !errors.Is(err, identity.ErrLastAdmin) {
		t.Fatalf("removing the last admin: %v", err)
	}
	if err := w.IDs.Apps.SetTeamRole(ctx, app, w.Owner.ID, identity.TeamDeveloper); !errors.Is(err, identity.ErrLastAdmin) {
		t.Fatalf("demoting the last admin: %v", err)
	}
	if err := w.IDs.Apps.SetTeamRole(ctx, app, w.PageAdmin.ID, identity.TeamAdmin); err != nil {
		t.Fatal(err)
	}
	if err := w.IDs.Apps.SetTeamRole(ctx, app, w.Owner.ID, identity.TeamDeveloper); err != nil {
		t.Fatalf("demoting one of two admins: %v", err)
	}
	if err := w.IDs.Apps.RemoveTeamMember(ctx, app, w.PageAdmin.ID); !errors.Is(err, identity.ErrLastAdmin) {
		t.Fatalf("removing the admin left: %v", err)
	}
	if err := w.IDs.Apps.RemoveTeamMember(ctx, app, w.Owner.ID); err != nil {
		t.Fatalf("removing a developer: %v", err)
	}
	if err := w.IDs.Apps.RemoveTeamMember(ctx, app, w.Owner.ID); !errors.Is(err, identity.ErrNotFound) {
		t.Fatalf("removing someone off the team: %v", err)
	}
	if err := w.IDs.Apps.SetTeamRole(ctx, app, "424242", identity.TeamTester); !errors.Is(err, identity.ErrNotFound) {
		t.Fatalf("a user that does not exist: %v", err)
	}
	team, err := w.IDs.Apps.Team(ctx, app)
	if err != nil || len(team) != 1 || team[0].UserID != w.PageAdmin.ID || team[0].Role != identity.TeamAdmin {
		t.Fatalf("team = %+v, %v", team, err)
	}
}

func TestConcurrentRemovalsOfTwoAdminsLeaveOne(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	if err := w.IDs.Apps.SetTeamRole(ctx, w.App.ID, w.PageAdmin.ID, identity.TeamAdmin); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for _, u := range []string{w.Owner.ID, w.PageAdmin.ID} {
		go func() { errs <- w.IDs.Apps.RemoveTeamMember(ctx, w.App.ID, u) }()
	}
	e1, e2 := <-errs, <-errs
	if (e1 == nil) == (e2 == nil) || !(errors.Is(e1, identity.ErrLastAdmin) || errors.Is(e2, identity.ErrLastAdmin)) {
		t.Fatalf("one removal must pass and one be refused: %v, %v", e1, e2)
	}
}

func TestATestUserIsMadeForOneAppAndRemovedWithIt(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	tu, err := w.IDs.Apps.CreateTestUser(ctx, w.App.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tu.Password == "" || !strings.HasPrefix(tu.Username, "test_") {
		t.Fatalf("test user = %+v", tu)
	}
	u, err := w.IDs.Users.CheckCredentials(ctx, tu.Username, tu.Password)
	if err != nil || u.ID != tu.ID {
		t.Fatalf("the test user signs in with its password: %+v, %v", u, err)
	}
	app, _ := w.IDs.Apps.App(ctx, w.App.ID)
	if ok, err := w.IDs.Apps.MayAuthorize(ctx, app, tu.ID); err != nil || !ok {
		t.Fatalf("a test user may authorize the app in development: %v, %v", ok, err)
	}
	list, err := w.IDs.Apps.TestUsers(ctx, w.App.ID)
	if err != nil || len(list) != 2 || list[1].ID != tu.ID || list[1].Password != "" {
		t.Fatalf("test users = %+v, %v", list, err)
	}
	if err := w.IDs.Apps.RemoveTestUser(ctx, w.App.ID, tu.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.IDs.Users.User(ctx, tu.ID); !errors.Is(err, identity.ErrNotFound) {
		t.Fatalf("a test user the app made is deleted with it: %v", err)
	}
	if err := w.IDs.Apps.RemoveTestUser(ctx, w.App.ID, w.Consumer.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.IDs.Users.User(ctx, w.Consumer.ID); err != nil {
		t.Fatalf("a user who existed before only loses the standing: %v", err)
	}
	if ok, _ := w.IDs.Apps.MayAuthorize(ctx, app, w.Consumer.ID); ok {
		t.Fatal("a removed test user may still authorize")
	}
	if err := w.IDs.Apps.RemoveTestUser(ctx, w.App.ID, w.Consumer.ID); !errors.Is(err, identity.ErrNotFound) {
		t.Fatalf("removing a test user twice: %v", err)
	}
}

func TestRedirectURIsAreAddedAndRemovedExactly(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	app := w.App.ID
	uri := "https://orders.example/cb"
	if err := w.IDs.Apps.RegisterRedirectURI(ctx, app, uri); err != nil {
		t.Fatal(err)
	}
	if err := w.IDs.Apps.RegisterRedirectURI(ctx, app, uri); err != nil {
		t.Fatalf("registering twice changes nothing: %v", err)
	}
	for _, u := range []string{uri, identitytest.RedirectURI} {
		if ok, err := w.IDs.Apps.RedirectURIRegistered(ctx, app, u); err != nil || !ok {
			t.Fatalf("%s registered: %v, %v", u, ok, err)
		}
	}
	if ok, _ := w.IDs.Apps.RedirectURIRegistered(ctx, app, uri+"/"); ok {
		t.Fatal("a URI that differs by a slash matches")
	}
	if err := w.IDs.Apps.RemoveRedirectURI(ctx, app, uri); err != nil {
		t.Fatal(err)
	}
	if ok, _ := w.IDs.Apps.RedirectURIRegistered(ctx, app, uri); ok {
		t.Fatal("a removed URI is still registered")
	}
	if err := w.IDs.Apps.RemoveRedirectURI(ctx, app, uri); !errors.Is(err, identity.ErrNotFound) {
		t.Fatalf("removing twice: %v", err)
	}
	for _, bad := range []string{"http://orders.example/cb", "https://orders.example/cb#x", "/cb", "myapp:/cb"} {
		if err := w.IDs.Apps.RegisterRedirectURI(ctx, app, bad); !errors.Is(err, identity.ErrInvalid) {
			t.Errorf("%q: %v, want ErrInvalid", bad, err)
		}
	}
	for i := range identity.MaxRedirectURIs - 1 {
		if err := w.IDs.Apps.RegisterRedirectURI(ctx, app, "https://orders.example/cb"+string(rune('a'+i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.IDs.Apps.RegisterRedirectURI(ctx, app, "https://one.too.many/cb"); !errors.Is(err, identity.ErrInvalid) {
		t.Fatalf("over the limit: %v", err)
	}
}

func TestGoingLiveNeedsEveryScopeTheAppUsesApproved(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	app := w.App.ID
	aid, _ := identity.ParseID(app)
	uid, _ := identity.ParseID(w.Consumer.ID)
	// A Test User granted pages:read and svcchat:send in development.
	if _, err := w.IDs.Queries().CreateGrant(ctx, coredb.CreateGrantParams{AppID: aid, UserID: &uid,
		Scopes: []string{"openid", "pages:read", "svcchat:send"}}); err != nil {
		t.Fatal(err)
	}
	testKey, _ := w.IDs.Apps.CreateAppKey(ctx, app)
	goLive := func() error { _, err := w.IDs.Review.GoLive(ctx, app); return err }

	if err := goLive(); !errors.Is(err, identity.ErrReviewRequired) {
		t.Fatalf("nothing approved: %v", err)
	}
	if _, err := w.IDs.Review.SubmitForReview(ctx, app, []string{"pages:read", "svcchat:send", "wearables:push"}, 90); err != nil {
		t.Fatal(err)
	}
	if err := goLive(); !errors.Is(err, identity.ErrReviewRequired) || !strings.Contains(err.Error(), "svcchat:send") {
		t.Fatalf("a granted scope still pending: %v", err)
	}
	if _, err := w.IDs.Review.ApproveScope(ctx, w.Staff.ID, app, "svcchat:send"); err != nil {
		t.Fatal(err)
	}
	if err := goLive(); !errors.Is(err, identity.ErrReviewRequired) || !strings.Contains(err.Error(), "wearables:push") {
		t.Fatalf("a submitted scope still pending: %v", err)
	}
	if _, err := w.IDs.Review.RejectScope(ctx, w.Staff.ID, app, "wearables:push", "no device shown"); err != nil {
		t.Fatal(err)
	}
	live, err := w.IDs.Review.GoLive(ctx, app)
	if err != nil {
		t.Fatalf("every used scope approved, an unused one rejected: %v", err)
	}
	if !strings.HasPrefix(live.APIKey, identity.PrefixLiveKey) || len(live.RevokedKeys) != 1 {
		t.Fatalf("went live = key %q, %d keys revoked", live.APIKey, len(live.RevokedKeys))
	}
	a := auth.New(w.IDs, auth.Options{CacheTTL: -1})
	if p, err := a.AuthenticateToken(ctx, live.APIKey); err != nil || !p.Live {
		t.Fatalf("the live key: %+v, %v", p, err)
	}
	_, err = a.AuthenticateToken(ctx, testKey)
	wantCode(t, err, 401, 190, 467)
	if err := goLive(); !errors.Is(err, identity.ErrInvalid) {
		t.Fatalf("going live twice: %v", err)
	}
}

func TestAReviewListsEveryScopeAndKeepsTheSubmission(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	rs, err := w.IDs.Review.Reviews(ctx, w.App.ID)
	catalog, _ := w.IDs.Scopes(ctx)
	// Every scope but openid, which needs no review.
	if err != nil || len(rs) != len(catalog.All())-1 {
		t.Fatalf("reviews = %+v, %v", rs, err)
	}
	for _, r := range rs {
		if r.Status != identity.ReviewNotSubmitted {
			t.Errorf("%s: %s before any submission", r.Scope, r.Status)
		}
	}
	sub := identity.ReviewSubmission{Scopes: []string{"public_profile", "svcchat:read"}, UseCase: "short",
		PrivacyPolicyURL: "https://orders.example/privacy"}
	rs, err = w.IDs.Review.SubmitReview(ctx, w.App.ID, sub)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]identity.ScopeReview{}
	for _, r := range rs {
		got[r.Scope] = r
	}
	if r := got["public_profile"]; r.Status != identity.ReviewRejected || !strings.Contains(r.Reason, "shorter than 40") {
		t.Errorf("a low score rejects a basic scope saying why: %+v", r)
	}
	if got["svcchat:read"].Status != identity.ReviewPending || got["pages:read"].Status != identity.ReviewNotSubmitted {
		t.Errorf("reviews = %+v", rs)
	}
	q, err := w.IDs.Review.ReviewQueue(ctx, w.Staff.ID, 10)
	if err != nil || len(q) != 1 || q[0].AppName != "Demo App" || q[0].UseCase != "short" || q[0].PrivacyPolicyURL != sub.PrivacyPolicyURL {
		t.Fatalf("queue = %+v, %v", q, err)
	}
	if _, err := w.IDs.Review.ReviewQueue(ctx, w.Owner.ID, 10); !errors.Is(err, identity.ErrNotStaff) {
		t.Fatalf("queue for a non-staff user: %v", err)
	}
	if _, err := w.IDs.Review.SubmitReview(ctx, w.App.ID, identity.ReviewSubmission{Scopes: []string{"public_profile"}}); !errors.Is(err, identity.ErrInvalid) {
		t.Fatalf("an empty use case: %v", err)
	}
	if _, err := w.IDs.Review.ApproveScope(ctx, w.Staff.ID, w.App.ID, "pages:manage"); !errors.Is(err, identity.ErrNotFound) {
		t.Fatalf("deciding a scope never submitted: %v", err)
	}
}

func TestCreatingATestUserHashesInASignInSlotWithoutHoldingAConnection(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	release := identity.HoldHashingSlots(w.IDs, 10*time.Second)
	done := make(chan error, 1)
	go func() {
		_, err := w.IDs.Apps.CreateTestUser(ctx, w.App.ID)
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("created (%v) while every hashing slot was busy", err)
	default:
	}
	if n := w.Pool.Stat().AcquiredConns(); n != 0 {
		t.Fatalf("%d pooled connections held while waiting for a hashing slot", n)
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("after a slot freed up: %v", err)
	}

	// Waiting too long is a throttle, not an internal error, and creates nothing.
	release = identity.HoldHashingSlots(w.IDs, 50*time.Millisecond)
	defer release()
	var te *identity.ThrottledError
	if _, err := w.IDs.Apps.CreateTestUser(ctx, w.App.ID); !errors.As(err, &te) || te.Scope != "server" {
		t.Fatalf("with every slot busy: %v, want a server throttle", err)
	}
	if _, err := w.IDs.Users.CreateUser(ctx, identity.NewUser{Username: "newcomer", Password: "pw"}); !errors.As(err, &te) {
		t.Fatalf("CreateUser with every slot busy: %v, want a throttle", err)
	}
	if users, err := w.IDs.Apps.TestUsers(ctx, w.App.ID); err != nil || len(users) != 2 {
		t.Fatalf("test users %d (%v), want the Consumer and the one created", len(users), err)
	}
}

func TestATestUserCreationRefusedAtTheCapTakesNoHashingSlot(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	// The World's Consumer is the app's first Test User.
	for range identity.MaxTestUsersPerApp - 1 {
		if _, err := w.IDs.Apps.CreateTestUser(ctx, w.App.ID); err != nil {
			t.Fatalf("create below the cap: %v", err)
		}
	}
	// Every hashing slot is busy for longer than the test waits: a refusal
	// that still hashed would wait for a slot (and then be throttled).
	release := identity.HoldHashingSlots(w.IDs, 10*time.Second)
	defer release()
	done := make(chan error, 1)
	go func() {
		_, err := w.IDs.Apps.CreateTestUser(ctx, w.App.ID)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, identity.ErrLimitReached) {
			t.Fatalf("at the cap: %v, want ErrLimitReached", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a creation at the cap waited for a hashing slot")
	}
}

func TestAnAppHasAtMost100TestUsersEvenWhenCreatedConcurrently(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	var mu sync.Mutex
	created, refused, attempts := 0, 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if attempts >= identity.MaxTestUsersPerApp+20 {
					mu.Unlock()
					return
				}
				attempts++
				mu.Unlock()
				_, err := w.IDs.Apps.CreateTestUser(ctx, w.App.ID)
				mu.Lock()
				switch {
				case errors.Is(err, identity.ErrLimitReached):
					refused++
				case err != nil:
					t.Errorf("create: %v", err)
				default:
					created++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// The World's Consumer is the app's first Test User.
	if created != identity.MaxTestUsersPerApp-1 || refused != 21 {
		t.Fatalf("%d created and %d refused, want %d and 21", created, refused, identity.MaxTestUsersPerApp-1)
	}
	if users, err := w.IDs.Apps.TestUsers(ctx, w.App.ID); err != nil || len(users) != identity.MaxTestUsersPerApp {
		t.Fatalf("%d Test Users (%v), want %d", len(users), err, identity.MaxTestUsersPerApp)
	}
	_, err := w.IDs.Apps.CreateTestUser(ctx, w.App.ID)
	if !errors.Is(err, identity.ErrLimitReached) || !strings.Contains(err.Error(), "at most 100 Test Users") {
		t.Fatalf("over the limit: %v", err)
	}
	// Removing one makes room for one.
	if err := w.IDs.Apps.RemoveTestUser(ctx, w.App.ID, w.Consumer.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.IDs.Apps.CreateTestUser(ctx, w.App.ID); err != nil {
		t.Fatalf("after removing one: %v", err)
	}
}

func TestAUserCreatesAtMost50AppsEvenConcurrently(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	var mu sync.Mutex
	created, refused := 0, 0
	var wg sync.WaitGroup
	for i := range identity.MaxAppsPerUser + 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := w.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: fmt.Sprintf("App %d", i), AdminID: w.Owner.ID})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, identity.ErrLimitReached):
				refused++
			case err != nil:
				t.Errorf("create: %v", err)
			default:
				created++
			}
		}()
	}
	wg.Wait()
	// The World's App is the Owner's first.
	if created != identity.MaxAppsPerUser-1 || refused != 11 {
		t.Fatalf("%d created and %d refused, want %d and 11", created, refused, identity.MaxAppsPerUser-1)
	}
	_, err := w.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: "One more", AdminID: w.Owner.ID})
	if !errors.Is(err, identity.ErrLimitReached) || !strings.Contains(err.Error(), "at most 50 apps") {
		t.Fatalf("over the limit: %v", err)
	}
	// Another user is not affected, and being made Admin of an app does not count.
	if err := w.IDs.Apps.SetTeamRole(ctx, w.App.ID, w.Stranger.ID, identity.TeamAdmin); err != nil {
		t.Fatal(err)
	}
	if _, err := w.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: "Stranger's", AdminID: w.Stranger.ID}); err != nil {
		t.Fatalf("another user's first app: %v", err)
	}
}

// A Test User creates no apps: with apps of its own, each with 100 Test
// Users who could do the same, one person would reach any number of
// accounts (and of per-user rate budgets) through the self-service limits.
func TestATestUserCannotCreateApps(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	tu, err := w.IDs.Apps.CreateTestUser(ctx, w.App.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: "Test User's", AdminID: tu.ID}); !errors.Is(err, identity.ErrTestUser) {
		t.Fatalf("a Test User's app: %v, want ErrTestUser", err)
	}
	if _, err := w.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: "Owner's second", AdminID: w.Owner.ID}); err != nil {
		t.Fatalf("a real person's app: %v", err)
	}
}
