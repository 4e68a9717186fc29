package identity

import (
	"context"
	"fmt"
	"slices"

	"github.com/svcplatform/svc/gateway/internal/coredb"
)

// Granular consent (CONTRACT §17): when an app asks for a Page scope, the
// person chooses which of their Pages it may act on. The choice lives on
// the consent (core.oauth_consents.page_ids), so every token of the app
// follows it, also when the person changes it later; the authenticator
// reads it with the token (LookupCredential) and auth's Page rule
// enforces it.

// MaxChoosablePages bounds the Pages the consent page lists and a choice
// holds: a person creates at most 50 Pages, and holds roles on few more.
const MaxChoosablePages = 1000

// FormatIDs writes database ids as clients see them.
func FormatIDs(ids []int64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = FormatID(id)
	}
	return out
}

// ManagedPagesFor is ManagedPages as a user access token of appID sees
// them: only the Pages the person chose for the app, when a choice was
// made. appID "" (a session) sees every Page.
func (s *Pages) ManagedPagesFor(ctx context.Context, userID, appID, after string, limit int) ([]ManagedPage, error) {
	var aid int64
	if appID != "" {
		var err error
		if aid, err = mustID("app", appID); err != nil {
			return nil, err
		}
	}
	return s.managedPages(ctx, userID, aid, after, limit)
}

// ChoosablePages are the Pages the user holds a role on, which the consent
// page offers, in id order.
func (s *Pages) ChoosablePages(ctx context.Context, userID string) ([]ManagedPage, error) {
	return s.managedPages(ctx, userID, 0, "", MaxChoosablePages)
}

// Choose keeps, of the ids a person sent, those of Pages they may choose,
// sorted and without repeats; it reports the first id that is not one.
// Every Page chosen is no limit at all (nil, as Meta's "all current and
// future Pages"): a Page the person makes later is the app's too; any
// other choice is an explicit list, empty for none.
func Choose(choosable []ManagedPage, sent []string) (chosen []int64, bad string) {
	for _, id := range sent {
		i := slices.IndexFunc(choosable, func(p ManagedPage) bool { return p.ID == id })
		if i < 0 {
			if bad == "" {
				bad = id
			}
			continue
		}
		n, _ := ParseID(id)
		chosen = append(chosen, n)
	}
	slices.Sort(chosen)
	chosen = slices.Compact(chosen)
	if len(chosen) == len(choosable) {
		return nil, bad
	}
	if chosen == nil {
		chosen = []int64{}
	}
	return chosen, bad
}

// ChoosePages changes the Pages the user chose for an app they authorized,
// without revoking anything: the app's tokens act on those Pages from then
// on (every Page: no limit, see Choose). An app the user has not authorized is ErrNotFound; an id that names
// no Page the user holds a role on is ErrInvalid. The caller makes the
// authenticator forget the user's cached credentials.
func (s *Users) ChoosePages(ctx context.Context, userID, appID string, pageIDs []string) error {
	uid, err := mustID("user", userID)
	if err != nil {
		return err
	}
	aid, err := mustID("app", appID)
	if err != nil {
		return err
	}
	apps, err := s.AuthorizedApps(ctx, userID)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(apps, func(a AuthorizedApp) bool { return a.AppID == appID }) {
		return fmt.Errorf("authorized app %s: %w", appID, ErrNotFound)
	}
	choosable, err := (&Pages{store: s.store}).ChoosablePages(ctx, userID)
	if err != nil {
		return err
	}
	chosen, bad := Choose(choosable, pageIDs)
	if bad != "" {
		return fmt.Errorf("page_ids: %q is not a Page you have a role on: %w", bad, ErrInvalid)
	}
	if err := s.q.ChooseConsentPages(ctx, coredb.ChooseConsentPagesParams{UserID: uid, AppID: aid, PageIds: chosen}); err != nil {
		return fmt.Errorf("choose pages: %w", err)
	}
	return nil
}
