package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/gateway/internal/claim"
	"github.com/svcplatform/svc/gateway/internal/coredb"
)

// Partners holds the partner program (CONTRACT §18, docs/PARTNERS.md): a
// business registers, and its tier follows from measured criteria,
// assessed on every read and at least daily; see Service.Partners.
type Partners struct{ *store }

// PartnerTier is a partner's tier.
type PartnerTier string

// Tiers, lowest first.
const (
	TierRegistered PartnerTier = "registered"
	TierCertified  PartnerTier = "certified"
	TierPremier    PartnerTier = "premier"
)

// Criteria names, as partner/<id> shows them and docs/PARTNERS.md
// publishes them.
const (
	CriterionLiveApp        = "live_reviewed_app"
	CriterionWebhooks       = "webhook_success_30d"
	CriterionSmoke          = "smoke_check_30d"
	CriterionVerified       = "business_verified"
	CriterionWebhooksVolume = "webhook_volume_30d"
)

// The measured bars (docs/PARTNERS.md publishes them).
const (
	// PartnerWindow is how far back webhook deliveries and smoke runs count.
	PartnerWindow = 30 * 24 * time.Hour
	// CertifiedMinDeliveries and CertifiedMinSuccess: webhook_success_30d.
	CertifiedMinDeliveries = 5
	CertifiedMinSuccess    = 0.95
	// PremierMinDeliveries and PremierMinSuccess: webhook_volume_30d.
	PremierMinDeliveries = 1000
	PremierMinSuccess    = 0.99
	// maxMeasuredDeliveries bounds the read of the success rate: of each
	// app, the most recent deliveries of the window only.
	maxMeasuredDeliveries = 10000
	// PartnerReassessEvery is the daily assessment's period: a partner
	// assessed longer ago is assessed again by any gateway's loop.
	PartnerReassessEvery = 24 * time.Hour
	partnerBatch         = 50
)

// tierNeeds is the tier table: a tier is held when every criterion it
// names is met, and the highest held wins. registered needs nothing.
var tierNeeds = []struct {
	tier  PartnerTier
	needs []string
}{
	{TierPremier, []string{CriterionLiveApp, CriterionWebhooks, CriterionSmoke, CriterionVerified, CriterionWebhooksVolume}},
	{TierCertified, []string{CriterionLiveApp, CriterionWebhooks, CriterionSmoke}},
}

// PartnerMeasures are what the criteria are assessed from.
type PartnerMeasures struct {
	// LiveReviewedApps: the business's apps in live mode with a scope
	// App Review approved.
	LiveReviewedApps int
	// Deliveries and Succeeded: completed, non-test webhook deliveries to
	// the business's apps in PartnerWindow (of each app, at most the most
	// recent maxMeasuredDeliveries).
	Deliveries, Succeeded int
	// LastSmokePass: the last smoke run with no failed step in
	// PartnerWindow; zero when none.
	LastSmokePass time.Time
	// Verification is the business's verification status.
	Verification VerificationStatus
}

// PartnerCriterion is one criterion as measured: its name, whether it is
// met, and the measured value (docs/PARTNERS.md says each one's form).
type PartnerCriterion struct {
	Name  string `json:"name"`
	Met   bool   `json:"met"`
	Value string `json:"value"`
}

// AssessPartner is the partner program's rule: the criteria measured by m
// and the tier they give.
func AssessPartner(m PartnerMeasures) (PartnerTier, []PartnerCriterion) {
	rate := 0.0
	if m.Deliveries > 0 {
		rate = float64(m.Succeeded) / float64(m.Deliveries)
	}
	webhooks := strconv.FormatFloat(rate*100, 'f', 1, 64) + "% of " + strconv.Itoa(m.Deliveries)
	smoke := "none"
	if !m.LastSmokePass.IsZero() {
		smoke = m.LastSmokePass.UTC().Format(time.RFC3339)
	}
	criteria := []PartnerCriterion{
		{CriterionLiveApp, m.LiveReviewedApps > 0, strconv.Itoa(m.LiveReviewedApps)},
		{CriterionWebhooks, m.Deliveries >= CertifiedMinDeliveries && rate >= CertifiedMinSuccess, webhooks},
		{CriterionSmoke, !m.LastSmokePass.IsZero(), smoke},
		{CriterionVerified, m.Verification == Verified, string(m.Verification)},
		{CriterionWebhooksVolume, m.Deliveries >= PremierMinDeliveries && rate >= PremierMinSuccess, webhooks},
	}
	return partnerTier(criteria), criteria
}

