package main

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/svcplatform/svc/plugins/svcchat/internal/svcchatdb"
)

const (
	// decidedReportRetention keeps a decided report (and the copy of a
	// reported message's text it holds) long enough for staff to look back
	// at a subject's history, then deletes it (docs/DECISIONS.md). An open
	// report stays until staff decide it; a reporter's leaving deletes their
	// reports at once (leave.go).
	decidedReportRetention = 180 * 24 * time.Hour
	// pruneBatch is the most rows one statement deletes.
	pruneBatch = 5000
)

// pruneRound deletes the reports decided longer than decidedReportRetention
// before now, in batches, oldest decision first (run hourly from main by
// prune.Every).
func (s *service) pruneRound(ctx context.Context, now time.Time) error {
	q := svcchatdb.New(s.pool)
	before := pgtype.Timestamptz{Time: now.Add(-decidedReportRetention), Valid: true}
	for {
		n, err := q.PruneDecidedReports(ctx, svcchatdb.PruneDecidedReportsParams{Before: before, Lim: pruneBatch})
		if err != nil || n < pruneBatch {
			return err
		}
	}
}
