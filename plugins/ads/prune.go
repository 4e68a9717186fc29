package main

import (
	"context"
	"time"

	"github.com/svcplatform/svc/plugins/ads/internal/adsdb"
)

const (
	// clickRetention keeps a click as long as a conversion may still be
	// attributed to it: an event may be sent up to maxEventAge after it
	// happened, and counts for a click of the attributionWindow before it;
	// a day more for clock skew and late rounds.
	clickRetention = maxEventAge + attributionWindow + 24*time.Hour
	// conversionRetention keeps a conversion past the dedupWindow its
	// event_id is checked against; insights count conversions on
	// ad_daily_stats, so pruning them changes no number.
	conversionRetention = 7 * 24 * time.Hour
	// pruneBatch is the most rows one statement deletes.
	pruneBatch = 5000
)

// pruneRound deletes clicks and conversions that outlived their retention,
// in batches, oldest first (run hourly from main by prune.Every).
func (s *service) pruneRound(ctx context.Context) error {
	q := adsdb.New(s.pool)
	now := s.now()
	for _, del := range []func() (int64, error){
		func() (int64, error) {
			return q.PruneClicks(ctx, adsdb.PruneClicksParams{Before: timestamptz(now.Add(-clickRetention)), Batch: pruneBatch})
		},
		func() (int64, error) {
			return q.PruneConversions(ctx, adsdb.PruneConversionsParams{Before: timestamptz(now.Add(-conversionRetention)), Batch: pruneBatch})
		},
	} {
		for {
			n, err := del()
			if err != nil {
				return err
			}
			if n < pruneBatch {
				break
			}
		}
	}
	return nil
}
