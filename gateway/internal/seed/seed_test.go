package seed_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	"github.com/svcplatform/svc/gateway/internal/seed"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/pgtest"
)

func TestMain(m *testing.M) { identitytest.Main(m) }

func newStore(t *testing.T) *identity.Service {
	return identity.New(pgtest.Pool(t, pgtest.NewDatabase(t)))
}

func TestSeedCreatesTheDevelopmentWorldOnce(t *testing.T) {
	t.Parallel()
	ids := newStore(t)
	ctx := context.Background()
	dir := t.TempDir()
	admin, _, err := auth.EnsureAdminToken(ctx, ids.Queries(), "")
	if err != nil {
		t.Fatal(err)
	}
	path, creds, err := seed.Run(ctx, ids, seed.Options{BaseURL: "http://127.0.0.1:9", DataDir: dir, AdminToken: admin})
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, seed.FileName) {
		t.Fatalf("path = %q", path)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v, %v", st, err)
	}
	onDisk, err := seed.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if onDisk.BaseURL != "http://127.0.0.1:9" || onDisk.AdminToken != admin || onDisk.App.RedirectURI != seed.RedirectURI ||
		onDisk.App.APIKey != creds.App.APIKey || len(onDisk.Users) != 3 {
		t.Errorf("file = %+v", onDisk)
	}
	authn := auth.New(ids, auth.Options{})

	for _, who := range []string{"owner", "consumer", "staff"} {
		u := creds.Users[who]
		s, err := ids.Sessions.SignIn(ctx, "192.0.2.1", u.Username, u.Password)
		if err != nil || s.UserID != u.ID {
			t.Errorf("%s signs in: %+v, %v", who, s, err)
		}
	}
	staff, _ := ids.Users.User(ctx, creds.Users["staff"].ID)
	if !staff.Staff {
		t.Error("the staff user is not platform staff")
	}
	page, err := ids.Pages.Page(ctx, creds.Page.ID)
	if err != nil || !page.Published || !page.ChatSurfacing || !page.InboxMergeLinked || page.InboxAutomation || page.Name != creds.Page.Name {
		t.Errorf("page = %+v, %v", page, err)
	}
	f, err := ids.Pages.PageFacts(ctx, creds.Page.ID, creds.Users["owner"].ID, creds.App.ID)
	if err != nil || f.UserRole != pluginv1.PageRole_PAGE_ROLE_OWNER || !f.AppLinked || !slices.Equal(f.LinkProducts, []string{"svcchat"}) {
		t.Errorf("page facts = %+v, %v", f, err)
	}
	app, err := ids.Apps.AppByClientID(ctx, creds.App.ClientID)
	if err != nil || app.Live() || !app.CheckClientSecret(creds.App.ClientSecret) || app.ID != creds.App.ID {
		t.Errorf("app = %+v, %v", app, err)
	}
	if ok, _ := ids.Apps.RedirectURIRegistered(ctx, app.ID, seed.RedirectURI); !ok {
		t.Error("redirect uri not registered")
	}
	if role, _ := ids.Apps.TeamRole(ctx, app.ID, creds.Users["owner"].ID); role != identity.TeamAdmin {
		t.Errorf("owner's team role = %q", role)
	}
	if ok, _ := ids.Apps.MayAuthorize(ctx, app, creds.Users["consumer"].ID); !ok {
		t.Error("the consumer is not a Test User")
	}
	biz, err := ids.Businesses.Get(ctx, creds.Business.ID)
	if err != nil || biz.Name != creds.Business.Name || biz.VerificationStatus != identity.Unverified {
		t.Errorf("business = %+v, %v", biz, err)
	}
	if role, _ := ids.Businesses.Role(ctx, creds.Business.ID, creds.Users["owner"].ID); role != identity.BusinessAdmin {
		t.Errorf("owner's business role = %q", role)
	}
	if assets, err := ids.Businesses.Assets(ctx, creds.Business.ID); err != nil || len(assets) != 2 ||
		assets[0] != (identity.BusinessAsset{Type: "APP", ID: app.ID, Name: app.Name}) ||
		assets[1] != (identity.BusinessAsset{Type: "PAGE", ID: page.ID, Name: page.Name}) {
		t.Errorf("business assets = %+v, %v", assets, err)
	}
	if p, err := authn.AuthenticateToken(ctx, creds.App.APIKey); err != nil || p.Kind != pluginv1.TokenKind_TOKEN_KIND_APP_KEY || p.AppID != app.ID {
		t.Errorf("api key: %+v, %v", p, err)
	}
	if p, err := authn.AuthenticateToken(ctx, creds.AdminToken); err != nil || p.Kind != pluginv1.TokenKind_TOKEN_KIND_ADMIN {
		t.Errorf("admin token: %+v, %v", p, err)
	}

	path, again, err := seed.Run(ctx, ids, seed.Options{BaseURL: "http://127.0.0.1:9", DataDir: t.TempDir()})
	if err != nil || path != "" || again != nil {
		t.Errorf("second run seeded again: %q %v %v", path, again, err)
	}
}

func TestTwoGatewaysStartingTogetherSeedOnce(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	paths := make([]string, 4)
	errs := make([]error, 4)
	for i := range paths {
		ids := identity.New(pgtest.Pool(t, url))
		dir := t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths[i], _, errs[i] = seed.Run(ctx, ids, seed.Options{BaseURL: "http://x", DataDir: dir})
		}()
	}
	wg.Wait()
	seeded := 0
	for i := range paths {
		if errs[i] != nil {
			t.Errorf("gateway %d: %v", i, errs[i])
		}
		if paths[i] != "" {
			seeded++
		}
	}
	var users int
	if err := pgtest.Pool(t, url).QueryRow(ctx, "SELECT count(*) FROM core.users").Scan(&users); err != nil {
		t.Fatal(err)
	}
	if seeded != 1 || users != 3 {
		t.Errorf("%d gateways seeded, %d users; want 1 and 3", seeded, users)
	}
}

func TestNoSeedOnADatabaseWithUsers(t *testing.T) {
	t.Parallel()
	ids := newStore(t)
	ctx := context.Background()
	if _, err := ids.Users.CreateUser(ctx, identity.NewUser{Username: "alice", Password: "pw"}); err != nil {
		t.Fatal(err)
	}
	path, creds, err := seed.Run(ctx, ids, seed.Options{BaseURL: "http://x", DataDir: t.TempDir()})
	if err != nil || path != "" || creds != nil {
		t.Errorf("seeded a database that has users: %q %v %v", path, creds, err)
	}
}
