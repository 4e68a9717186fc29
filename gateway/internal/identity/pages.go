package identity

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// PageRole is a user's role on a Page.
type PageRole string

// Page roles (docs/design/auth.md, "Page roles"). The owner also counts as
// an admin wherever admin is required; an editor posts and replies in the
// Page's threads and changes nothing of the Page.
const (
	RoleOwner  PageRole = "owner"
	RoleAdmin  PageRole = "admin"
	RoleEditor PageRole = "editor"
)

// MaxPagesPerUser bounds the Pages one person creates (core.pages.created_by:
// handing ownership away frees no place), as MaxAppsPerUser bounds apps.
const MaxPagesPerUser = 50

// ErrLastOwner: the change would leave the Page without an owner.
var ErrLastOwner = errors.New("identity: the last owner of a Page cannot be removed or demoted")

// ErrPageRole: the acting user's role on the Page does not allow the role
// change (PageRoleChange).
var ErrPageRole = errors.New("identity: the role on the Page does not allow this change")

// Page is a business presence owned by a user.
type Page struct {
	ID               string
	Name             string
	Category         string
	Published        bool
	ChatSurfacing    bool
	InboxAutomation  bool
	AssistantLabel   string
	InboxMergeLinked bool
	// HandoverTimeout is svcchat's default expires_in, seconds; 0: none.
	HandoverTimeout int32
}

func pageFrom(p coredb.CorePage) Page {
	out := Page{ID: FormatID(p.ID), Name: p.Name, Category: p.Category, Published: p.Published, ChatSurfacing: p.ChatSurfacing,
		InboxAutomation: p.InboxAutomation, AssistantLabel: p.AssistantLabel, InboxMergeLinked: p.InboxMergeLinked}
	if p.HandoverTimeout != nil {
		out.HandoverTimeout = *p.HandoverTimeout
	}
	return out
}

// NewPage describes a Page to create; OwnerID becomes its owner.
type NewPage struct {
	Name     string
	Category string
	OwnerID  string
}

// CreatePage creates a Page and makes OwnerID its owner, in one
// transaction: unpublished, chat surfacing, inbox automation and the inbox
// merge off, whoever creates it (CONTRACT §16); UpdateSettings changes
// them. The owner creates at most MaxPagesPerUser Pages (ErrLimitReached),
// counted under the owner's row lock.
func (s *Pages) CreatePage(ctx context.Context, n NewPage) (Page, error) {
	owner, err := mustID("user", n.OwnerID)
	if err != nil {
		return Page{}, err
	}
	if n.Name == "" {
		return Page{}, fmt.Errorf("page name is empty: %w", ErrInvalid)
	}
	var page Page
	err = s.InTx(ctx, func(s *Service) error {
		if _, err := s.q.LockUser(ctx, owner); err != nil {
			return notFound(err, "user "+n.OwnerID)
		}
		count, err := s.q.CountPagesCreatedBy(ctx, &owner)
		if err != nil {
			return fmt.Errorf("count pages: %w", err)
		}
		if count >= MaxPagesPerUser {
			return fmt.Errorf("a user creates at most %d Pages: %w", MaxPagesPerUser, ErrLimitReached)
		}
		p, err := s.q.CreatePage(ctx, coredb.CreatePageParams{Name: n.Name, Category: n.Category, CreatedBy: &owner})
		if err != nil {
			return fmt.Errorf("create page: %w", err)
		}
		if err := s.q.UpsertPageRole(ctx, coredb.UpsertPageRoleParams{PageID: p.ID, UserID: owner, Role: string(RoleOwner)}); err != nil {
			return notFound(err, "page owner "+n.OwnerID)
		}
		page = pageFrom(p)
		return nil
	})
	return page, err
}

// PageSettings are the settings of a Page an owner or admin changes; nil
// leaves one as it is.
type PageSettings struct {
	Published        *bool
	ChatSurfacing    *bool
	InboxMergeLinked *bool
	InboxAutomation  *bool
	AssistantLabel   *string
	// HandoverTimeout: 60 to 86,400 seconds, or 0 for none.
	HandoverTimeout *int32
}

