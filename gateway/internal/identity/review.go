package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/svcplatform/svc/gateway/internal/coredb"
)

// AutoReviewMinScore is the automated review score at or above which a
// basic scope (public_profile, pages:read) is approved.
const AutoReviewMinScore = 85

// ReviewStatus is the state of one scope's App Review.
type ReviewStatus string

// Review states: pending (waiting for staff), approved, rejected.
const (
	ReviewPending  ReviewStatus = "pending"
	ReviewApproved ReviewStatus = "approved"
	ReviewRejected ReviewStatus = "rejected"
)

// ScopeReview is the App Review of one scope of one app.
type ScopeReview struct {
	AppID  string
	Scope  string
	Status ReviewStatus
	// Score is the automated review's score, for basic scopes.
	Score       *int
	ReviewerID  string
	Reason      string
	SubmittedAt time.Time
	DecidedAt   time.Time
}

func reviewFrom(r coredb.CoreAppScopeReview) ScopeReview {
	out := ScopeReview{AppID: FormatID(r.AppID), Scope: r.Scope, Status: ReviewStatus(r.Status), Reason: r.Reason,
		SubmittedAt: r.SubmittedAt.Time, DecidedAt: r.DecidedAt.Time}
	if r.Score != nil {
		s := int(*r.Score)
		out.Score = &s
	}
	if r.ReviewerID != nil {
		out.ReviewerID = FormatID(*r.ReviewerID)
	}
	return out
}

// SubmitForReview asks App Review for scopes. Basic scopes are decided at
// once by the automated review: approved at score AutoReviewMinScore or
// more, rejected below. The others (svcchat:send, svcchat:read,
// pages:manage, wearables:push) wait in the staff queue. A scope already
// approved stays approved; openid needs no review and is skipped.
func (s *Service) SubmitForReview(ctx context.Context, appID string, scopes []string, score int) ([]ScopeReview, error) {
	aid, err := mustID("app", appID)
	if err != nil {
		return nil, err
	}
	for _, sc := range scopes {
		if !KnownScope(sc) {
			return nil, fmt.Errorf("scope %q: %w", sc, ErrInvalid)
		}
	}
	if score < 0 || score > 100 {
		return nil, fmt.Errorf("review score %d is not within 0..100: %w", score, ErrInvalid)
	}
	var out []ScopeReview
	err = s.InTx(ctx, func(s *Service) error {
		if _, err := s.q.GetApp(ctx, aid); err != nil {
			return notFound(err, "app "+appID)
		}
		for _, sc := range scopes {
			if sc == ScopeOpenID {
				continue
			}
			p := coredb.SubmitScopeReviewParams{AppID: aid, Scope: sc, Status: string(ReviewPending)}
			if BasicScope(sc) {
				sc32 := int32(score)
				p.Score = &sc32
				p.DecidedAt = pgtype.Timestamptz{Time: time.Now(), Valid: true}
				p.Status = string(ReviewApproved)
				if score < AutoReviewMinScore {
					p.Status = string(ReviewRejected)
					p.Reason = fmt.Sprintf("automated review score %d is below %d", score, AutoReviewMinScore)
				}
			}
			r, err := s.q.SubmitScopeReview(ctx, p)
			if errors.Is(err, pgx.ErrNoRows) { // already approved: unchanged
				r, err = s.q.GetScopeReview(ctx, coredb.GetScopeReviewParams{AppID: aid, Scope: sc})
			}
			if err != nil {
				return fmt.Errorf("submit review of %s: %w", sc, err)
			}
			out = append(out, reviewFrom(r))
		}
		return nil
	})
	return out, err
}

// ApproveScope is a staff approval of one pending scope review.
func (s *Service) ApproveScope(ctx context.Context, staffUserID, appID, scope string) (ScopeReview, error) {
	return s.decide(ctx, staffUserID, appID, scope, ReviewApproved, "")
}

// RejectScope is a staff rejection of one pending scope review, with a reason.
func (s *Service) RejectScope(ctx context.Context, staffUserID, appID, scope, reason string) (ScopeReview, error) {
	return s.decide(ctx, staffUserID, appID, scope, ReviewRejected, reason)
}

func (s *Service) decide(ctx context.Context, staffUserID, appID, scope string, status ReviewStatus, reason string) (ScopeReview, error) {
	staff, err := s.requireStaff(ctx, staffUserID)
	if err != nil {
		return ScopeReview{}, err
	}
	aid, err := mustID("app", appID)
	if err != nil {
		return ScopeReview{}, err
	}
	r, err := s.q.DecideScopeReview(ctx, coredb.DecideScopeReviewParams{AppID: aid, Scope: scope,
		Status: string(status), ReviewerID: &staff, Reason: reason})
	if err != nil {
		return ScopeReview{}, notFound(err, "pending review of "+scope)
	}
	return reviewFrom(r), nil
}

// ScopeReviews lists the app's reviews, by scope.
func (s *Service) ScopeReviews(ctx context.Context, appID string) ([]ScopeReview, error) {
	aid, err := mustID("app", appID)
	if err != nil {
		return nil, err
	}
	rows, err := s.q.ListScopeReviews(ctx, aid)
	if err != nil {
		return nil, fmt.Errorf("list reviews: %w", err)
	}
	out := make([]ScopeReview, 0, len(rows))
	for _, r := range rows {
		out = append(out, reviewFrom(r))
	}
	return out, nil
}

// PendingScopeReviews is the staff queue: every pending review, oldest first.
func (s *Service) PendingScopeReviews(ctx context.Context, staffUserID string) ([]ScopeReview, error) {
	if _, err := s.requireStaff(ctx, staffUserID); err != nil {
		return nil, err
	}
	rows, err := s.q.ListPendingScopeReviews(ctx)
	if err != nil {
		return nil, fmt.Errorf("list pending reviews: %w", err)
	}
	out := make([]ScopeReview, 0, len(rows))
	for _, r := range rows {
		out = append(out, reviewFrom(r))
	}
	return out, nil
}

// GoLive switches the app to live mode. App Review must have approved at
// least one scope; from then on the app can be granted approved scopes only
// and new app keys are svc_live_ keys.
func (s *Service) GoLive(ctx context.Context, appID string) error {
	aid, err := mustID("app", appID)
	if err != nil {
		return err
	}
	return s.InTx(ctx, func(s *Service) error {
		approved, err := s.q.ApprovedScopes(ctx, aid)
		if err != nil {
			return fmt.Errorf("approved scopes: %w", err)
		}
		if len(approved) == 0 {
			return fmt.Errorf("app %s: %w", appID, ErrReviewRequired)
		}
		n, err := s.q.SetAppMode(ctx, coredb.SetAppModeParams{ID: aid, Mode: string(ModeLive)})
		if err != nil {
			return fmt.Errorf("set app mode: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("app %s: %w", appID, ErrNotFound)
		}
		return nil
	})
}