// partnerTier is the highest tier of tierNeeds whose criteria are all met.
func partnerTier(criteria []PartnerCriterion) PartnerTier {
	met := map[string]bool{}
	for _, c := range criteria {
		met[c.Name] = c.Met
	}
next:
	for _, t := range tierNeeds {
		for _, n := range t.needs {
			if !met[n] {
				continue next
			}
		}
		return t.tier
	}
	return TierRegistered
}

// Partner is a partner with its last assessment.
type Partner struct {
	ID         string
	BusinessID string
	Tier       PartnerTier
	Criteria   []PartnerCriterion
	AssessedAt time.Time
}

var (
	// ErrPartnerExists: the business is a partner already.
	ErrPartnerExists = errors.New("identity: the business is a partner already")
	// ErrAppNotInBusiness: the app is not an asset of the partner's business.
	ErrAppNotInBusiness = errors.New("identity: the app does not belong to the partner's business")
)

// measure reads the measures of the business's criteria at the clock.
func (s *store) measurePartner(ctx context.Context, partnerID, businessID int64) (PartnerMeasures, error) {
	var m PartnerMeasures
	since := timestamptz(s.now().Add(-PartnerWindow))
	b, err := s.q.GetBusiness(ctx, businessID)
	if err != nil {
		return m, notFound(err, "business "+FormatID(businessID))
	}
	m.Verification = VerificationStatus(b.VerificationStatus)
	n, err := s.q.CountLiveReviewedApps(ctx, businessID)
	if err != nil {
		return m, fmt.Errorf("count live reviewed apps: %w", err)
	}
	m.LiveReviewedApps = int(n)
	w, err := s.q.WebhookOutcomesOfBusiness(ctx, coredb.WebhookOutcomesOfBusinessParams{BusinessID: businessID,
		Since: since, MaxRows: maxMeasuredDeliveries})
	if err != nil {
		return m, fmt.Errorf("webhook outcomes: %w", err)
	}
	m.Deliveries, m.Succeeded = int(w.Total), int(w.Succeeded)
	if partnerID != 0 {
		last, err := s.q.LastPassingSmokeRun(ctx, coredb.LastPassingSmokeRunParams{PartnerID: partnerID, Since: since})
		if err != nil {
			return m, fmt.Errorf("last smoke run: %w", err)
		}
		if last.Valid {
			m.LastSmokePass = last.Time
		}
	}
	return m, nil
}

// Register makes the business a partner, registered by the user (the
// caller's standing, a business admin, is the access rule's); its first
// assessment is made at once. ErrPartnerExists when it is one already.
func (s *Partners) Register(ctx context.Context, businessID, userID string) (Partner, error) {
	bid, err := mustID("business", businessID)
	if err != nil {
		return Partner{}, err
	}
	uid, _ := ParseID(userID)
	m, err := s.measurePartner(ctx, 0, bid)
	if err != nil {
		return Partner{}, err
	}
	tier, criteria := AssessPartner(m)
	raw, err := json.Marshal(criteria)
	if err != nil {
		return Partner{}, err
	}
	now := s.now()
	id, err := s.q.InsertPartner(ctx, coredb.InsertPartnerParams{BusinessID: bid, RegisteredBy: &uid, Criteria: raw,
		Tier: string(tier), AssessedAt: timestamptz(now)})
	if errors.Is(err, pgx.ErrNoRows) {
		return Partner{}, fmt.Errorf("business %s: %w", businessID, ErrPartnerExists)
	}
	if err != nil {
		return Partner{}, fmt.Errorf("insert partner: %w", err)
	}
	return Partner{ID: FormatID(id), BusinessID: businessID, Tier: tier, Criteria: criteria, AssessedAt: now}, nil
}

// OfBusiness is the partner id of the business, "" when the business is
// not a partner.
func (s *Partners) OfBusiness(ctx context.Context, businessID string) (string, error) {
	bid, err := mustID("business", businessID)
	if err != nil {
		return "", err
	}
	id, err := s.q.PartnerOfBusiness(ctx, bid)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("partner of business: %w", err)
	}
	return FormatID(id), nil
}

// BusinessOf is the business of the partner; ErrNotFound when there is no
// such partner.
func (s *Partners) BusinessOf(ctx context.Context, partnerID string) (string, error) {
	id, err := mustID("partner", partnerID)
	if err != nil {
		return "", err
	}
	row, err := s.q.GetPartner(ctx, id)
	if err != nil {
		return "", notFound(err, "partner "+partnerID)
	}
	return FormatID(row.BusinessID), nil
}

