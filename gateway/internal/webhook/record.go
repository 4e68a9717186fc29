package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/sdk"
)

// Delivery states, as stored and as the Graph shows them.
const (
	StatusPending   = "pending"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	// StatusHeld: kept unsent while the endpoint is disabled; replaying a
	// time range (app/{app_id}/deliveries/replay) sends it.
	StatusHeld = "held"
)

// recordLoop writes outcomes until the results channel closes. Whatever
// has arrived while the previous batch was being written forms the next
// batch, so batches grow with load. A batch smaller than recordGather
// waits up to recordLinger for more: each statement commits, so under a
// steady flow fewer, larger batches cost PostgreSQL less per outcome, and
// an outcome only waits for its record, never a receiver for its delivery. A batch holding an ordered delivery is
// written at once: the next event of its key waits for it.
func (r *runner) recordLoop(ctx context.Context) {
	batch := make([]result, 0, recordBatch)
	// Since Go 1.23 a stopped or reset timer leaves no stale tick.
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	for res := range r.results {
		batch = append(batch[:0], res)
		ordered, waiting := res.job.d.OrderingKey != nil, false
	fill:
		for len(batch) < recordBatch {
			var more result
			var ok bool
			select {
			case more, ok = <-r.results:
			default:
				if ordered || len(batch) >= recordGather {
					break fill
				}
				if !waiting {
					waiting = true
					linger.Reset(recordLinger)
				}
				select {
				case more, ok = <-r.results:
				case <-linger.C:
					waiting = false
					break fill
				}
			}
			if !ok {
				break fill
			}
			batch = append(batch, more)
			ordered = ordered || more.job.d.OrderingKey != nil
		}
		if waiting {
			linger.Stop()
		}
		// RecordOutcomes runs with a generic plan, as DispatchEvents does:
		// planning it afresh cost PostgreSQL more (0.5–0.6 ms a batch)
		// than most of its execution.
		r.s.record(ctx, r.generic, batch)
	}
}

// record writes one batch, retrying briefly. A batch that cannot be written
// is dropped: its leases end and the deliveries are attempted again.
func (s *Service) record(ctx context.Context, q *coredb.Queries, batch []result) {
	var err error
	for try, wait := 0, 100*time.Millisecond; try < 5; try, wait = try+1, 2*wait {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = s.writeBatch(wctx, q, batch)
		cancel()
		if err == nil {
			return
		}
		time.Sleep(wait)
	}
	s.log.ErrorContext(ctx, "cannot record webhook attempts; they will be attempted again when their lease ends",
		"attempts", len(batch), "error", err)
}

