package main

import (
	"context"
	"testing"
	"time"

	"github.com/svcplatform/svc/sdk/plugintest"
)

func TestADecidedReportIsDeletedOnceItsRetentionRunsOutAndAnOpenOneStays(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	now := time.Now()
	old := now.Add(-decidedReportRetention - time.Hour)
	recent := now.Add(-decidedReportRetention + time.Hour)
	if _, err := b.pool.Exec(ctx, `
INSERT INTO svcchat.reports (reporter_user_id, kind, subject_id, page_id, reason, status, created_at, decided_at, decided_by)
VALUES ('901', 'page', '500', '500', 'open for a year', 'open', $1, NULL, ''),
       ('902', 'page', '500', '500', 'recently dismissed', 'dismissed', $1, $2, '1'),
       ('903', 'page', '500', '500', 'recently restricted', 'restricted', $1, $2, '1')`,
		now.Add(-365*24*time.Hour), recent); err != nil {
		t.Fatal(err)
	}
	// More old decided reports than one statement deletes, both decisions.
	if _, err := b.pool.Exec(ctx, `
INSERT INTO svcchat.reports (reporter_user_id, kind, subject_id, user_id, message_text, reason, status, created_at, decided_at, decided_by)
SELECT 'r' || i, 'message', 'm' || i, '900', 'a private message', 'spam',
       CASE WHEN i % 2 = 0 THEN 'dismissed' ELSE 'restricted' END, $1, $1, '1'
FROM generate_series(1, $2::int) i`, old, pruneBatch+7); err != nil {
		t.Fatal(err)
	}
	if err := b.svc.pruneRound(ctx, now); err != nil {
		t.Fatal(err)
	}
	rows, err := b.pool.Query(ctx, `SELECT reason FROM svcchat.reports ORDER BY reporter_user_id`)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		left = append(left, r)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	want := []string{"open for a year", "recently dismissed", "recently restricted"}
	if len(left) != len(want) {
		t.Fatalf("left %d reports (%v…), want %v", len(left), left[:min(len(left), 5)], want)
	}
	for i := range want {
		if left[i] != want[i] {
			t.Fatalf("left %v, want %v", left, want)
		}
	}
	// A second round deletes nothing more.
	if err := b.svc.pruneRound(ctx, now); err != nil {
		t.Fatal(err)
	}
	if n := plugintest.Count(t, b.pool, "SELECT count(*) FROM svcchat.reports"); n != 3 {
		t.Fatalf("%d reports after a second round, want 3", n)
	}
}
