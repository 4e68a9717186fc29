package identity_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Who may change whose role on a Page (identity.PageRoleChange), rule by
// rule: the rows are named after the rule they check.
func TestPageRoleChangeRules(t *testing.T) {
	t.Parallel()
	const none identity.PageRole = ""
	owner, admin, editor := identity.RoleOwner, identity.RoleAdmin, identity.RoleEditor
	for _, tc := range []struct {
		rule                 string
		actor, current, next identity.PageRole
		self, allowed        bool
	}{
		{"an owner grants owner", owner, none, owner, false, true},
		{"an owner makes an admin owner", owner, admin, owner, false, true},
		{"an owner demotes another owner", owner, owner, admin, false, true},
		{"an owner removes another owner", owner, owner, none, false, true},
		{"an owner grants admin", owner, none, admin, false, true},
		{"an owner grants editor", owner, none, editor, false, true},
		{"an admin grants admin", admin, none, admin, false, true},
		{"an admin grants editor", admin, none, editor, false, true},
		{"an admin makes an editor admin", admin, editor, admin, false, true},
		{"an admin demotes another admin to editor", admin, admin, editor, false, true},
		{"an admin removes an editor", admin, editor, none, false, true},
		{"an admin removes another admin", admin, admin, none, false, true},
		{"an admin demotes themselves to editor", admin, admin, editor, true, true},
		{"only an owner grants owner: not an admin", admin, none, owner, false, false},
		{"only an owner grants owner: not an admin to themselves", admin, admin, owner, true, false},
		{"only an owner grants owner: not an editor", editor, editor, owner, true, false},
		{"only an owner changes an owner's role: not an admin", admin, owner, admin, false, false},
		{"only an owner removes an owner: not an admin", admin, owner, none, false, false},
		{"an editor grants nothing", editor, none, editor, false, false},
		{"an editor changes no one's role", editor, admin, editor, false, false},
		{"an editor promotes no one, not themselves", editor, editor, admin, true, false},
		{"an editor removes no one else", editor, editor, none, false, false},
		{"an editor leaves the Page", editor, editor, none, true, true},
		{"an admin leaves the Page", admin, admin, none, true, true},
		{"an owner leaves the Page (if another owner stays)", owner, owner, none, true, true},
		{"someone without a role changes nothing", none, none, editor, false, false},
		{"someone without a role removes no one", none, editor, none, false, false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			err := identity.PageRoleChange(tc.actor, tc.current, tc.next, tc.self)
			if tc.allowed && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.allowed && !errors.Is(err, identity.ErrPageRole) {
				t.Fatalf("err = %v, want ErrPageRole", err)
			}
		})
	}
}

// A Page made by a person is unpublished, with chat surfacing, inbox
// automation and the inbox merge off, whoever makes it (CONTRACT §16); its
// settings change one by one, leaving the others.
func TestANewPageIsUnpublishedWithEverythingOffUntilItsSettingsChange(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	p, err := w.IDs.Pages.CreatePage(ctx, identity.NewPage{Name: "Nia's Bakery", Category: "Bakery", OwnerID: w.Stranger.ID})
	if err != nil {
		t.Fatal(err)
	}
	if p.Published || p.ChatSurfacing || p.InboxMergeLinked || p.InboxAutomation || p.Category != "Bakery" || p.AssistantLabel != "Assistant" {
		t.Fatalf("new Page = %+v", p)
	}
	f, err := w.IDs.Pages.PageFacts(ctx, p.ID, w.Stranger.ID, "")
	if err != nil || f.UserRole != pluginv1.PageRole_PAGE_ROLE_OWNER {
		t.Fatalf("the creator's role: %+v, %v", f, err)
	}
	on, off := true, false
	if err := w.IDs.Pages.UpdateSettings(ctx, p.ID, identity.PageSettings{Published: &on}); err != nil {
		t.Fatal(err)
	}
	if err := w.IDs.Pages.UpdateSettings(ctx, p.ID, identity.PageSettings{InboxMergeLinked: &on, ChatSurfacing: &on}); err != nil {
		t.Fatal(err)
	}
	if err := w.IDs.Pages.UpdateSettings(ctx, p.ID, identity.PageSettings{ChatSurfacing: &off}); err != nil {
		t.Fatal(err)
	}
	got, err := w.IDs.Pages.Page(ctx, p.ID)
	if err != nil || !got.Published || !got.InboxMergeLinked || got.ChatSurfacing {
		t.Fatalf("after the settings: %+v, %v", got, err)
	}
	if err := w.IDs.Pages.UpdateSettings(ctx, "424242", identity.PageSettings{Published: &on}); !errors.Is(err, identity.ErrNotFound) {
		t.Fatalf("settings of a Page that does not exist: %v", err)
	}
	if _, err := w.IDs.Pages.CreatePage(ctx, identity.NewPage{Name: "Ghost", OwnerID: "424242"}); !errors.Is(err, identity.ErrNotFound) {
		t.Fatalf("a Page of a user who does not exist: %v", err)
	}
}

func TestAPersonCreatesAtMost50PagesEvenConcurrently(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	var mu sync.Mutex
	created, refused := 0, 0
	var wg sync.WaitGroup
	for i := range identity.MaxPagesPerUser + 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := w.IDs.Pages.CreatePage(ctx, identity.NewPage{Name: fmt.Sprintf("Page %d", i), Category: "Shop", OwnerID: w.Consumer.ID})
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
	if created != identity.MaxPagesPerUser || refused != 5 {
		t.Fatalf("%d created and %d refused, want %d and 5", created, refused, identity.MaxPagesPerUser)
	}
	// Being given a Page does not count, and another person is not affected.
	if _, err := w.IDs.Pages.CreatePage(ctx, identity.NewPage{Name: "Mine", Category: "Shop", OwnerID: w.PageEditor.ID}); err != nil {
		t.Fatalf("another person's first Page: %v", err)
	}
}