// writeBatch writes a batch's attempts, delivery states and endpoint
// health in one statement.
func (s *Service) writeBatch(ctx context.Context, q *coredb.Queries, batch []result) error {
	p := coredb.RecordOutcomesParams{WindowMs: s.opts.FailureWindow.Milliseconds()}
	health := map[int64]*endpointHealth{}
	var order []int64
	gone := map[int64]bool{}
	pauses := map[int64]time.Time{}
	ordered := false
	// Counted once the batch is written: a batch written again after a
	// failure is counted once.
	counted := make([]string, len(batch))
	for i, res := range batch {
		d := res.job.d
		entry := ""
		if a := res.attempt; a != nil {
			entry = a.json()
		}
		p.Attempts = append(p.Attempts, entry)
		status, failedInc, delay := StatusPending, int32(0), time.Duration(0)
		switch res.outcome {
		case succeeded:
			status = StatusSucceeded
			counted[i] = outcomeDelivered
		case notSent:
			status = StatusFailed
			counted[i] = outcomeNotSent
		case held:
			status = StatusHeld
			counted[i] = outcomeHeld
			if res.gone {
				gone[d.AppID] = true
			}
		case failed:
			failedInc = 1
			counted[i] = outcomeRetrying
			var retry bool
			if delay, retry = s.retryDelay(int(d.FailedAttempts)); retry && res.retryAfter > 0 {
				// The receiver said when to come back: that, not the
				// schedule, and nothing else to it meanwhile.
				delay = res.retryAfter
				if until := res.attempt.at.Add(res.retryAfter); until.After(pauses[d.AppID]) {
					pauses[d.AppID] = until
				}
			}
			if !retry {
				status = StatusFailed
				counted[i] = outcomeFailed
				s.log.InfoContext(ctx, "webhook delivery failed after its last retry",
					"delivery_id", d.ID, "app_id", d.AppID, "event_type", d.EventType, "attempts", d.FailedAttempts+1)
			}
		}
		ordered = ordered || d.OrderingKey != nil
		p.Seqs = append(p.Seqs, d.Seq)
		p.LeaseTokens = append(p.LeaseTokens, res.job.token)
		p.Statuses = append(p.Statuses, status)
		p.FailedIncs = append(p.FailedIncs, failedInc)
		p.DelaysMs = append(p.DelaysMs, delay.Milliseconds())

		if !res.viaListener && (res.outcome == succeeded || (res.outcome == failed && res.endpointFault)) {
			h := health[d.AppID]
			if h == nil {
				h = &endpointHealth{}
				health[d.AppID] = h
				order = append(order, d.AppID)
			}
			h.observe(res.outcome == succeeded, res.attempt.at)
		}
	}
	for _, app := range order {
		h := health[app]
		p.AppIds = append(p.AppIds, app)
		p.HadSuccess = append(p.HadSuccess, h.hadSuccess)
		p.Since = append(p.Since, pgtype.Timestamptz{Time: h.since, Valid: !h.since.IsZero()})
	}
	for app := range gone {
		// Before the outcomes: whoever sees a delivery held by a 410 sees
		// its endpoint disabled too. Logged, not returned: the next 410
		// disables the endpoint again.
		if err := q.DisableWebhookEndpoint(ctx, app); err != nil {
			s.log.ErrorContext(ctx, "cannot disable a webhook endpoint that answered 410", "app_id", app, "error", err)
			continue
		}
		s.log.WarnContext(ctx, "webhook endpoint disabled: the receiver answered 410 Gone", "app_id", app)
	}
	disabled, err := q.RecordOutcomes(ctx, p)
	if err != nil {
		return fmt.Errorf("record %d webhook outcomes: %w", len(batch), err)
	}
	for i, res := range batch {
		if counted[i] != "" {
			s.outcomes.WithLabelValues(sdk.FormatID(res.job.d.AppID), res.job.d.EventType, counted[i]).Inc()
		}
		if a := res.attempt; s.opts.Attempted != nil && a != nil && (res.outcome == succeeded || res.outcome == failed) {
			// A first attempt's lag runs from the event; a retry's waited
			// on the schedule, by design, and counts from its start.
			lag := a.latency
			if res.job.d.FailedAttempts == 0 {
				lag = a.at.Add(a.latency).Sub(res.job.d.EventCreatedAt.Time)
			}
			s.opts.Attempted(lag, res.outcome == failed && !res.endpointFault)
		}
	}
	for _, app := range disabled {
		s.log.WarnContext(ctx, "webhook endpoint disabled: every attempt failed for the failure window",
			"app_id", app, "window", s.opts.FailureWindow)
	}
	for app, until := range pauses {
		if err := q.PauseWebhookEndpoint(ctx, coredb.PauseWebhookEndpointParams{AppID: app,
			Until: pgtype.Timestamptz{Time: until, Valid: true}}); err != nil {
			s.log.ErrorContext(ctx, "cannot pause a webhook endpoint that answered Retry-After", "app_id", app, "error", err)
		}
	}
	if ordered {
		// An ordered delivery is done or rescheduled: the next of its key
		// may be due now.
		s.notify()
	}
	return nil
}

// attemptEntry is one attempt as stored in a delivery's log and shown by
// the Graph.
type attemptEntry struct {
	At              time.Time `json:"at"`
	StatusCode      int       `json:"status_code"`
	LatencyMs       int64     `json:"latency_ms"`
	Error           string    `json:"error"`
	ResponseExcerpt string    `json:"response_excerpt"`
	// Via is "listener" when the attempt went to gateway listen.
	Via string `json:"via,omitempty"`
}

func (a *attemptLog) json() string {
	// Strings, numbers and a time: encoding cannot fail.
	b, _ := json.Marshal(attemptEntry{
		At: a.at.UTC(), StatusCode: a.statusCode, LatencyMs: a.latency.Milliseconds(),
		Error: cleanText([]byte(a.err)), ResponseExcerpt: a.excerpt, Via: a.via,
	})
	return string(b)
}

// endpointHealth is one endpoint's outcomes in a batch, in order.
type endpointHealth struct {
	hadSuccess bool
	// since is the first failure after the last success; zero when the
	// last outcome was a success.
	since time.Time
}

func (h *endpointHealth) observe(ok bool, at time.Time) {
	switch {
	case ok:
		h.hadSuccess, h.since = true, time.Time{}
	case h.since.IsZero():
		h.since = at
	}
}
