// Package identitytest builds, for tests, a fresh migrated core database
// holding a small world of users, a Page and an app, through the identity
// package's own functions.
package identitytest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/svcplatform/svc/gateway/internal/identity"
	adsv1 "github.com/svcplatform/svc/gen/svc/ads/v1"
	commercev1 "github.com/svcplatform/svc/gen/svc/commerce/v1"
	extmsgv1 "github.com/svcplatform/svc/gen/svc/extmsg/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	socialv1 "github.com/svcplatform/svc/gen/svc/social/v1"
	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	wearablesv1 "github.com/svcplatform/svc/gen/svc/wearables/v1"
	"github.com/svcplatform/svc/internal/pgtest"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
	"github.com/svcplatform/svc/sdk/migrate"
	coresql "github.com/svcplatform/svc/sql/core"
)

// Main runs a package's tests against PostgreSQL with the core schema
// template registered. Call it from TestMain.
func Main(m *testing.M) {
	RegisterTemplate()
	pgtest.Main(m)
}

// RegisterTemplate registers the migrated core schema as the pgtest template.
func RegisterTemplate() {
	pgtest.RegisterTemplate(pgtest.TemplateName("svc_core", coresql.Migrations()), func(ctx context.Context, url string) error {
		pool, err := pgxpool.New(ctx, url)
		if err != nil {
			return err
		}
		defer pool.Close()
		_, err = migrate.Apply(ctx, pool, "core", coresql.Migrations())
		return err
	})
}

// RedirectURI is the World app's registered redirect URI.
const RedirectURI = "http://127.0.0.1:8765/callback"

// Person is a user with the password to sign in.
type Person struct {
	identity.User
	Password string
}

// World is a fresh database with:
//   - Owner, who owns Page, and is Admin of App's team;
//   - PageAdmin, an admin of Page;
//   - PageEditor, an editor of Page;
//   - Consumer, a Test User of App;
//   - Stranger, with no relation to anything;
//   - Staff, platform staff;
//   - App, in development mode, svcchat enabled and linked to Page;
//   - OtherPage, owned by Stranger, not linked to App.
type World struct {
	// URL is the database's URL, for tests that open their own pools.
	URL       string
	Pool      *pgxpool.Pool
	IDs       *identity.Service
	Owner     Person
	PageAdmin Person
	// PageEditor is an editor of Page.
	PageEditor Person
	Consumer   Person
	Stranger   Person
	Staff      Person
	Page       identity.Page
	OtherPage  identity.Page
	App        identity.CreatedApp
}

// NewWorld creates the World in a new database.
func NewWorld(t testing.TB) *World {
	t.Helper()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	pool := pgtest.Pool(t, url)
	w := &World{URL: url, Pool: pool, IDs: identity.New(pool)}
	DeclareProductScopes(t, w.IDs)
	person := func(username, name string, staff bool) Person {
		pw := identity.NewPassword()
		u, err := w.IDs.Users.CreateUser(ctx, identity.NewUser{Username: username, Name: name, Password: pw, Staff: staff})
		if err != nil {
			t.Fatalf("create user %s: %v", username, err)
		}
		return Person{User: u, Password: pw}
	}
	w.Owner = person("owner", "Olivia Owner", false)
	w.PageAdmin = person("pageadmin", "Adam Admin", false)
	w.PageEditor = person("pageeditor", "Edie Editor", false)
	w.Consumer = person("consumer", "Casey Consumer", false)
	w.Stranger = person("stranger", "Stella Stranger", false)
	w.Staff = person("staff", "Sam Staff", true)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var err error
	on := true
	w.Page, err = w.IDs.Pages.CreatePage(ctx, identity.NewPage{Name: "Demo Coffee", Category: "Coffee shop", OwnerID: w.Owner.ID})
	must(err)
	must(w.IDs.Pages.UpdateSettings(ctx, w.Page.ID, identity.PageSettings{Published: &on, ChatSurfacing: &on, InboxMergeLinked: &on}))
	w.Page, err = w.IDs.Pages.Page(ctx, w.Page.ID)
	must(err)
	must(w.IDs.Pages.SetPageRole(ctx, w.Owner.ID, w.Page.ID, w.PageAdmin.ID, identity.RoleAdmin))
	must(w.IDs.Pages.SetPageRole(ctx, w.Owner.ID, w.Page.ID, w.PageEditor.ID, identity.RoleEditor))
	w.OtherPage, err = w.IDs.Pages.CreatePage(ctx, identity.NewPage{Name: "Other Shop", Category: "Shop", OwnerID: w.Stranger.ID})
	must(err)
	must(w.IDs.Pages.UpdateSettings(ctx, w.OtherPage.ID, identity.PageSettings{Published: &on}))
	w.OtherPage, err = w.IDs.Pages.Page(ctx, w.OtherPage.ID)
	must(err)
	w.App, err = w.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: "Demo App", AdminID: w.Owner.ID,
		RedirectURIs: []string{RedirectURI}, Products: []string{"svcchat"}})
	must(err)
	must(w.IDs.Apps.AddTestUser(ctx, w.App.ID, w.Consumer.ID))
	must(w.IDs.Apps.LinkPage(ctx, w.App.ID, w.Page.ID, []string{"svcchat"}))
	return w
}

// products are the product plugins whose scopes a World knows, by the
// plugin serving each proto file.
var products = map[string]protoreflect.FileDescriptor{
	"svcchat":   svcchatv1.File_svc_svcchat_v1_svcchat_proto,
	"wearables": wearablesv1.File_svc_wearables_v1_wearables_proto,
	"social":    socialv1.File_svc_social_v1_social_proto,
	"ads":       adsv1.File_svc_ads_v1_ads_proto,
	"commerce":  commercev1.File_svc_commerce_v1_commerce_proto,
	"extmsg":    extmsgv1.File_svc_extmsg_v1_extmsg_proto,
}

// DeclareProductScopes declares the scopes the product plugins declare in
// their protos, as the gateway does when it loads them, so that tests of
// the core run against the scope catalog of a full installation.
func DeclareProductScopes(t testing.TB, ids *identity.Service) {
	t.Helper()
	for plugin, fd := range products {
		var scopes []identity.Scope
		for i := range fd.Services().Len() {
			for _, sc := range manifestcheck.ServiceScopes(fd.Services().Get(i)) {
				tier := identity.TierAdvanced
				if sc.Review == pluginv1.ReviewTier_REVIEW_TIER_BASIC {
					tier = identity.TierBasic
				}
				scopes = append(scopes, identity.Scope{Name: sc.Name, Description: sc.Description, Tier: tier})
			}
		}
		if err := ids.DeclareScopes(context.Background(), plugin, scopes); err != nil {
			t.Fatal(err)
		}
	}
}
