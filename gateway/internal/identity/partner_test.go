package identity_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
)

// The partner program's rule (identity.AssessPartner), row by row: the
// tier each set of measures gives, named after the rule it checks.
func TestPartnerTierRules(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	certified := identity.PartnerMeasures{LiveReviewedApps: 1, Deliveries: 20, Succeeded: 19, LastSmokePass: day,
		Verification: identity.Unverified}
	with := func(f func(*identity.PartnerMeasures)) identity.PartnerMeasures {
		m := certified
		f(&m)
		return m
	}
	premier := with(func(m *identity.PartnerMeasures) {
		m.Deliveries, m.Succeeded, m.Verification = 2000, 1990, identity.Verified
	})
	for _, tc := range []struct {
		rule string
		m    identity.PartnerMeasures
		want identity.PartnerTier
	}{
		{"nothing measured: registered", identity.PartnerMeasures{Verification: identity.Unverified}, identity.TierRegistered},
		{"a live reviewed app, 95% of 20 deliveries and a passing smoke run: certified", certified, identity.TierCertified},
		{"no live reviewed app: registered", with(func(m *identity.PartnerMeasures) { m.LiveReviewedApps = 0 }), identity.TierRegistered},
		{"below 95% webhook success: registered", with(func(m *identity.PartnerMeasures) { m.Succeeded = 18 }), identity.TierRegistered},
		{"fewer than 5 deliveries, all succeeded: registered", with(func(m *identity.PartnerMeasures) { m.Deliveries, m.Succeeded = 4, 4 }), identity.TierRegistered},
		{"exactly 5 deliveries, all succeeded: certified", with(func(m *identity.PartnerMeasures) { m.Deliveries, m.Succeeded = 5, 5 }), identity.TierCertified},
		{"no passing smoke run in 30 days: registered", with(func(m *identity.PartnerMeasures) { m.LastSmokePass = time.Time{} }), identity.TierRegistered},
		{"a verified business alone does not make it certified", identity.PartnerMeasures{Verification: identity.Verified}, identity.TierRegistered},
		{"certified, verified, 99.5% of 2000 deliveries: premier", premier, identity.TierPremier},
		{"premier volume and success but not verified: certified", with(func(m *identity.PartnerMeasures) { m.Deliveries, m.Succeeded = 2000, 1990 }), identity.TierCertified},
		{"pending verification is not verified: certified", with(func(m *identity.PartnerMeasures) {
			m.Deliveries, m.Succeeded, m.Verification = 2000, 1990, identity.Pending
		}), identity.TierCertified},
		{"verified, below 99% of 2000: certified", with(func(m *identity.PartnerMeasures) {
			m.Deliveries, m.Succeeded, m.Verification = 2000, 1970, identity.Verified
		}), identity.TierCertified},
		{"verified, 100% of 999 deliveries: certified", with(func(m *identity.PartnerMeasures) {
			m.Deliveries, m.Succeeded, m.Verification = 999, 999, identity.Verified
		}), identity.TierCertified},
		{"premier bars without a smoke run: registered", with(func(m *identity.PartnerMeasures) {
			m.Deliveries, m.Succeeded, m.Verification, m.LastSmokePass = 2000, 2000, identity.Verified, time.Time{}
		}), identity.TierRegistered},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			tier, criteria := identity.AssessPartner(tc.m)
			if tier != tc.want {
				t.Fatalf("tier = %s, want %s; criteria %+v", tier, tc.want, criteria)
			}
			if len(criteria) != 5 {
				t.Fatalf("criteria = %+v", criteria)
			}
		})
	}
}