// UpdateSettings changes the settings of a Page; ErrNotFound when there is
// no such Page.
func (s *Pages) UpdateSettings(ctx context.Context, pageID string, set PageSettings) error {
	pid, err := mustID("page", pageID)
	if err != nil {
		return err
	}
	n, err := s.q.UpdatePageSettings(ctx, coredb.UpdatePageSettingsParams{ID: pid, Published: set.Published,
		ChatSurfacing: set.ChatSurfacing, InboxMergeLinked: set.InboxMergeLinked, InboxAutomation: set.InboxAutomation,
		AssistantLabel: set.AssistantLabel, HandoverTimeout: set.HandoverTimeout})
	if err != nil {
		return fmt.Errorf("update page settings: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("page %s: %w", pageID, ErrNotFound)
	}
	return nil
}

// Page returns the Page with id.
func (s *Pages) Page(ctx context.Context, id string) (Page, error) {
	pid, err := mustID("page", id)
	if err != nil {
		return Page{}, err
	}
	p, err := s.q.GetPage(ctx, pid)
	if err != nil {
		return Page{}, notFound(err, "page "+id)
	}
	return pageFrom(p), nil
}

// PagePerson is a person with a role on a Page.
type PagePerson struct {
	UserID string
	Name   string
	Role   PageRole
}

// PageRoles lists the people of a Page: owners, admins, then editors.
func (s *Pages) PageRoles(ctx context.Context, pageID string) ([]PagePerson, error) {
	pid, err := mustID("page", pageID)
	if err != nil {
		return nil, err
	}
	rows, err := s.q.ListPageRoles(ctx, pid)
	if err != nil {
		return nil, fmt.Errorf("list page roles: %w", err)
	}
	out := make([]PagePerson, 0, len(rows))
	for _, r := range rows {
		out = append(out, PagePerson{UserID: FormatID(r.UserID), Name: r.Name, Role: PageRole(r.Role)})
	}
	return out, nil
}

// PageRoleChange is the rule of who may change whose role on a Page: the
// acting user, whose role is actor, sets the role of the target user (role
// current, "" for none) to next ("" removes it). It answers nil or
// ErrPageRole:
//
//   - anyone with a role may remove their own (leave the Page);
//   - only an owner grants owner, and changes or removes an owner's role;
//   - otherwise an owner or admin changes and removes anyone's role;
//   - an editor changes nothing else.
//
// Whether the change would leave the Page without an owner (ErrLastOwner)
// is checked on the stored roles, under the Page's lock.
func PageRoleChange(actor, current, next PageRole, self bool) error {
	switch {
	case actor == "":
		return ErrPageRole
	case self && next == "" && current != "":
		return nil
	case next == RoleOwner || current == RoleOwner:
		if actor != RoleOwner {
			return ErrPageRole
		}
		return nil
	case actor == RoleOwner || actor == RoleAdmin:
		return nil
	}
	return ErrPageRole
}

// SetPageRole gives userID a role on the Page, or changes it, as actorID
// (PageRoleChange). ErrNotFound when the Page or the user does not exist,
// ErrLastOwner when it would demote the last owner.
func (s *Pages) SetPageRole(ctx context.Context, actorID, pageID, userID string, role PageRole) error {
	if role != RoleOwner && role != RoleAdmin && role != RoleEditor {
		return fmt.Errorf("page role %q: %w", role, ErrInvalid)
	}
	uid, err := mustID("user", userID)
	if err != nil {
		return err
	}
	return s.changeRole(ctx, actorID, pageID, userID, role, func(s *Service, pid int64) error {
		if _, err := s.q.GetUser(ctx, uid); err != nil {
			return notFound(err, "user "+userID)
		}
		return s.q.UpsertPageRole(ctx, coredb.UpsertPageRoleParams{PageID: pid, UserID: uid, Role: string(role)})
	})
}

// RemovePageRole takes userID's role on the Page away, as actorID
// (PageRoleChange). ErrNotFound when the user has no role on it,
// ErrLastOwner when the user is its last owner.
func (s *Pages) RemovePageRole(ctx context.Context, actorID, pageID, userID string) error {
	uid, err := mustID("user", userID)
	if err != nil {
		return err
	}
	return s.changeRole(ctx, actorID, pageID, userID, "", func(s *Service, pid int64) error {
		_, err := s.q.DeletePageRole(ctx, coredb.DeletePageRoleParams{PageID: pid, UserID: uid})
		return err
	})
}

// changeRole applies one role change under the Page's row lock: the rule
// (PageRoleChange) on the roles as stored, then the last owner, then apply.
func (s *Pages) changeRole(ctx context.Context, actorID, pageID, userID string, next PageRole, apply func(*Service, int64) error) error {
	pid, err := mustID("page", pageID)
	if err != nil {
		return err
	}
	aid, _ := ParseID(actorID) // 0 has no role
	uid, _ := ParseID(userID)
	return s.InTx(ctx, func(s *Service) error {
		if _, err := s.q.LockPage(ctx, pid); err != nil {
			return notFound(err, "page "+pageID)
		}
		actor, err := s.q.GetPageRole(ctx, coredb.GetPageRoleParams{PageID: pid, UserID: aid})
		if err != nil {
			return fmt.Errorf("page role: %w", err)
		}
		current, err := s.q.GetPageRole(ctx, coredb.GetPageRoleParams{PageID: pid, UserID: uid})
		if err != nil {
			return fmt.Errorf("page role: %w", err)
		}
		if next == "" && current == "" {
			return fmt.Errorf("role of user %s on page %s: %w", userID, pageID, ErrNotFound)
		}
		if err := PageRoleChange(PageRole(actor), PageRole(current), next, aid == uid); err != nil {
			return err
		}
		if PageRole(current) == RoleOwner && next != RoleOwner {
			owners, err := s.q.CountPageOwners(ctx, pid)
			if err != nil {
				return fmt.Errorf("count owners: %w", err)
			}
			if owners <= 1 {
				return ErrLastOwner
			}
		}
		return apply(s, pid)
	})
}

// ManagedPage is a Page with the user's role on it.
type ManagedPage struct {
	Page
	Role PageRole
}

// ManagedPages lists the Pages the user has a role on, in id order,
// at most limit of them after the Page id after ("" for the first page).
func (s *Pages) ManagedPages(ctx context.Context, userID, after string, limit int) ([]ManagedPage, error) {
	return s.managedPages(ctx, userID, 0, after, limit)
}

// managedPages lists the user's Pages as a token of app aid sees them (0:
// every Page).
func (s *Pages) managedPages(ctx context.Context, userID string, aid int64, after string, limit int) ([]ManagedPage, error) {
	uid, err := mustID("user", userID)
	if err != nil {
		return nil, err
	}
	var afterID int64
	if after != "" {
		if afterID, err = mustID("page", after); err != nil {
			return nil, err
		}
	}
	rows, err := s.q.ListManagedPages(ctx, coredb.ListManagedPagesParams{AppID: aid, UserID: uid, AfterID: afterID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list managed pages: %w", err)
	}
	out := make([]ManagedPage, 0, len(rows))
	for _, r := range rows {
		out = append(out, ManagedPage{Page: pageFrom(coredb.CorePage{ID: r.ID, Name: r.Name, Category: r.Category,
			Published: r.Published, ChatSurfacing: r.ChatSurfacing, InboxAutomation: r.InboxAutomation,
			AssistantLabel: r.AssistantLabel, InboxMergeLinked: r.InboxMergeLinked, HandoverTimeout: r.HandoverTimeout}),
			Role: PageRole(r.Role)})
	}
	return out, nil
}

// PageFacts is everything authorization needs to know about one Page for
// one caller (a user, an app, or both).
type PageFacts struct {
	// Exists is false when there is no such Page; the other fields are then zero.
	Exists bool
	// UserRole is the user's role: PAGE_ROLE_OWNER, PAGE_ROLE_ADMIN,
	// PAGE_ROLE_EDITOR, or UNSPECIFIED when the user has none (or no user
	// was given).
	UserRole pluginv1.PageRole
	// AppLinked: the app is linked to the Page (a business asset of type PAGE).
	AppLinked bool
	// LinkProducts are the products enabled on the link that the app has
	// enabled too.
	LinkProducts []string
	// AppProducts are the products the app has enabled, linked or not.
	AppProducts      []string
	Published        bool
	ChatSurfacing    bool
	InboxAutomation  bool
	InboxMergeLinked bool
	// Name and AssistantLabel attribute the built-in assistant's replies.
	Name           string
	AssistantLabel string
	// HandoverTimeout is svcchat's default expires_in, seconds; 0: none.
	HandoverTimeout int32
}

// UserManages reports whether the user owns or administers the Page.
func (f PageFacts) UserManages() bool {
	return f.UserRole == pluginv1.PageRole_PAGE_ROLE_ADMIN || f.UserRole == pluginv1.PageRole_PAGE_ROLE_OWNER
}

// UserHasRole reports whether the user has any role on the Page: owner,
// admin or editor.
func (f PageFacts) UserHasRole() bool {
	return f.UserManages() || f.UserRole == pluginv1.PageRole_PAGE_ROLE_EDITOR
}

// Proto is the facts' wire form, for the plugin protocol only: the facts
// sent with a call on the Page (InvokeRequest.page_access) and the answer
// of the host service's PageAccess.
func (f PageFacts) Proto() *pluginv1.PageAccessResponse {
	return &pluginv1.PageAccessResponse{PageExists: f.Exists, UserRole: f.UserRole, AppLinked: f.AppLinked,
		AppProducts: f.LinkProducts, Published: f.Published, ChatSurfacing: f.ChatSurfacing,
		PageName: f.Name, InboxAutomation: f.InboxAutomation, AssistantLabel: f.AssistantLabel,
		InboxMergeLinked: f.InboxMergeLinked, HandoverTimeout: f.HandoverTimeout}
}

// PageFacts reads what userID and appID (either may be "") may do on pageID,
// in one query: with both, as a token of the app for the user, so within
// the Pages the user chose for the app.
func (s *Pages) PageFacts(ctx context.Context, pageID, userID, appID string) (PageFacts, error) {
	pid, ok := ParseID(pageID)
	if !ok {
		return PageFacts{}, nil
	}
	uid, _ := ParseID(userID) // 0 matches no row
	aid, _ := ParseID(appID)
	row, err := s.q.PageAccess(ctx, coredb.PageAccessParams{PageID: pid, UserID: uid, AppID: aid})
	if errors.Is(err, pgx.ErrNoRows) {
		return PageFacts{}, nil
	}
	if err != nil {
		return PageFacts{}, fmt.Errorf("page access %s: %w", pageID, err)
	}
	f := PageFacts{Exists: true, AppLinked: row.AppLinked, AppProducts: row.AppProducts, Published: row.Published,
		ChatSurfacing: row.ChatSurfacing, InboxAutomation: row.InboxAutomation, InboxMergeLinked: row.InboxMergeLinked,
		Name: row.Name, AssistantLabel: row.AssistantLabel}
	if row.HandoverTimeout != nil {
		f.HandoverTimeout = *row.HandoverTimeout
	}
	switch PageRole(row.UserRole) {
	case RoleOwner:
		f.UserRole = pluginv1.PageRole_PAGE_ROLE_OWNER
	case RoleAdmin:
		f.UserRole = pluginv1.PageRole_PAGE_ROLE_ADMIN
	case RoleEditor:
		f.UserRole = pluginv1.PageRole_PAGE_ROLE_EDITOR
	}
	for _, p := range row.LinkProducts {
		if slices.Contains(row.AppProducts, p) {
			f.LinkProducts = append(f.LinkProducts, p)
		}
	}
	if !row.Chosen {
		// The user chose other Pages for the app (granular consent): a
		// token of the two reaches this Page neither by the user's role nor
		// by the app's link, also where a plugin asks about a Page it read
		// from an object (a post) rather than from the request.
		f.UserRole, f.AppLinked, f.LinkProducts = pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED, false, nil
	}
	return f, nil
}
