package auth_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	corev1 "github.com/svcplatform/svc/gen/svc/core/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	socialv1 "github.com/svcplatform/svc/gen/svc/social/v1"
	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
)

// declared is the access rule a method declares on its proto.
func declared(t *testing.T, file protoreflect.FileDescriptor, service, method string) *pluginv1.Access {
	t.Helper()
	m := file.Services().ByName(protoreflect.Name(service)).Methods().ByName(protoreflect.Name(method))
	if m == nil {
		t.Fatalf("no method %s.%s", service, method)
	}
	return proto.GetExtension(m.Options(), pluginv1.E_Access).(*pluginv1.Access)
}

// What each Page role may do (docs/design/auth.md, "Page roles"), row by
// row, on the access rules the methods declare: one place decides it, the
// gateway's, for the core's nodes and every plugin's alike.
func TestEachPageRoleMayDoWhatAuthMdSays(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	sess := func(u identitytest.Person) *auth.Principal {
		s, err := b.IDs.Sessions.CreateSession(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		p, err := b.authn.AuthenticateToken(ctx, s.Token)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	token := func(u identitytest.Person, scopes ...string) *auth.Principal {
		p, err := b.authn.AuthenticateToken(ctx, b.issue(t, pluginv1.TokenKind_TOKEN_KIND_USER, u.ID, b.App.ID, scopes, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	core := corev1.File_svc_core_v1_graph_proto
	settings := declared(t, core, "GraphService", "UpdatePageSettings")
	listRoles := declared(t, core, "GraphService", "ListPageRoles")
	setRole := declared(t, core, "GraphService", "SetPageRole")
	deleteRole := declared(t, core, "GraphService", "DeletePageRole")
	link := declared(t, core, "GraphService", "CreatePageLink")
	unlink := declared(t, core, "GraphService", "DeletePageLink")
	getPage := declared(t, core, "GraphService", "GetPage")
	post := declared(t, bookv1.File_svc_book_v1_book_proto, "BookService", "CreatePost")
	reel := declared(t, socialv1.File_svc_social_v1_social_proto, "ReelsService", "CreateReel")
	chat := svcchatv1.File_svc_svcchat_v1_svcchat_proto
	send := declared(t, chat, "SvcchatService", "SendMessage")
	conversations := declared(t, chat, "SvcchatService", "ListConversations")
	handover := declared(t, chat, "SvcchatService", "Handover")

	owner, admin, editor, stranger := b.Owner, b.PageAdmin, b.PageEditor, b.Consumer
	for _, tc := range []struct {
		rule    string
		p       *auth.Principal
		access  *pluginv1.Access
		allowed bool
	}{
		{"an owner changes the Page's settings", token(owner, "pages:manage"), settings, true},
		{"an admin changes the Page's settings", token(admin, "pages:manage"), settings, true},
		{"an editor does not change the Page's settings", token(editor, "pages:manage"), settings, false},
		{"an owner grants roles", sess(owner), setRole, true},
		{"an admin grants roles", sess(admin), setRole, true},
		{"an editor grants no role", sess(editor), setRole, false},
		{"an editor may call the role removal, to leave the Page (identity decides whom)", sess(editor), deleteRole, true},
		{"someone without a role removes no role", sess(stranger), deleteRole, false},
		{"an editor reads the Page's roles", sess(editor), listRoles, true},
		{"someone without a role does not read the Page's roles", sess(stranger), listRoles, false},
		{"an admin links the Page to an app", sess(admin), link, true},
		{"an editor does not link the Page to an app", sess(editor), link, false},
		{"an editor does not unlink the Page from an app", sess(editor), unlink, false},
		{"an editor posts as the Page", token(editor, "pages:manage"), post, true},
		{"an editor publishes a reel as the Page", token(editor, "pages:manage"), reel, true},
		{"an admin posts as the Page", token(admin, "pages:manage"), post, true},
		{"someone without a role does not post as the Page", token(stranger, "pages:manage"), post, false},
		{"an editor sends in the Page's threads", token(editor, "svcchat:send"), send, true},
		{"an editor reads the Page's conversations", token(editor, "svcchat:read"), conversations, true},
		{"an editor takes a thread to reply", token(editor, "svcchat:send"), handover, true},
		{"an editor reads the Page", token(editor, "pages:read"), getPage, true},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			err := b.authn.Authorize(ctx, tc.p, tc.access, auth.Target{PageID: b.Page.ID, AppID: b.App.ID})
			if tc.allowed {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantAPIError(t, err, 403, 200, 2069003)
		})
	}
}

// The role table of docs/design/auth.md, row by row: who meets each least
// role. It is the one rule, used for the methods' declared page_role and for
// a plugin's host query naming the role its action needs (AuthorizePage).
func TestTheLeastPageRolesPassWhomTheRoleTableSays(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	user := func(u identitytest.Person) *auth.Principal { return &auth.Principal{UserID: u.ID} }
	app := &auth.Principal{AppID: b.App.ID} // linked to the Page
	const (
		linked = pluginv1.PageRole_PAGE_ROLE_LINKED
		editor = pluginv1.PageRole_PAGE_ROLE_EDITOR
		admin  = pluginv1.PageRole_PAGE_ROLE_ADMIN
		owner  = pluginv1.PageRole_PAGE_ROLE_OWNER
	)
	for _, tc := range []struct {
		need   pluginv1.PageRole
		passes []*auth.Principal
	}{
		{linked, []*auth.Principal{user(b.Owner), user(b.PageAdmin), user(b.PageEditor), app}},
		{editor, []*auth.Principal{user(b.Owner), user(b.PageAdmin), user(b.PageEditor)}},
		{admin, []*auth.Principal{user(b.Owner), user(b.PageAdmin)}},
		{owner, []*auth.Principal{user(b.Owner)}},
	} {
		for _, who := range []struct {
			name string
			p    *auth.Principal
		}{
			{"the owner", user(b.Owner)}, {"an admin", user(b.PageAdmin)}, {"an editor", user(b.PageEditor)},
			{"someone without a role", user(b.Stranger)}, {"a linked app alone", app},
		} {
			pass := false
			for _, p := range tc.passes {
				pass = pass || p.UserID == who.p.UserID && p.AppID == who.p.AppID
			}
			t.Run(fmt.Sprintf("%s %s %s", who.name, map[bool]string{true: "meets", false: "does not meet"}[pass], tc.need), func(t *testing.T) {
				facts, err := b.authn.AuthorizePage(ctx, who.p, tc.need, b.Page.ID)
				switch {
				case pass && (err != nil || facts.GetPageId() != b.Page.ID):
					t.Fatalf("refused: %v (facts %v)", err, facts)
				case pass:
				case who.p == app && tc.need != linked:
					wantAPIError(t, err, 403, 200, 2069001) // a user's role is needed, and an app has none
				default:
					wantAPIError(t, err, 403, 200, 2069003)
				}
			})
		}
	}
	t.Run("a Page that does not exist is 404", func(t *testing.T) {
		_, err := b.authn.AuthorizePage(ctx, user(b.Owner), editor, "999999")
		wantAPIError(t, err, 404, 100, 33)
	})
	t.Run("no least role is no answer", func(t *testing.T) {
		if _, err := b.authn.AuthorizePage(ctx, user(b.Owner), pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED, b.Page.ID); err == nil {
			t.Fatal("an unspecified need passed")
		}
	})
}

// A role change made through this gateway is seen by the next call at
// once (ForgetPage), though the facts are cached.
func TestARoleChangeTakesEffectAtOnceAfterForgetPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	s, err := b.IDs.Sessions.CreateSession(ctx, b.PageEditor.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.authn.AuthenticateToken(ctx, s.Token)
	if err != nil {
		t.Fatal(err)
	}
	settings := declared(t, corev1.File_svc_core_v1_graph_proto, "GraphService", "UpdatePageSettings")
	settings = proto.Clone(settings).(*pluginv1.Access)
	settings.TokenKinds = append(settings.TokenKinds, pluginv1.TokenKind_TOKEN_KIND_SESSION)
	target := auth.Target{PageID: b.Page.ID}
	if err := b.authn.Authorize(ctx, p, settings, target); err == nil {
		t.Fatal("an editor changed settings")
	}
	if err := b.IDs.Pages.SetPageRole(ctx, b.Owner.ID, b.Page.ID, b.PageEditor.ID, "admin"); err != nil {
		t.Fatal(err)
	}
	b.authn.ForgetPage(b.Page.ID)
	if err := b.authn.Authorize(ctx, p, settings, target); err != nil {
		t.Fatalf("promoted to admin, still refused: %v", err)
	}
	if err := b.IDs.Pages.RemovePageRole(ctx, b.Owner.ID, b.Page.ID, b.PageEditor.ID); err != nil {
		t.Fatal(err)
	}
	b.authn.ForgetPage(b.Page.ID)
	wantAPIError(t, b.authn.Authorize(ctx, p, settings, target), 403, 200, 2069003)
}
