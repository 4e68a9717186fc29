package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	corev1 "github.com/svcplatform/svc/gen/svc/core/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
)

// A user access token acts only on the Pages the person chose for its app
// (CONTRACT §17): every Page-scoped rule, the core's and a plugin's, refuses
// any other Page with 403/200/2069007, whatever the person's role there; a
// session is the person's own and is not limited.
func TestAUserTokenActsOnlyOnThePagesChosenForItsApp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	// The owner holds roles on two Pages and chooses only the second for
	// the app.
	second, err := b.IDs.Pages.CreatePage(ctx, identity.NewPage{Name: "Second", Category: "Shop", OwnerID: b.Owner.ID})
	if err != nil {
		t.Fatal(err)
	}
	choose := func(pages ...string) {
		t.Helper()
		if err := b.IDs.Users.ChoosePages(ctx, b.Owner.ID, b.App.ID, pages); err != nil {
			t.Fatal(err)
		}
		b.authn.ForgetUser(b.Owner.ID)
	}
	token := b.issue(t, pluginv1.TokenKind_TOKEN_KIND_USER, b.Owner.ID, b.App.ID, []string{"pages:read", "pages:manage", "svcchat:send"}, time.Hour)
	uid, _ := identity.ParseID(b.Owner.ID)
	aid, _ := identity.ParseID(b.App.ID)
	if err := b.IDs.Queries().AddConsent(ctx, coredb.AddConsentParams{UserID: uid, AppID: aid, Scopes: []string{"pages:read"}}); err != nil {
		t.Fatal(err)
	}
	choose(second.ID)
	principal := func() *auth.Principal {
		t.Helper()
		p, err := b.authn.AuthenticateToken(ctx, token)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	getPage := declared(t, corev1.File_svc_core_v1_graph_proto, "GraphService", "GetPage")
	settings := declared(t, corev1.File_svc_core_v1_graph_proto, "GraphService", "UpdatePageSettings")
	post := declared(t, bookv1.File_svc_book_v1_book_proto, "BookService", "CreatePost")
	send := declared(t, svcchatv1.File_svc_svcchat_v1_svcchat_proto, "SvcchatService", "SendMessage")
	for _, access := range []*pluginv1.Access{getPage, settings, post, send} {
		err := b.authn.Authorize(ctx, principal(), access, auth.Target{PageID: b.Page.ID})
		wantAPIError(t, err, 403, 200, 2069007)
		if err := b.authn.Authorize(ctx, principal(), access, auth.Target{PageID: second.ID}); err != nil && access != send {
			t.Errorf("a chosen Page refused: %v", err)
		}
	}
	// A Page that does not exist is outside the choice too: nothing is
	// read, and nothing tells it apart.
	wantAPIError(t, b.authn.Authorize(ctx, principal(), getPage, auth.Target{PageID: "999999999"}), 403, 200, 2069007)

	// The person changes the choice: the same token follows it.
	choose(b.Page.ID)
	if err := b.authn.Authorize(ctx, principal(), getPage, auth.Target{PageID: b.Page.ID}); err != nil {
		t.Fatalf("the newly chosen Page: %v", err)
	}
	wantAPIError(t, b.authn.Authorize(ctx, principal(), getPage, auth.Target{PageID: second.ID}), 403, 200, 2069007)
	// No Page at all.
	choose()
	wantAPIError(t, b.authn.Authorize(ctx, principal(), getPage, auth.Target{PageID: b.Page.ID}), 403, 200, 2069007)

	// The person's session is not limited by what an app was granted.
	s, err := b.IDs.Sessions.CreateSession(ctx, b.Owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := b.authn.AuthenticateToken(ctx, s.Token)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.authn.Authorize(ctx, sp, getPage, auth.Target{PageID: second.ID}); err != nil {
		t.Errorf("a session refused: %v", err)
	}
	// The choice travels with the principal's wire form, so a plugin's
	// call back through the host is held to it too.
	if back := auth.FromProto(principal().Proto()); b.authn.Authorize(ctx, back, getPage, auth.Target{PageID: b.Page.ID}) == nil {
		t.Error("a principal read back from its wire form lost the Page choice")
	}
}

// A token of an app whose consent holds no choice (none asked, or made
// before the choice existed) acts on every Page its user holds a role on,
// as before.
func TestATokenWithoutAPageChoiceActsOnEveryPageOfItsUser(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	token := b.issue(t, pluginv1.TokenKind_TOKEN_KIND_USER, b.Owner.ID, b.App.ID, []string{"pages:read"}, time.Hour)
	p, err := b.authn.AuthenticateToken(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	if p.Pages != nil {
		t.Fatalf("choice %v, want none", p.Pages)
	}
	getPage := declared(t, corev1.File_svc_core_v1_graph_proto, "GraphService", "GetPage")
	if err := b.authn.Authorize(ctx, p, getPage, auth.Target{PageID: b.Page.ID}); err != nil {
		t.Fatal(err)
	}
}
