package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/svcplatform/svc/gateway/internal/claim"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/sdk/event"
)

// The data use checkup (CONTRACT §17): a live app's team Admin certifies
// once a year how the app uses each approved scope. Past the due time the
// app is suspended, not revoked: its tokens and key keep only
// public_profile (package auth enforces it from the due time the
// credential lookup reads) until an Admin certifies.

// CheckupStatus is the state of an app's data use checkup.
type CheckupStatus string

// Checkup states, as GET app/<id>/data_use_checkup answers them.
const (
	// CheckupNotDue: no checkup scheduled (a development app), or one not
	// yet within its window and never certified.
	CheckupNotDue CheckupStatus = "not_due"
	// CheckupDue: within CheckupWindow of the due time; the team is
	// reminded.
	CheckupDue CheckupStatus = "due"
	// CheckupOverdue: the due time has passed; a live app is suspended.
	CheckupOverdue CheckupStatus = "overdue"
	// CheckupCertified: certified, and the next due time not yet within
	// its window.
	CheckupCertified CheckupStatus = "certified"
)

// CheckupWindow is how long before its due time a checkup is due: the
// team is reminded (console notice, app.data_use_checkup.due) when it opens.
const CheckupWindow = 30 * 24 * time.Hour

// CheckupEventDue is the event reminding an app its checkup is due.
const CheckupEventDue = "app.data_use_checkup.due"

// NextCheckupDue is the due time of a checkup that starts at t (going
// live, a certification): a year later.
func NextCheckupDue(t time.Time) time.Time { return t.AddDate(1, 0, 0) }

// CheckupOverdueAt reports whether a checkup due at due (zero: none) is
// overdue at now.
func CheckupOverdueAt(due, now time.Time) bool { return !due.IsZero() && !now.Before(due) }

// CheckupStatusAt is the status at now of a checkup due at due (zero:
// none scheduled) and last certified at certified (zero: never).
func CheckupStatusAt(due, certified, now time.Time) CheckupStatus {
	switch {
	case due.IsZero():
		return CheckupNotDue
	case CheckupOverdueAt(due, now):
		return CheckupOverdue
	case !now.Before(due.Add(-CheckupWindow)):
		return CheckupDue
	case !certified.IsZero():
		return CheckupCertified
	}
	return CheckupNotDue
}

// Checkup is an app's data use checkup.
type Checkup struct {
	AppID  string
	Status CheckupStatus
	// DueAt is when it is due; zero when none is scheduled.
	DueAt time.Time
	// CertifiedAt is the last certification; zero if never.
	CertifiedAt time.Time
	// Scopes are the app's approved scopes, which a certification names.
	Scopes []string
	// Uses is what the last certification said of each scope.
	Uses map[string]string
}

// maxUseLength bounds what an Admin writes of one scope, in characters.
const maxUseLength = 2000

// DataUseCheckup reads the app's checkup at the Service's clock.
func (s *Apps) DataUseCheckup(ctx context.Context, appID string) (Checkup, error) {
	aid, err := mustID("app", appID)
	if err != nil {
		return Checkup{}, err
	}
	if _, err := s.App(ctx, appID); err != nil {
		return Checkup{}, err
	}
	return s.checkup(ctx, aid)
}

func (s *store) checkup(ctx context.Context, aid int64) (Checkup, error) {
	out := Checkup{AppID: FormatID(aid), Uses: map[string]string{}}
	_, approved, err := s.scopesAwaitingReview(ctx, aid)
	if err != nil {
		return Checkup{}, err
	}
	out.Scopes = approved
	if out.Scopes == nil {
		out.Scopes = []string{}
	}
	row, err := s.q.GetDataUseCheckup(ctx, aid)
	if errors.Is(err, pgx.ErrNoRows) {
		out.Status = CheckupStatusAt(time.Time{}, time.Time{}, s.now())
		return out, nil
	}
	if err != nil {
		return Checkup{}, fmt.Errorf("data use checkup of app %d: %w", aid, err)
	}
	out.DueAt, out.CertifiedAt = row.DueAt.Time, row.CertifiedAt.Time
	if len(row.Uses) > 0 {
		if err := json.Unmarshal(row.Uses, &out.Uses); err != nil {
			return Checkup{}, fmt.Errorf("data use checkup of app %d: uses: %w", aid, err)
		}
	}
	out.Status = CheckupStatusAt(out.DueAt, out.CertifiedAt, s.now())
	return out, nil
}

// CertifyDataUse records a team Admin's certification (who may certify was
// decided by the caller's access rule): uses must name every approved
// scope of the app, and only those, each with a description; the checkup
// is then due a year from now. A refusal is a *FieldError naming uses (or
// certify, for an app that has no checkup: a development app).
func (s *Apps) CertifyDataUse(ctx context.Context, appID, userID string, uses map[string]string) (Checkup, error) {
	var out Checkup
	err := s.InTx(ctx, func(s *Service) error {
		aid, err := s.lockApp(ctx, appID)
		if err != nil {
			return err
		}
		c, err := s.checkup(ctx, aid)
		if err != nil {
			return err
		}
		if c.DueAt.IsZero() {
			return &FieldError{Field: "certify", Message: "the app has no data use checkup to certify: it starts when the app goes live"}
		}
		if err := checkUses(c.Scopes, uses); err != nil {
			return err
		}
		b, err := json.Marshal(uses)
		if err != nil {
			return err
		}
		var by *int64
		if uid, ok := ParseID(userID); ok {
			by = &uid
		}
		now := s.now()
		if _, err := s.q.CertifyDataUseCheckup(ctx, coredb.CertifyDataUseCheckupParams{AppID: aid, CertifiedBy: by, Uses: b,
			CertifiedAt: timestamptz(now), NextDueAt: timestamptz(NextCheckupDue(now))}); err != nil {
			return fmt.Errorf("certify data use of app %d: %w", aid, err)
		}
		out, err = s.checkup(ctx, aid)
		return err
	})
	return out, err
}

