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

// Page roles. The owner also counts as an admin wherever admin is required.
const (
	RoleOwner PageRole = "owner"
	RoleAdmin PageRole = "admin"
)

// Page is a business presence owned by a user.
type Page struct {
	ID               string
	Name             string
	Published        bool
	ChatSurfacing    bool
	InboxAutomation  bool
	AssistantLabel   string
	InboxMergeLinked bool
	// HandoverTimeout is svcchat's default expires_in, seconds; 0: none.
	HandoverTimeout int32
}

func pageFrom(p coredb.CorePage) Page {
	out := Page{ID: FormatID(p.ID), Name: p.Name, Published: p.Published, ChatSurfacing: p.ChatSurfacing,
		InboxAutomation: p.InboxAutomation, AssistantLabel: p.AssistantLabel, InboxMergeLinked: p.InboxMergeLinked}
	if p.HandoverTimeout != nil {
		out.HandoverTimeout = *p.HandoverTimeout
	}
	return out
}

// NewPage describes a Page to create; OwnerID becomes its owner.
type NewPage struct {
	Name             string
	OwnerID          string
	Published        bool
	ChatSurfacing    bool
	InboxAutomation  bool
	AssistantLabel   string // default "Assistant"
	InboxMergeLinked bool
}

// CreatePage creates a Page and makes OwnerID its owner, in one transaction.
func (s *Pages) CreatePage(ctx context.Context, n NewPage) (Page, error) {
	owner, err := mustID("user", n.OwnerID)
	if err != nil {
		return Page{}, err
	}
	if n.Name == "" {
		return Page{}, fmt.Errorf("page name is empty: %w", ErrInvalid)
	}
	if n.AssistantLabel == "" {
		n.AssistantLabel = "Assistant"
	}
	var page Page
	err = s.InTx(ctx, func(s *Service) error {
		p, err := s.q.CreatePage(ctx, coredb.CreatePageParams{Name: n.Name, Published: n.Published,
			ChatSurfacing: n.ChatSurfacing, InboxAutomation: n.InboxAutomation,
			AssistantLabel: n.AssistantLabel, InboxMergeLinked: n.InboxMergeLinked})
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

// SetPageRole gives a user a role on a Page.
func (s *Pages) SetPageRole(ctx context.Context, pageID, userID string, role PageRole) error {
	if role != RoleOwner && role != RoleAdmin {
		return fmt.Errorf("page role %q: %w", role, ErrInvalid)
	}
	pid, err := mustID("page", pageID)
	if err != nil {
		return err
	}
	uid, err := mustID("user", userID)
	if err != nil {
		return err
	}
	if err := s.q.UpsertPageRole(ctx, coredb.UpsertPageRoleParams{PageID: pid, UserID: uid, Role: string(role)}); err != nil {
		return notFound(err, "page role")
	}
	return nil
}

// RemovePageRole takes a user's role on a Page away.
func (s *Pages) RemovePageRole(ctx context.Context, pageID, userID string) error {
	pid, err := mustID("page", pageID)
	if err != nil {
		return err
	}
	uid, err := mustID("user", userID)
	if err != nil {
		return err
	}
	if _, err := s.q.DeletePageRole(ctx, coredb.DeletePageRoleParams{PageID: pid, UserID: uid}); err != nil {
		return fmt.Errorf("remove page role: %w", err)
	}
	return nil
}

// ManagedPage is a Page with the user's role on it.
type ManagedPage struct {
	Page
	Role PageRole
}

// ManagedPages lists the Pages the user owns or administers, in id order,
// at most limit of them after the Page id after ("" for the first page).
func (s *Pages) ManagedPages(ctx context.Context, userID, after string, limit int) ([]ManagedPage, error) {
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
	rows, err := s.q.ListManagedPages(ctx, coredb.ListManagedPagesParams{UserID: uid, AfterID: afterID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list managed pages: %w", err)
	}
	out := make([]ManagedPage, 0, len(rows))
	for _, r := range rows {
		out = append(out, ManagedPage{Page: pageFrom(coredb.CorePage{ID: r.ID, Name: r.Name, Published: r.Published,
			ChatSurfacing: r.ChatSurfacing, InboxAutomation: r.InboxAutomation, AssistantLabel: r.AssistantLabel,
			InboxMergeLinked: r.InboxMergeLinked}), Role: PageRole(r.Role)})
	}
	return out, nil
}

// PageFacts is everything authorization needs to know about one Page for
// one caller (a user, an app, or both).
type PageFacts struct {
	// Exists is false when there is no such Page; the other fields are then zero.
	Exists bool
	// UserRole is the user's role: PAGE_ROLE_OWNER, PAGE_ROLE_ADMIN, or
	// UNSPECIFIED when the user has none (or no user was given).
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
// in one query.
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
	}
	for _, p := range row.LinkProducts {
		if slices.Contains(row.AppProducts, p) {
			f.LinkProducts = append(f.LinkProducts, p)
		}
	}
	return f, nil
}
