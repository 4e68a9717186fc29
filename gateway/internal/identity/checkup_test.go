package identity_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
)

// The checkup's status as a function of its due time, last certification
// and the clock, row by row (CONTRACT §17; the 30-day window is in
// docs/DECISIONS.md).
func TestTheCheckupStatusFollowsItsDueTimeItsWindowAndItsCertification(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	never := time.Time{}
	rows := []struct {
		name           string
		due, certified time.Time
		want           identity.CheckupStatus
	}{
		{"no checkup scheduled (a development app)", never, never, identity.CheckupNotDue},
		{"no checkup scheduled, even once certified", never, now.Add(-day), identity.CheckupNotDue},
		{"due in a year, never certified", now.Add(365 * day), never, identity.CheckupNotDue},
		{"due in a year, certified", now.Add(365 * day), now.Add(-day), identity.CheckupCertified},
		{"one second before the window opens, certified", now.Add(identity.CheckupWindow + time.Second), now.Add(-day), identity.CheckupCertified},
		{"the window opens", now.Add(identity.CheckupWindow), never, identity.CheckupDue},
		{"within the window, certified a year ago", now.Add(10 * day), now.Add(-355 * day), identity.CheckupDue},
		{"one second before the due time", now.Add(time.Second), never, identity.CheckupDue},
		{"at the due time", now, never, identity.CheckupOverdue},
		{"past the due time, certified before", now.Add(-time.Second), now.Add(-400 * day), identity.CheckupOverdue},
	}
	for _, r := range rows {
		if got := identity.CheckupStatusAt(r.due, r.certified, now); got != r.want {
			t.Errorf("%s: status = %s, want %s", r.name, got, r.want)
		}
		if overdue := identity.CheckupOverdueAt(r.due, now); overdue != (r.want == identity.CheckupOverdue) {
			t.Errorf("%s: overdue = %v", r.name, overdue)
		}
	}
	if next := identity.NextCheckupDue(now); !next.Equal(time.Date(2027, 6, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("next due = %v, want a year later", next)
	}
}

// goLive takes the World's app through App Review and live.
func goLive(t *testing.T, w *identitytest.World) {
	t.Helper()
	ctx := context.Background()
	if _, err := w.IDs.Review.SubmitForReview(ctx, w.App.ID, []string{"public_profile", "pages:read"}, 90); err != nil {
		t.Fatal(err)
	}
	if _, err := w.IDs.Review.GoLive(ctx, w.App.ID); err != nil {
		t.Fatal(err)
	}
}

func TestGoingLiveSchedulesTheCheckupAYearLaterAndCertifyingNamesEveryApprovedScope(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	c := newClock()
	w.IDs.SetClock(c.now)
	before, err := w.IDs.Apps.DataUseCheckup(ctx, w.App.ID)
	if err != nil || before.Status != identity.CheckupNotDue || !before.DueAt.IsZero() {
		t.Fatalf("a development app's checkup = %+v, %v", before, err)
	}
	if _, err := w.IDs.Apps.CertifyDataUse(ctx, w.App.ID, w.Owner.ID, map[string]string{}); !isField(err, "certify") {
		t.Fatalf("certifying a development app: %v", err)
	}
	goLive(t, w)
	got, err := w.IDs.Apps.DataUseCheckup(ctx, w.App.ID)
	if err != nil || got.Status != identity.CheckupNotDue || !got.DueAt.Equal(identity.NextCheckupDue(c.now())) ||
		len(got.Scopes) != 2 {
		t.Fatalf("after going live: %+v, %v", got, err)
	}
	uses := map[string]string{"public_profile": "Greets the customer by name.", "pages:read": "Lists the merchant's shops."}
	for name, bad := range map[string]map[string]string{
		"one approved scope missing": {"public_profile": "Greets the customer by name."},
		"an empty description":       {"public_profile": " ", "pages:read": "Lists the merchant's shops."},
		"a scope not approved":       {"public_profile": "x", "pages:read": "y", "pages:manage": "z"},
	} {
		if _, err := w.IDs.Apps.CertifyDataUse(ctx, w.App.ID, w.Owner.ID, bad); !isField(err, "uses") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := w.IDs.Apps.SetDataUseCheckupDue(ctx, w.App.ID, c.now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.IDs.Apps.DataUseCheckup(ctx, w.App.ID); got.Status != identity.CheckupOverdue {
		t.Fatalf("after the operator's past due time: %+v", got)
	}
	c.add(time.Minute)
	got, err = w.IDs.Apps.CertifyDataUse(ctx, w.App.ID, w.Owner.ID, uses)
	if err != nil || got.Status != identity.CheckupCertified || !got.DueAt.Equal(identity.NextCheckupDue(c.now())) ||
		got.Uses["pages:read"] != uses["pages:read"] {
		t.Fatalf("certified: %+v, %v", got, err)
	}
}

func isField(err error, field string) bool {
	var fe *identity.FieldError
	return errors.As(err, &fe) && fe.Field == field && errors.Is(err, identity.ErrInvalid)
}

func TestTheCheckupReminderIsWrittenOncePerDuePeriodWhenItsWindowOpens(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	c := newClock()
	w.IDs.SetClock(c.now)
	goLive(t, w)
	reminders := func() int {
		t.Helper()
		var n int
		if err := w.Pool.QueryRow(ctx, `SELECT count(*) FROM core.outbox WHERE type = $1 AND app_id = $2`,
			identity.CheckupEventDue, w.App.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	remind := func() int {
		t.Helper()
		n, err := w.IDs.Apps.RemindDataUseCheckups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if remind() != 0 || reminders() != 0 {
		t.Fatal("a reminder before the window opened")
	}
	c.add(365*24*time.Hour - identity.CheckupWindow - time.Hour)
	if remind() != 0 {
		t.Fatal("a reminder an hour before the window opened")
	}
	c.add(2 * time.Hour)
	if remind() != 1 || remind() != 0 || reminders() != 1 {
		t.Fatalf("the window opened: %d reminders, want exactly one", reminders())
	}
	// The operator's new due time is a new period: reminded once more.
	if _, err := w.IDs.Apps.SetDataUseCheckupDue(ctx, w.App.ID, c.now().Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if remind() != 1 || remind() != 0 || reminders() != 2 {
		t.Fatalf("after a new due time: %d reminders, want 2", reminders())
	}
	var data string
	if err := w.Pool.QueryRow(ctx, `SELECT data::text FROM core.outbox WHERE type = $1 ORDER BY seq DESC LIMIT 1`,
		identity.CheckupEventDue).Scan(&data); err != nil {
		t.Fatal(err)
	}
	want := `"due_time": "` + c.now().Add(24*time.Hour).UTC().Format(time.RFC3339) + `"`
	if !strings.Contains(data, want) || !strings.Contains(data, `"status": "due"`) {
		t.Fatalf("event data = %s, want %s", data, want)
	}
}