// checkUses is the rule of a certification's uses: every approved scope,
// no other, each described in at most maxUseLength characters.
func checkUses(approved []string, uses map[string]string) error {
	for _, sc := range approved {
		text, ok := uses[sc]
		if !ok || strings.TrimSpace(text) == "" {
			return &FieldError{Field: "uses", Message: fmt.Sprintf("must say how the app uses every approved scope; %s is missing", sc)}
		}
		if utf8.RuneCountInString(text) > maxUseLength {
			return &FieldError{Field: "uses", Message: fmt.Sprintf("says more than %d characters of %s", maxUseLength, sc)}
		}
	}
	for sc := range uses {
		if !slices.Contains(approved, sc) {
			return &FieldError{Field: "uses", Message: fmt.Sprintf("names %q, which is not an approved scope of the app", sc)}
		}
	}
	return nil
}

// SetDataUseCheckupDue sets when the app's checkup is due (the operator's
// call): past due times make a live app overdue at once; a new due time
// is a new period, reminded once when its window opens.
func (s *Apps) SetDataUseCheckupDue(ctx context.Context, appID string, due time.Time) (Checkup, error) {
	var out Checkup
	err := s.InTx(ctx, func(s *Service) error {
		aid, err := s.lockApp(ctx, appID)
		if err != nil {
			return err
		}
		if err := s.q.SetDataUseCheckupDue(ctx, coredb.SetDataUseCheckupDueParams{AppID: aid, DueAt: timestamptz(due)}); err != nil {
			return fmt.Errorf("set data use checkup due of app %d: %w", aid, err)
		}
		out, err = s.checkup(ctx, aid)
		return err
	})
	return out, err
}

// scheduleCheckup gives an app going live its first checkup, due a year
// later; a due time the operator set already stays.
func (s *store) scheduleCheckup(ctx context.Context, aid int64) error {
	if err := s.q.ScheduleDataUseCheckup(ctx, coredb.ScheduleDataUseCheckupParams{AppID: aid,
		DueAt: timestamptz(NextCheckupDue(s.now()))}); err != nil {
		return fmt.Errorf("schedule data use checkup of app %d: %w", aid, err)
	}
	return nil
}

// reminderBatch bounds the reminders one round writes.
const reminderBatch = 50

// RemindDataUseCheckups writes the reminders owed at the Service's clock:
// for each live app whose checkup window has opened (or whose due time
// passed) and whose reminder for that due time was not written, one
// app.data_use_checkup.due event to the app, in the transaction that
// records it, so it is written once per due period whichever gateway
// looks. It answers how many it wrote.
func (s *Apps) RemindDataUseCheckups(ctx context.Context) (int, error) {
	n := 0
	err := s.InTx(ctx, func(s *Service) error {
		rows, err := s.q.ClaimDataUseCheckupReminders(ctx, coredb.ClaimDataUseCheckupRemindersParams{
			DueBy: timestamptz(s.now().Add(CheckupWindow)), Batch: reminderBatch})
		if err != nil {
			return fmt.Errorf("claim data use checkup reminders: %w", err)
		}
		for _, r := range rows {
			c, err := s.checkup(ctx, r.AppID)
			if err != nil {
				return err
			}
			if _, err := event.Emit(ctx, s.tx, event.Event{Type: CheckupEventDue, AppID: c.AppID, Data: checkupEventData{
				AppID: c.AppID, Status: string(c.Status), DueTime: c.DueAt.UTC().Format(time.RFC3339), Scopes: c.Scopes}}); err != nil {
				return err
			}
			if err := s.q.MarkDataUseCheckupReminded(ctx, r.AppID); err != nil {
				return fmt.Errorf("mark data use checkup reminded: %w", err)
			}
		}
		n = len(rows)
		return nil
	})
	return n, err
}

// checkupEventData is the data of app.data_use_checkup.due.
type checkupEventData struct {
	AppID   string   `json:"app_id"`
	Status  string   `json:"status"`
	DueTime string   `json:"due_time"`
	Scopes  []string `json:"scopes"`
}

// RunCheckupReminders writes owed reminders every poll, or at once when
// WakeCheckupReminders is called, until ctx ends; failures are logged by
// report and retried at the next round.
func (s *Apps) RunCheckupReminders(ctx context.Context, poll time.Duration, report func(error)) {
	claim.Loop(ctx, poll, s.env.checkupWake, reminderBatch, func(ctx context.Context) int {
		n, err := s.RemindDataUseCheckups(ctx)
		if err != nil && ctx.Err() == nil {
			report(err)
		}
		return n
	})
}

// WakeCheckupReminders makes the reminder loop look at once (after the
// operator moved a due time), rather than at its next poll.
func (s *Apps) WakeCheckupReminders() {
	select {
	case s.env.checkupWake <- struct{}{}:
	default:
	}
}

func timestamptz(t time.Time) pgtype.Timestamptz { return pgtype.Timestamptz{Time: t, Valid: true} }
