package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// Review states (CONTRACT §4): not submitted; approved by the automated
// review (basic scopes at score AutoReviewMinScore or more); pending (waiting
// for staff); approved by staff; rejected (by staff, or by the automated
// review below the score).
const (
	ReviewNotSubmitted      ReviewStatus = "not_submitted"
	ReviewAutomatedApproved ReviewStatus = "automated_approved"
	ReviewPending           ReviewStatus = "pending"
	ReviewApproved          ReviewStatus = "approved"
	ReviewRejected          ReviewStatus = "rejected"
)

// Approved reports whether the scope may be granted to a live app.
func (r ReviewStatus) Approved() bool { return r == ReviewApproved || r == ReviewAutomatedApproved }

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
	// UseCase and PrivacyPolicyURL are the submission, for staff.
	UseCase          string
	PrivacyPolicyURL string
	// AppName is set in the staff queue.
	AppName string
}

func reviewFrom(r coredb.CoreAppScopeReview) ScopeReview {
	out := ScopeReview{AppID: FormatID(r.AppID), Scope: r.Scope, Status: ReviewStatus(r.Status), Reason: r.Reason,
		SubmittedAt: r.SubmittedAt.Time, DecidedAt: r.DecidedAt.Time, UseCase: r.UseCase, PrivacyPolicyURL: r.PrivacyPolicyUrl}
	if r.Score != nil {
		s := int(*r.Score)
		out.Score = &s
	}
	if r.ReviewerID != nil {
		out.ReviewerID = FormatID(*r.ReviewerID)
	}
	return out
}

// SubmitForReview asks App Review for scopes with an automated review
// score already computed (SubmitReview computes it from a submission).
// Basic scopes are decided at once by the automated review: approved at
// score AutoReviewMinScore or more, rejected below. The others
// (svcchat:send, svcchat:read, pages:manage, wearables:push) wait in the
// staff queue. A scope already approved stays approved; openid needs no
// review and is skipped.
func (s *Review) SubmitForReview(ctx context.Context, appID string, scopes []string, score int) ([]ScopeReview, error) {
	return s.submitForReview(ctx, appID, scopes, score, ReviewSubmission{})
}