func criterion(t *testing.T, p identity.Partner, name string) identity.PartnerCriterion {
	t.Helper()
	for _, c := range p.Criteria {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no criterion %s in %+v", name, p.Criteria)
	return identity.PartnerCriterion{}
}

// The criteria are measured from the stored data: the business's live
// reviewed apps, its apps' completed non-test webhook deliveries of the
// last 30 days, and its passing smoke runs of the last 30 days.
func TestPartnerCriteriaAreMeasuredFromTheBusinesssAppsOver30Days(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	now := time.Now()
	w.IDs.SetClock(func() time.Time { return now })
	biz, err := w.IDs.Businesses.Create(ctx, w.Owner.ID, "Partner Co.")
	if err != nil {
		t.Fatal(err)
	}
	p, err := w.IDs.Partners.Register(ctx, biz.ID, w.Owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Tier != identity.TierRegistered || criterion(t, p, identity.CriterionLiveApp).Met || criterion(t, p, identity.CriterionWebhooks).Value != "0.0% of 0" {
		t.Fatalf("new partner = %+v", p)
	}
	if _, err := w.IDs.Partners.Register(ctx, biz.ID, w.Owner.ID); !errors.Is(err, identity.ErrPartnerExists) {
		t.Fatalf("second registration: %v", err)
	}

	// The app goes live after App Review: counted only once it is the
	// business's.
	if _, err := w.IDs.Review.SubmitForReview(ctx, w.App.ID, []string{"public_profile"}, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := w.IDs.Review.GoLive(ctx, w.App.ID); err != nil {
		t.Fatal(err)
	}
	if p, _ = w.IDs.Partners.Assess(ctx, p.ID); criterion(t, p, identity.CriterionLiveApp).Met {
		t.Fatalf("an app of no business counted: %+v", p.Criteria)
	}
	if err := w.IDs.Businesses.AddAsset(ctx, biz.ID, w.Owner.ID, "APP", w.App.ID, false); err != nil {
		t.Fatal(err)
	}

	// Deliveries: 19 succeeded and 1 failed in the window count; a test
	// event, a pending one and one completed 31 days ago do not.
	deliver := func(status string, test bool, completed time.Time) {
		t.Helper()
		var next any
		var done any = completed
		if status == "pending" {
			next, done = completed, nil
		}
		if _, err := w.Pool.Exec(ctx, `INSERT INTO core.webhook_deliveries (app_id, event_id, event_type, event_created_at, data, test, status, next_attempt_at, completed_at)
			VALUES ($1, 'e', 'page.post.created', now(), '{}', $2, $3, $4, $5)`, w.App.ID, test, status, next, done); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 19; i++ {
		deliver("succeeded", false, now.Add(-time.Hour))
	}
	deliver("failed", false, now.Add(-29*24*time.Hour))
	deliver("failed", true, now.Add(-time.Hour))
	deliver("pending", false, now)
	deliver("failed", false, now.Add(-31*24*time.Hour))

	p, err = w.IDs.Partners.Assess(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c := criterion(t, p, identity.CriterionLiveApp); !c.Met || c.Value != "1" {
		t.Fatalf("live app = %+v", c)
	}
	if c := criterion(t, p, identity.CriterionWebhooks); !c.Met || c.Value != "95.0% of 20" {
		t.Fatalf("webhooks = %+v", c)
	}
	if p.Tier != identity.TierRegistered || criterion(t, p, identity.CriterionSmoke).Met {
		t.Fatalf("before a smoke run: %+v", p)
	}

	// A failing run does not count; a run of an app of another business is
	// refused; a passing run makes it certified, until it is 30 days old.
	other, err := w.IDs.Apps.CreateApp(ctx, identity.NewApp{Name: "Other", AdminID: w.Owner.ID})
	if err != nil {
		t.Fatal(err)
	}
	run := identity.SmokeRun{PartnerID: p.ID, AppID: w.App.ID, UserID: w.Owner.ID, Passed: 5, Failed: 1}
	if _, err := w.IDs.Partners.RecordSmokeRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if p, _ = w.IDs.Partners.Assess(ctx, p.ID); p.Tier != identity.TierRegistered {
		t.Fatalf("a failing smoke run certified: %+v", p)
	}
	run.AppID, run.Failed = other.ID, 0
	if _, err := w.IDs.Partners.RecordSmokeRun(ctx, run); !errors.Is(err, identity.ErrAppNotInBusiness) {
		t.Fatalf("smoke run of another business's app: %v", err)
	}
	run.AppID = w.App.ID
	if _, err := w.IDs.Partners.RecordSmokeRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if p, _ = w.IDs.Partners.Assess(ctx, p.ID); p.Tier != identity.TierCertified {
		t.Fatalf("after a passing smoke run: %+v", p)
	}
	later := now.Add(31 * 24 * time.Hour)
	w.IDs.SetClock(func() time.Time { return later })
	if p, _ = w.IDs.Partners.Assess(ctx, p.ID); p.Tier != identity.TierRegistered || criterion(t, p, identity.CriterionSmoke).Met {
		t.Fatalf("31 days later: %+v", p)
	}
}

// The daily assessment: a partner assessed more than a day ago is
// assessed again (its stored tier follows the measures), one assessed
// recently is left alone.
func TestPartnersAreReassessedDaily(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	now := time.Now()
	w.IDs.SetClock(func() time.Time { return now })
	biz, err := w.IDs.Businesses.Create(ctx, w.Owner.ID, "Partner Co.")
	if err != nil {
		t.Fatal(err)
	}
	p, err := w.IDs.Partners.Register(ctx, biz.ID, w.Owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := w.IDs.Partners.AssessStale(ctx); err != nil || n != 0 {
		t.Fatalf("fresh partner reassessed: %d, %v", n, err)
	}
	if _, err := w.Pool.Exec(ctx, `UPDATE core.businesses SET verification_status = 'verified' WHERE id = $1`, biz.ID); err != nil {
		t.Fatal(err)
	}
	later := now.Add(25 * time.Hour)
	w.IDs.SetClock(func() time.Time { return later })
	if n, err := w.IDs.Partners.AssessStale(ctx); err != nil || n != 1 {
		t.Fatalf("stale partner: %d, %v", n, err)
	}
	var verified bool
	var at time.Time
	if err := w.Pool.QueryRow(ctx, `SELECT criteria @> '[{"name":"business_verified","met":true}]', assessed_at FROM core.partners WHERE id = $1`, p.ID).Scan(&verified, &at); err != nil {
		t.Fatal(err)
	}
	if !verified || at.Before(later.Add(-time.Second)) {
		t.Fatalf("stored assessment: verified %v at %v", verified, at)
	}
	if n, err := w.IDs.Partners.AssessStale(ctx); err != nil || n != 0 {
		t.Fatalf("just reassessed: %d, %v", n, err)
	}
}
