package coregraph_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/coregraph"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	corev1 "github.com/svcplatform/svc/gen/svc/core/v1"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func TestMain(m *testing.M) { identitytest.Main(m) }

// pagesWorld is the core's nodes over a fresh identitytest.World, run
// in-process as the gateway runs them, remembering which Pages it told the
// authenticator to forget.
type pagesWorld struct {
	*identitytest.World
	tp *plugintest.Plugin
	mu sync.Mutex
	// forgotten are the Pages whose cached facts the service dropped.
	forgotten []string
}

func newPagesWorld(t *testing.T) *pagesWorld {
	w := &pagesWorld{World: identitytest.NewWorld(t)}
	core := sdk.New(sdk.Info{Name: "core", Version: "test"})
	coregraph.New(coregraph.Options{Identity: w.IDs, PageChanged: func(id string) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.forgotten = append(w.forgotten, id)
	}}).Register(core)
	w.tp = plugintest.Start(t, core)
	return w
}

func (w *pagesWorld) wasForgotten(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Contains(w.forgotten, id)
}

const graph = "/svc.core.v1.GraphService/"

func as(u identitytest.Person) sdk.Principal {
	return sdk.Principal{Kind: sdk.TokenKindSession, UserID: u.ID}
}

// wantError checks that err is the *sdk.Error with these numbers (and,
// for code 100, naming field).
func wantError(t *testing.T, err error, status, code, subcode int) *sdk.Error {
	t.Helper()
	var e *sdk.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want an *sdk.Error %d/%d", err, code, subcode)
	}
	if e.HTTPStatus != status || e.Code != code || e.Subcode != subcode {
		t.Fatalf("error = HTTP %d code %d/%d (%s), want HTTP %d code %d/%d", e.HTTPStatus, e.Code, e.Subcode, e.Message,
			status, code, subcode)
	}
	return e
}

// POST me/pages makes the caller the owner of an unpublished Page with
// everything off; page/<id> turns published and the inbox merge on, and
// each change drops what the authenticator remembers of the Page.
func TestAPersonCreatesAPageAndPublishesIt(t *testing.T) {
	t.Parallel()
	w := newPagesWorld(t)
	ctx := context.Background()
	created, err := plugintest.Call[*corev1.CreatedPage](ctx, w.tp, graph+"CreatePage", as(w.Stranger),
		&corev1.CreatePageRequest{Name: "Nia's Bakery", Category: "Bakery"})
	if err != nil {
		t.Fatal(err)
	}
	page, err := plugintest.Call[*corev1.Page](ctx, w.tp, graph+"GetPage", as(w.Stranger), &corev1.GetPageRequest{PageId: created.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if page.GetRole() != "owner" || page.GetPublished() || page.GetChatSurfacing() || page.GetInboxMergeLinked() ||
		page.GetInboxAutomation() || page.GetCategory() != "Bakery" || page.GetName() != "Nia's Bakery" {
		t.Fatalf("new Page = %v", page)
	}
	on := true
	if _, err := plugintest.Call[*corev1.SuccessResponse](ctx, w.tp, graph+"UpdatePageSettings", as(w.Stranger),
		&corev1.UpdatePageSettingsRequest{PageId: created.GetId(), Published: &on, InboxMergeLinked: &on, ChatSurfacing: &on}); err != nil {
		t.Fatal(err)
	}
	if !w.wasForgotten(created.GetId()) {
		t.Fatal("the settings change did not drop the Page's cached facts")
	}
	page, err = plugintest.Call[*corev1.Page](ctx, w.tp, graph+"GetPage", as(w.Stranger), &corev1.GetPageRequest{PageId: created.GetId()})
	if err != nil || !page.GetPublished() || !page.GetInboxMergeLinked() || !page.GetChatSurfacing() {
		t.Fatalf("after publishing: %v, %v", page, err)
	}
	// No setting at all is refused, naming a field.
	_, err = plugintest.Call[*corev1.SuccessResponse](ctx, w.tp, graph+"UpdatePageSettings", as(w.Stranger),
		&corev1.UpdatePageSettingsRequest{PageId: created.GetId()})
	wantError(t, err, 400, 100, 0)
}

// The role nodes: list, grant, change, remove; every refusal with its
// numbers: only an owner grants owner (2069003), the last owner is 400
// code 100 naming the field, a user or role that does not exist 404/33.
func TestPageRoleNodesGrantChangeRemoveAndRefuse(t *testing.T) {
	t.Parallel()
	w := newPagesWorld(t)
	ctx := context.Background()
	page := w.Page.ID
	set := func(actor identitytest.Person, user, role string) error {
		_, err := plugintest.Call[*corev1.SuccessResponse](ctx, w.tp, graph+"SetPageRole", as(actor),
			&corev1.SetPageRoleRequest{PageId: page, UserId: user, Role: role})
		return err
	}
	del := func(actor identitytest.Person, user string) error {
		_, err := plugintest.Call[*corev1.SuccessResponse](ctx, w.tp, graph+"DeletePageRole", as(actor),
			&corev1.DeletePageRoleRequest{PageId: page, UserId: user})
		return err
	}
	if err := set(w.PageAdmin, w.Stranger.ID, "editor"); err != nil {
		t.Fatalf("an admin granting editor: %v", err)
	}
	if !w.wasForgotten(page) {
		t.Fatal("the role change did not drop the Page's cached facts")
	}
	list, err := plugintest.Call[*corev1.ListPageRolesResponse](ctx, w.tp, graph+"ListPageRoles", as(w.Stranger),
		&corev1.ListPageRolesRequest{PageId: page})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range list.GetData() {
		got = append(got, e.GetName()+":"+e.GetRole())
	}
	want := []string{"Olivia Owner:owner", "Adam Admin:admin", "Edie Editor:editor", "Stella Stranger:editor"}
	if !slices.Equal(got, want) {
		t.Fatalf("roles = %v, want %v", got, want)
	}

	wantError(t, set(w.PageAdmin, w.Stranger.ID, "owner"), 403, 200, 2069003)
	wantError(t, set(w.PageAdmin, w.Owner.ID, "editor"), 403, 200, 2069003)
	wantError(t, del(w.PageAdmin, w.Owner.ID), 403, 200, 2069003)
	wantError(t, del(w.PageEditor, w.Stranger.ID), 403, 200, 2069003)
	if e := wantError(t, set(w.Owner, w.Owner.ID, "admin"), 400, 100, 0); e.Field != "role" {
		t.Fatalf("the last owner's demotion names %q, want role", e.Field)
	}
	if e := wantError(t, del(w.Owner, w.Owner.ID), 400, 100, 0); e.Field != "user_id" {
		t.Fatalf("the last owner's leaving names %q, want user_id", e.Field)
	}
	wantError(t, set(w.Owner, "424242", "editor"), 404, 100, 33)
	wantError(t, del(w.Owner, w.Consumer.ID), 404, 100, 33)

	if err := del(w.Stranger, w.Stranger.ID); err != nil {
		t.Fatalf("an editor leaving: %v", err)
	}
	if err := set(w.Owner, w.PageAdmin.ID, "owner"); err != nil {
		t.Fatalf("an owner granting owner: %v", err)
	}
	if err := del(w.Owner, w.Owner.ID); err != nil {
		t.Fatalf("one of two owners leaving: %v", err)
	}
}