// Assess measures the partner's criteria now, keeps the assessment and
// answers it: the read of partner/<id> (tiers are recomputed on request).
func (s *Partners) Assess(ctx context.Context, partnerID string) (Partner, error) {
	id, err := mustID("partner", partnerID)
	if err != nil {
		return Partner{}, err
	}
	row, err := s.q.GetPartner(ctx, id)
	if err != nil {
		return Partner{}, notFound(err, "partner "+partnerID)
	}
	return s.assess(ctx, id, row.BusinessID)
}

func (s *store) assess(ctx context.Context, id, businessID int64) (Partner, error) {
	m, err := s.measurePartner(ctx, id, businessID)
	if err != nil {
		return Partner{}, err
	}
	tier, criteria := AssessPartner(m)
	raw, err := json.Marshal(criteria)
	if err != nil {
		return Partner{}, err
	}
	now := s.now()
	if err := s.q.SetPartnerAssessment(ctx, coredb.SetPartnerAssessmentParams{ID: id, Tier: string(tier), Criteria: raw,
		AssessedAt: timestamptz(now)}); err != nil {
		return Partner{}, fmt.Errorf("keep partner assessment: %w", err)
	}
	return Partner{ID: FormatID(id), BusinessID: FormatID(businessID), Tier: tier, Criteria: criteria, AssessedAt: now}, nil
}

// SmokeRun is a run of the smoke check reported for a partner.
type SmokeRun struct {
	PartnerID, AppID, UserID string
	Passed, Failed           int
	Summary                  string
}

// RecordSmokeRun keeps a smoke run made against the app, which must be an
// asset of the partner's business (ErrAppNotInBusiness), and answers its id.
func (s *Partners) RecordSmokeRun(ctx context.Context, r SmokeRun) (string, error) {
	pid, err := mustID("partner", r.PartnerID)
	if err != nil {
		return "", err
	}
	row, err := s.q.GetPartner(ctx, pid)
	if err != nil {
		return "", notFound(err, "partner "+r.PartnerID)
	}
	aid, ok := ParseID(r.AppID)
	if !ok {
		return "", fmt.Errorf("app %q: %w", r.AppID, ErrAppNotInBusiness)
	}
	in, err := s.q.AppInBusiness(ctx, coredb.AppInBusinessParams{AppID: aid, BusinessID: row.BusinessID})
	if err != nil {
		return "", err
	}
	if !in {
		return "", fmt.Errorf("app %s: %w", r.AppID, ErrAppNotInBusiness)
	}
	uid, _ := ParseID(r.UserID)
	id, err := s.q.InsertPartnerSmokeRun(ctx, coredb.InsertPartnerSmokeRunParams{PartnerID: pid, AppID: aid,
		Passed: int32(r.Passed), Failed: int32(r.Failed), Summary: r.Summary, RanBy: &uid, RanAt: timestamptz(s.now())})
	if err != nil {
		return "", fmt.Errorf("insert smoke run: %w", err)
	}
	return FormatID(id), nil
}

// AssessStale assesses the partners not assessed for PartnerReassessEvery,
// at most a batch, each by one gateway (the rows are locked while it
// works), and answers how many.
func (s *Partners) AssessStale(ctx context.Context) (int, error) {
	n := 0
	err := s.InTx(ctx, func(s *Service) error {
		rows, err := s.q.ClaimStalePartners(ctx, coredb.ClaimStalePartnersParams{
			StaleBefore: timestamptz(s.now().Add(-PartnerReassessEvery)), Batch: partnerBatch})
		if err != nil {
			return fmt.Errorf("claim stale partners: %w", err)
		}
		for _, r := range rows {
			if _, err := s.assess(ctx, r.ID, r.BusinessID); err != nil {
				return err
			}
		}
		n = len(rows)
		return nil
	})
	return n, err
}

// RunAssessments assesses stale partners every poll until ctx ends: the
// daily assessment, run by every gateway; failures are logged by report
// and retried at the next round.
func (s *Partners) RunAssessments(ctx context.Context, poll time.Duration, report func(error)) {
	claim.Loop(ctx, poll, nil, partnerBatch, func(ctx context.Context) int {
		n, err := s.AssessStale(ctx)
		if err != nil && ctx.Err() == nil {
			report(err)
		}
		return n
	})
}
