package identity

import (
	"context"
	"fmt"
	"time"

	"github.com/svcplatform/svc/gateway/internal/coredb"
)

// A person's control over their data (CONTRACT §16): the apps they
// authorized, and removing one.

// AuthorizedApp is an app a user authorized: a remembered consent or a
// grant not revoked.
type AuthorizedApp struct {
	AppID string
	Name  string
	// Scopes is every scope granted, sorted.
	Scopes []string
	// GrantedAt is when the user last granted the app a scope.
	GrantedAt time.Time
	// Pages are the Pages the user chose for the app (granular consent);
	// nil when no choice was made.
	Pages []string
}

// AuthorizedApps lists the apps the user authorized, the latest granted
// first.
func (s *Users) AuthorizedApps(ctx context.Context, userID string) ([]AuthorizedApp, error) {
	uid, err := mustID("user", userID)
	if err != nil {
		return nil, err
	}
	rows, err := s.q.ListAuthorizedApps(ctx, uid)
	if err != nil {
		return nil, fmt.Errorf("list authorized apps: %w", err)
	}
	out := make([]AuthorizedApp, 0, len(rows))
	for _, r := range rows {
		a := AuthorizedApp{AppID: FormatID(r.ID), Name: r.Name, Scopes: r.Scopes, GrantedAt: r.GrantedAt.Time}
		if r.PagesChosen {
			a.Pages = FormatIDs(r.PageIds)
		}
		out = append(out, a)
	}
	return out, nil
}

// RemoveAuthorizedApp revokes, in one transaction, the user's consent to
// the app, every grant of the user to it, and the grants' access and
// refresh tokens; codes not yet redeemed die with their grants; and, in the
// same transaction, it starts the app's data deletion callback when the app
// names one (a core.data_deletion_requests row the webhook sender claims).
// It answers
// the hashes of the access tokens revoked, for the authenticator's cache
// (auth.Authenticator.Forget). An app the user has not authorized (or no
// such app) is ErrNotFound.
func (s *Users) RemoveAuthorizedApp(ctx context.Context, userID, appID string) (revoked [][]byte, err error) {
	uid, err := mustID("user", userID)
	if err != nil {
		return nil, err
	}
	aid, err := mustID("app", appID)
	if err != nil {
		return nil, err
	}
	err = s.InTx(ctx, func(tx *Service) error {
		q := tx.q
		consents, err := q.DeleteConsent(ctx, coredb.DeleteConsentParams{UserID: uid, AppID: aid})
		if err != nil {
			return fmt.Errorf("delete consent: %w", err)
		}
		grants, err := q.RevokeUserAppGrants(ctx, coredb.RevokeUserAppGrantsParams{UserID: &uid, AppID: aid})
		if err != nil {
			return fmt.Errorf("revoke grants: %w", err)
		}
		if consents == 0 && len(grants) == 0 {
			return fmt.Errorf("authorized app %s: %w", appID, ErrNotFound)
		}
		if revoked, err = q.RevokeGrantsCredentials(ctx, grants); err != nil {
			return fmt.Errorf("revoke tokens: %w", err)
		}
		if _, err := q.RevokeGrantsRefreshTokens(ctx, grants); err != nil {
			return fmt.Errorf("revoke refresh tokens: %w", err)
		}
		if _, err := q.RequestDataDeletion(ctx, coredb.RequestDataDeletionParams{UserID: uid, AppIds: []int64{aid}}); err != nil {
			return fmt.Errorf("request data deletion: %w", err)
		}
		return nil
	})
	return revoked, err
}

// DataDeletionRequest is one data deletion callback made for a user.
type DataDeletionRequest struct {
	AppID            string
	Status           string
	ConfirmationCode string
	URL              string
	RequestedAt      time.Time
}