func (s *store) submitForReview(ctx context.Context, appID string, scopes []string, score int, sub ReviewSubmission) ([]ScopeReview, error) {
	aid, err := mustID("app", appID)
	if err != nil {
		return nil, err
	}
	catalog, err := s.Scopes(ctx)
	if err != nil {
		return nil, err
	}
	for _, sc := range scopes {
		if !catalog.Known(sc) {
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
			p := coredb.SubmitScopeReviewParams{AppID: aid, Scope: sc, Status: string(ReviewPending),
				UseCase: sub.UseCase, PrivacyPolicyUrl: sub.PrivacyPolicyURL}
			if catalog.Basic(sc) {
				sc32 := int32(score)
				p.Score = &sc32
				p.DecidedAt = pgtype.Timestamptz{Time: s.now(), Valid: true}
				p.Status = string(ReviewAutomatedApproved)
				if score < AutoReviewMinScore {
					p.Status = string(ReviewRejected)
					p.Reason = fmt.Sprintf("automated review score %d is below %d", score, AutoReviewMinScore)
					if len(sub.shortfalls) > 0 {
						p.Reason += ": " + strings.Join(sub.shortfalls, "; ")
					}
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
func (s *Review) ApproveScope(ctx context.Context, staffUserID, appID, scope string) (ScopeReview, error) {
	return s.decide(ctx, staffUserID, appID, scope, ReviewApproved, "")
}

// RejectScope is a staff rejection of one pending scope review, with a reason.
func (s *Review) RejectScope(ctx context.Context, staffUserID, appID, scope, reason string) (ScopeReview, error) {
	return s.decide(ctx, staffUserID, appID, scope, ReviewRejected, reason)
}

func (s *store) decide(ctx context.Context, staffUserID, appID, scope string, status ReviewStatus, reason string) (ScopeReview, error) {
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
	if errors.Is(err, pgx.ErrNoRows) {
		// Either there is no review of the scope, or it is decided already.
		if _, gerr := s.q.GetScopeReview(ctx, coredb.GetScopeReviewParams{AppID: aid, Scope: scope}); gerr == nil {
			return ScopeReview{}, fmt.Errorf("review of %s for app %s: %w", scope, appID, ErrNotPending)
		}
		return ScopeReview{}, fmt.Errorf("review of %s for app %s: %w", scope, appID, ErrNotFound)
	}
	if err != nil {
		return ScopeReview{}, fmt.Errorf("decide review: %w", err)
	}
	return reviewFrom(r), nil
}

// ScopeReviews lists the app's reviews, by scope.
func (s *Review) ScopeReviews(ctx context.Context, appID string) ([]ScopeReview, error) {
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
func (s *Review) PendingScopeReviews(ctx context.Context, staffUserID string) ([]ScopeReview, error) {
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

// WentLive is the answer to going live: the svc_live_ key, shown once, and
// the hashes of the svc_test_ keys revoked, for the authenticator's cache.
type WentLive struct {
	APIKey      string
	RevokedKeys [][]byte
}

// GoLive switches the app to live mode. Every scope the app uses must be
// approved by App Review (ErrReviewRequired otherwise, naming them): the
// scopes users have granted it and not revoked, and the scopes submitted
// for review and not rejected; and at least one scope must be approved.
// From then on the app can be granted approved scopes only. Its svc_test_
// keys stop working at once (development and live credentials are kept
// apart, as Meta and Stripe do) and a svc_live_ key is issued, returned
// once. Its data use checkup is due a year later. An app already live is
// ErrInvalid.
func (s *Review) GoLive(ctx context.Context, appID string) (WentLive, error) {
	var out WentLive
	err := s.InTx(ctx, func(s *Service) error {
		aid, err := s.lockApp(ctx, appID)
		if err != nil {
			return err
		}
		app, err := s.Apps.App(ctx, appID)
		if err != nil {
			return err
		}
		if app.Live() {
			return fmt.Errorf("app %s is live already: %w", appID, ErrInvalid)
		}
		missing, approved, err := s.scopesAwaitingReview(ctx, aid)
		if err != nil {
			return err
		}
		if len(approved) == 0 {
			return fmt.Errorf("App Review has approved no scope of app %s yet: %w", appID, ErrReviewRequired)
		}
		if len(missing) > 0 {
			return fmt.Errorf("App Review has not approved %s, which app %s uses: %w", strings.Join(missing, ", "), appID, ErrReviewRequired)
		}
		if _, err := s.q.SetAppMode(ctx, coredb.SetAppModeParams{ID: aid, Mode: string(ModeLive)}); err != nil {
			return fmt.Errorf("set app mode: %w", err)
		}
		if err := s.scheduleCheckup(ctx, aid); err != nil {
			return err
		}
		if out.RevokedKeys, err = s.q.RevokeTestKeys(ctx, &aid); err != nil {
			return fmt.Errorf("revoke test keys: %w", err)
		}
		out.APIKey, err = s.Apps.CreateAppKey(ctx, appID)
		return err
	})
	return out, err
}

// scopesAwaitingReview returns the scopes the app uses that App Review has
// not approved, and the approved ones.
func (s *store) scopesAwaitingReview(ctx context.Context, aid int64) (missing, approved []string, err error) {
	reviews, err := s.q.ListScopeReviews(ctx, aid)
	if err != nil {
		return nil, nil, fmt.Errorf("list reviews: %w", err)
	}
	granted, err := s.q.GrantedScopes(ctx, aid)
	if err != nil {
		return nil, nil, fmt.Errorf("granted scopes: %w", err)
	}
	status := map[string]ReviewStatus{}
	for _, r := range reviews {
		status[r.Scope] = ReviewStatus(r.Status)
		if ReviewStatus(r.Status).Approved() {
			approved = append(approved, r.Scope)
		}
	}
	used := map[string]bool{}
	for _, r := range reviews {
		if ReviewStatus(r.Status) != ReviewRejected {
			used[r.Scope] = true
		}
	}
	for _, g := range granted {
		used[g] = true
	}
	catalog, err := s.Scopes(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, sc := range catalog.All() {
		if used[sc] && sc != ScopeOpenID && !status[sc].Approved() {
			missing = append(missing, sc)
		}
	}
	return missing, approved, nil
}