// Roles as stored: granted, changed, listed owners first; the last owner can
// be neither demoted nor removed, not even by themselves; a role that does
// not exist cannot be removed; a user who does not exist gets none.
func TestTheLastOwnerOfAPageCannotBeRemovedOrDemoted(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	page, owner := w.Page.ID, w.Owner.ID
	if err := w.IDs.Pages.RemovePageRole(ctx, owner, page, owner); !errors.Is(err, identity.ErrLastOwner) {
		t.Fatalf("the last owner leaving: %v", err)
	}
	if err := w.IDs.Pages.SetPageRole(ctx, owner, page, owner, identity.RoleAdmin); !errors.Is(err, identity.ErrLastOwner) {
		t.Fatalf("the last owner demoting themselves: %v", err)
	}
	if err := w.IDs.Pages.SetPageRole(ctx, w.PageAdmin.ID, page, owner, identity.RoleEditor); !errors.Is(err, identity.ErrPageRole) {
		t.Fatalf("an admin demoting the owner: %v", err)
	}
	if err := w.IDs.Pages.SetPageRole(ctx, w.PageAdmin.ID, page, w.Consumer.ID, identity.RoleOwner); !errors.Is(err, identity.ErrPageRole) {
		t.Fatalf("an admin granting owner: %v", err)
	}
	if err := w.IDs.Pages.SetPageRole(ctx, w.PageEditor.ID, page, w.Consumer.ID, identity.RoleEditor); !errors.Is(err, identity.ErrPageRole) {
		t.Fatalf("an editor granting a role: %v", err)
	}
	if err := w.IDs.Pages.SetPageRole(ctx, owner, page, "424242", identity.RoleEditor); !errors.Is(err, identity.ErrNotFound) {
		t.Fatalf("a user that does not exist: %v", err)
	}
	if err := w.IDs.Pages.SetPageRole(ctx, owner, "424242", w.Consumer.ID, identity.RoleEditor); !errors.Is(err, identity.ErrNotFound) {
		t.Fatalf("a Page that does not exist: %v", err)
	}
	if err := w.IDs.Pages.RemovePageRole(ctx, owner, page, w.Consumer.ID); !errors.Is(err, identity.ErrNotFound) {
		t.Fatalf("removing a role nobody has: %v", err)
	}
	if err := w.IDs.Pages.SetPageRole(ctx, owner, page, w.PageAdmin.ID, identity.RoleOwner); err != nil {
		t.Fatalf("an owner granting owner: %v", err)
	}
	if err := w.IDs.Pages.RemovePageRole(ctx, owner, page, owner); err != nil {
		t.Fatalf("one of two owners leaving: %v", err)
	}
	if err := w.IDs.Pages.SetPageRole(ctx, w.PageAdmin.ID, page, w.PageAdmin.ID, identity.RoleAdmin); !errors.Is(err, identity.ErrLastOwner) {
		t.Fatalf("the owner left demoting themselves: %v", err)
	}
	if err := w.IDs.Pages.RemovePageRole(ctx, w.PageEditor.ID, page, w.PageEditor.ID); err != nil {
		t.Fatalf("an editor leaving: %v", err)
	}
	people, err := w.IDs.Pages.PageRoles(ctx, page)
	if err != nil || len(people) != 1 || people[0].UserID != w.PageAdmin.ID || people[0].Role != identity.RoleOwner ||
		people[0].Name != "Adam Admin" {
		t.Fatalf("people = %+v, %v", people, err)
	}
}

func TestThePageRolesListOwnersThenAdminsThenEditors(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	if err := w.IDs.Pages.SetPageRole(ctx, w.Owner.ID, w.Page.ID, w.Stranger.ID, identity.RoleOwner); err != nil {
		t.Fatal(err)
	}
	people, err := w.IDs.Pages.PageRoles(ctx, w.Page.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range people {
		got = append(got, p.UserID+":"+string(p.Role))
	}
	want := []string{w.Owner.ID + ":owner", w.Stranger.ID + ":owner", w.PageAdmin.ID + ":admin", w.PageEditor.ID + ":editor"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("roles = %v, want %v", got, want)
	}
	f, err := w.IDs.Pages.PageFacts(ctx, w.Page.ID, w.PageEditor.ID, "")
	if err != nil || f.UserRole != pluginv1.PageRole_PAGE_ROLE_EDITOR || f.UserManages() || !f.UserHasRole() {
		t.Fatalf("an editor's facts: %+v, %v", f, err)
	}
	mine, err := w.IDs.Pages.ManagedPages(ctx, w.PageEditor.ID, "", 10)
	if err != nil || len(mine) != 1 || mine[0].Role != identity.RoleEditor {
		t.Fatalf("an editor's me/pages: %+v, %v", mine, err)
	}
}

// Two owners demoting each other at once: the Page's row lock makes one
// change wait for the other, so one passes and one is refused.
func TestConcurrentDemotionsOfTwoOwnersLeaveOne(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	if err := w.IDs.Pages.SetPageRole(ctx, w.Owner.ID, w.Page.ID, w.PageAdmin.ID, identity.RoleOwner); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for _, u := range []string{w.Owner.ID, w.PageAdmin.ID} {
		go func() { errs <- w.IDs.Pages.RemovePageRole(ctx, u, w.Page.ID, u) }()
	}
	e1, e2 := <-errs, <-errs
	if (e1 == nil) == (e2 == nil) || !(errors.Is(e1, identity.ErrLastOwner) || errors.Is(e2, identity.ErrLastOwner)) {
		t.Fatalf("one must leave and one be refused: %v, %v", e1, e2)
	}
}
