package webhook

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	"github.com/svcplatform/svc/gateway/internal/secretbox"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/event"
)

// A result from a lease that was lost is logged but changes nothing: the
// gateway holding the new lease decides the delivery's state.
func TestResultOfALostLeaseChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := identitytest.NewWorld(t)
	box, _ := secretbox.New(secretbox.NewKey())
	s, err := New(Options{Pool: w.Pool, SecretBox: box, Logger: slog.New(slog.DiscardHandler), Jitter: -1,
		RetrySchedule: []time.Duration{time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	appID, _ := sdk.ParseID(w.App.ID)
	// An svcchat event: the World app's link to the Page carries svcchat.
	if err := s.q.SaveWebhookSubscription(ctx, coredb.SaveWebhookSubscriptionParams{
		AppID: appID, CallbackUrl: "https://example.com/hook", Events: []string{EventSvcchatOptIn}, Ordering: OrderingNone,
	}); err != nil {
		t.Fatal(err)
	}
	err = pgx.BeginFunc(ctx, w.Pool, func(tx pgx.Tx) error {
		_, err := event.Emit(ctx, tx, event.Event{Type: EventSvcchatOptIn, PageID: w.Page.ID, Data: map[string]int{}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.q.DispatchEvents(ctx, coredb.DispatchEventsParams{MaxEvents: 10, LeaseMs: 1, AppShare: 10}); err != nil {
		t.Fatal(err)
	}
	claim := func(token int64, lease time.Duration) *job {
		t.Helper()
		rows, err := s.q.ClaimDeliveries(ctx, coredb.ClaimDeliveriesParams{MaxRows: 1, ScanRows: 10, AppShare: 10, LeaseMs: lease.Milliseconds(), LeaseToken: token})
		if err != nil || len(rows) != 1 {
			t.Fatalf("claim with token %d: %d rows, %v", token, len(rows), err)
		}
		return &job{d: rows[0], token: token}
	}
	stale := claim(1, time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	current := claim(2, time.Minute)

	write := func(j *job, o outcome, status int) {
		t.Helper()
		if err := s.writeBatch(ctx, s.q, []result{{job: j, outcome: o, endpointFault: true,
			attempt: &attemptLog{at: time.Now(), statusCode: status}}}); err != nil {
			t.Fatal(err)
		}
	}
	read := func() coredb.CoreWebhookDelivery {
		t.Helper()
		d, err := s.q.GetWebhookDelivery(ctx, stale.d.ID)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	write(stale, failed, 500)
	if d := read(); d.Status != StatusPending || d.FailedAttempts != 0 || d.LeaseToken == nil || *d.LeaseToken != 2 {
		t.Fatalf("after the stale failure: status %s, failed %d, lease %v; want the current lease untouched", d.Status, d.FailedAttempts, d.LeaseToken)
	}
	write(current, succeeded, 200)
	write(stale, failed, 500) // later still: the delivery is done
	d := read()
	if d.Status != StatusSucceeded || d.NextAttemptAt.Valid || d.LeaseToken != nil {
		t.Fatalf("status %s, next %v, lease %v; want succeeded", d.Status, d.NextAttemptAt, d.LeaseToken)
	}
	var log []attemptEntry
	if err := json.Unmarshal(d.Attempts, &log); err != nil || len(log) != 3 {
		t.Fatalf("attempt log %s: every attempt that was sent is logged", d.Attempts)
	}
}
