package webhook

import (
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/gateway/internal/coredb"
)

// ParseRetryAfter exposes parseRetryAfter to the external tests.
var ParseRetryAfter = parseRetryAfter

// StopManualClock fixes the clock of s's limit on test events and replays
// at t, so that a test's calls fall in one window however slowly they run.
func StopManualClock(s *Service, t time.Time) { s.manual.now = func() time.Time { return t } }

// GenericPlans exposes genericPlans to the external tests, with a way to
// age every connection's plan past planAge.
func GenericPlans(pool *pgxpool.Pool) (db coredb.DBTX, age func()) {
	g := newGenericPlans(pool)
	return g, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		for c := range g.planned {
			g.planned[c] = g.planned[c].Add(-2 * planAge)
		}
	}
}