// DataDeletionRequests lists the callbacks made for the user, newest
// first, at most 100.
func (s *Users) DataDeletionRequests(ctx context.Context, userID string) ([]DataDeletionRequest, error) {
	uid, err := mustID("user", userID)
	if err != nil {
		return nil, err
	}
	rows, err := s.q.ListDataDeletionRequests(ctx, uid)
	if err != nil {
		return nil, fmt.Errorf("list data deletion requests: %w", err)
	}
	out := make([]DataDeletionRequest, 0, len(rows))
	for _, r := range rows {
		out = append(out, DataDeletionRequest{AppID: FormatID(r.AppID), Status: r.Status,
			ConfirmationCode: r.ConfirmationCode, URL: r.Url, RequestedAt: r.RequestedAt.Time})
	}
	return out, nil
}

// SetDataDeletionCallbackURL sets the app's data deletion callback URL
// ("" removes it). The caller has checked the address
// (webhook.Service.CheckDeletionCallbackURL).
func (s *Apps) SetDataDeletionCallbackURL(ctx context.Context, appID, url string) error {
	aid, err := mustID("app", appID)
	if err != nil {
		return err
	}
	if _, err := s.App(ctx, appID); err != nil {
		return err
	}
	if url == "" {
		err = s.q.DeleteDataDeletionCallbackURL(ctx, aid)
	} else {
		err = s.q.SetDataDeletionCallbackURL(ctx, coredb.SetDataDeletionCallbackURLParams{AppID: aid, Url: url})
	}
	if err != nil {
		return fmt.Errorf("set data deletion callback url: %w", err)
	}
	return nil
}

// Left is what leaving did that others must know of.
type Left struct {
	// Revoked are the hashes of the credentials that died with the user,
	// for the authenticator's cache (auth.Authenticator.Forget).
	Revoked [][]byte
	// UnpublishedPages are the Pages the user alone owned, now
	// unpublished (their caches must forget them).
	UnpublishedPages []string
	// Deletions counts the data deletion callbacks started.
	Deletions int64
}

// Leave deletes the user (CONTRACT §16), in one transaction: every
// session, token, grant, code and consent of the user goes with the users
// row (ON DELETE CASCADE), so that signing in again fails as for an
// unknown user; the Pages they alone own are unpublished; a business they
// alone administer stays, its employee of longest standing becoming its
// admin (PromoteHeirsOfLeavingAdmin); each app they
// authorized gets a data deletion request; and each plugin named in
// plugins (those declaring the user-left hook) gets a job to erase the
// user's data, which the gateway runs after.
func (s *Users) Leave(ctx context.Context, userID string, plugins []string) (Left, error) {
	uid, err := mustID("user", userID)
	if err != nil {
		return Left{}, err
	}
	var left Left
	err = s.InTx(ctx, func(tx *Service) error {
		q := tx.q
		revoked, err := q.LeavingUserCredentials(ctx, &uid)
		if err != nil {
			return fmt.Errorf("list credentials: %w", err)
		}
		apps, err := q.LeavingUserApps(ctx, uid)
		if err != nil {
			return fmt.Errorf("list authorized apps: %w", err)
		}
		pages, err := q.UnpublishSolelyOwnedPages(ctx, uid)
		if err != nil {
			return fmt.Errorf("unpublish pages: %w", err)
		}
		if _, err := q.PromoteHeirsOfLeavingAdmin(ctx, uid); err != nil {
			return fmt.Errorf("promote business heirs: %w", err)
		}
		deletions, err := q.RequestDataDeletion(ctx, coredb.RequestDataDeletionParams{UserID: uid, AppIds: apps})
		if err != nil {
			return fmt.Errorf("request data deletion: %w", err)
		}
		if len(plugins) > 0 {
			if _, err := q.StartUserLeftJobs(ctx, coredb.StartUserLeftJobsParams{Plugins: plugins, UserID: uid}); err != nil {
				return fmt.Errorf("start user-left jobs: %w", err)
			}
		}
		n, err := q.DeleteUser(ctx, uid)
		if err != nil {
			return fmt.Errorf("delete user: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("user %s: %w", userID, ErrNotFound)
		}
		left = Left{Revoked: revoked, Deletions: deletions}
		for _, p := range pages {
			left.UnpublishedPages = append(left.UnpublishedPages, FormatID(p))
		}
		return nil
	})
	return left, err
}
