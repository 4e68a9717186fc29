package identity

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ReviewSubmission is what a developer sends to App Review.
type ReviewSubmission struct {
	Scopes []string
	// UseCase says, in the developer's words, what the app does with the
	// data the scopes give it.
	UseCase string
	// PrivacyPolicyURL is where the app's privacy policy is published.
	PrivacyPolicyURL string

	shortfalls []string
}

// Points of the automated review score; they add up to 100. See
// ReviewScore and docs/design/identity.md.
const (
	pointsPrivacyPolicy = 25
	pointsLongUseCase   = 35 // 200 code points or more
	pointsUseCase       = 25 // 100 to 199
	pointsShortUseCase  = 10 // 40 to 99
	pointsNamesData     = 20
	pointsSubstance     = 20
)

// scopeTerms are the words a use case mentions when it says what it does
// with a basic scope's data.
var scopeTerms = map[string][]string{
	ScopePublicProfile: {"name", "profile"},
	ScopePagesRead:     {"page"},
}

// ReviewScore is the automated review's score of a submission, 0 to 100,
// and in plain words what kept it from 100. It reads only the submission:
//
//   - 25 for a privacy policy URL that is an absolute https URL;
//   - for the use case's length in code points, trimmed: 35 from 200, 25
//     from 100, 10 from 40, else 0;
//   - 20 when the use case says what the app does with the data of every
//     basic scope asked for (it mentions "name" or "profile" for
//     public_profile, "page" for pages:read);
//   - 20 when it has substance: at least 12 distinct words of three letters
//     or more, and at least half of its words distinct.
//
// So a submission passes (AutoReviewMinScore, 85) only with a privacy
// policy, a use case of 100 code points or more that names the data it
// uses, and text that does not repeat itself.
func ReviewScore(sub ReviewSubmission) (int, []string) {
	var score int
	var short []string
	if u, err := url.Parse(strings.TrimSpace(sub.PrivacyPolicyURL)); err == nil && u.Scheme == "https" && u.Host != "" {
		score += pointsPrivacyPolicy
	} else {
		short = append(short, "no privacy policy URL (an absolute https URL)")
	}
	text := strings.TrimSpace(sub.UseCase)
	switch n := utf8.RuneCountInString(text); {
	case n >= 200:
		score += pointsLongUseCase
	case n >= 100:
		score += pointsUseCase
	case n >= 40:
		score += pointsShortUseCase
		short = append(short, "the use case is shorter than 100 characters")
	default:
		short = append(short, "the use case is shorter than 40 characters")
	}
	lower := strings.ToLower(text)
	var unnamed []string
	for _, sc := range sub.Scopes {
		terms, ok := scopeTerms[sc]
		if !ok {
			continue
		}
		named := false
		for _, t := range terms {
			named = named || strings.Contains(lower, t)
		}
		if !named {
			unnamed = append(unnamed, sc)
		}
	}
	if len(unnamed) == 0 {
		score += pointsNamesData
	} else {
		short = append(short, "the use case does not say what the app does with the data of "+strings.Join(unnamed, ", "))
	}
	words := strings.FieldsFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	distinct := map[string]bool{}
	long := 0
	for _, w := range words {
		if utf8.RuneCountInString(w) >= 3 {
			distinct[w] = true
			long++
		}
	}
	if len(distinct) >= 12 && 2*len(distinct) >= long {
		score += pointsSubstance
	} else {
		short = append(short, "the use case has too few distinct words or repeats itself")
	}
	return score, short
}

// maxUseCase bounds a use case, in code points.
const maxUseCase = 5000

// SubmitReview submits scopes to App Review with the developer's use case
// and privacy policy. Basic scopes are decided at once by the automated
// review at ReviewScore; the reason of a rejection says what fell short.
// The others wait for staff. It returns every scope's review after the
// submission.
func (s *Review) SubmitReview(ctx context.Context, appID string, sub ReviewSubmission) ([]ScopeReview, error) {
	if len(sub.Scopes) == 0 {
		return nil, fmt.Errorf("scopes: give at least one scope: %w", ErrInvalid)
	}
	if n := utf8.RuneCountInString(sub.UseCase); n == 0 || n > maxUseCase {
		return nil, fmt.Errorf("use_case: describe the use case in 1 to %d characters: %w", maxUseCase, ErrInvalid)
	}
	score, short := ReviewScore(sub)
	sub.shortfalls = short
	if _, err := s.submitForReview(ctx, appID, sub.Scopes, score, sub); err != nil {
		return nil, err
	}
	return s.Reviews(ctx, appID)
}

// Reviews lists the review of every scope that needs one, in the
// catalog's order (Scopes.All); a scope never submitted is ReviewNotSubmitted.
func (s *Review) Reviews(ctx context.Context, appID string) ([]ScopeReview, error) {
	if _, err := s.all.Apps.App(ctx, appID); err != nil {
		return nil, err
	}
	rows, err := s.ScopeReviews(ctx, appID)
	if err != nil {
		return nil, err
	}
	by := map[string]ScopeReview{}
	for _, r := range rows {
		by[r.Scope] = r
	}
	catalog, err := s.Scopes(ctx)
	if err != nil {
		return nil, err
	}
	var out []ScopeReview
	for _, sc := range catalog.All() {
		if catalog.Protocol(sc) {
			continue
		}
		r, ok := by[sc]
		if !ok {
			r = ScopeReview{AppID: appID, Scope: sc, Status: ReviewNotSubmitted}
		}
		out = append(out, r)
	}
	return out, nil
}

// ReviewQueue is the staff queue: at most limit pending reviews, oldest
// first, with their app's name and the submission. Staff only.
func (s *Review) ReviewQueue(ctx context.Context, staffUserID string, limit int) ([]ScopeReview, error) {
	if _, err := s.requireStaff(ctx, staffUserID); err != nil {
		return nil, err
	}
	rows, err := s.q.ListReviewQueue(ctx, int32(limit))
	if err != nil {
		return nil, fmt.Errorf("review queue: %w", err)
	}
	out := make([]ScopeReview, 0, len(rows))
	for _, r := range rows {
		rv := reviewFrom(r.CoreAppScopeReview)
		rv.AppName = r.AppName
		out = append(out, rv)
	}
	return out, nil
}
