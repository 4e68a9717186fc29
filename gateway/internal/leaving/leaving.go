// Package leaving runs the plugins' user-left jobs (CONTRACT §16): when a
// person leaves, identity writes one core.user_left_jobs row per plugin
// that declares the hook (sdk.OnUserLeft) in the transaction that deletes
// them; any gateway claims due rows with a lease (SKIP LOCKED, as the data
// deletion callbacks), calls the plugin's reserved procedure through the
// host — never through the route table, so no client reaches it — and
// deletes the row once the plugin answers, or retries later, without end:
// a person's data must go even if a plugin is down for a day.
//
// One more job, CoreJob, erases what the core holds of the person: the
// outbox's events about them (core.outbox.user_id), delivered or not, and
// the delivery log's rows of those events; the app's data deletion
// callback supersedes deliveries of their data still pending. It is
// finished only once the person's plugin jobs are (a plugin may emit an
// event about them until it has erased them) and their data deletion
// callbacks are over (an attempt needs the user id); until then each
// attempt erases what is there and the job waits, and its last erases the
// callbacks' rows too.
package leaving

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/gateway/internal/claim"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/host"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/pluginrt"
	"github.com/svcplatform/svc/internal/plugin/wire"
)

const (
	// batch bounds the jobs one claim leases.
	batch = 16
	// lease is how long a gateway holds a job it attempts.
	lease = time.Minute
	// attemptTimeout bounds one call of a plugin's hook.
	attemptTimeout = 30 * time.Second
	// maxDelay caps the wait between attempts of one job.
	maxDelay = 10 * time.Minute
	// maxWait caps the wait of the core's job for the rest of a leaving,
	// which usually ends within seconds.
	maxWait = time.Minute
	// eraseBatch bounds the rows one statement of the core's job deletes.
	eraseBatch = 1000
)

// CoreJob is the plugin column of the core's own job. No plugin is named
// so: a plugin is named after its file, and no file name holds a slash.
const CoreJob = "/core"

// errWaiting is the core's job waiting for the rest of a leaving.
var errWaiting = errors.New("waiting for the plugins' jobs and the data deletion callbacks of the person")

// Plugins is what the runner needs of the plugin host.
type Plugins interface {
	Plugins() []host.Info
	Invoke(ctx context.Context, plugin string, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error)
}

// Runner runs the user-left jobs; it implements coregraph.Leavers.
type Runner struct {
	q    *coredb.Queries
	log  *slog.Logger
	host atomic.Pointer[Plugins]
	wake chan struct{}
	// Poll is the wait between claims when nothing wakes the runner.
	Poll time.Duration
}

// New returns a runner over the core database; UseHost gives it the
// plugins once the host is built.
func New(q *coredb.Queries, log *slog.Logger) *Runner {
	return &Runner{q: q, log: log, wake: make(chan struct{}, 1), Poll: time.Second}
}

// UseHost sets the plugin host the jobs call.
func (r *Runner) UseHost(h Plugins) { r.host.Store(&h) }

// UserLeftPlugins names the jobs a leaving writes: the core's own
// (CoreJob) and one per plugin whose last manifest declares the hook (a
// plugin restarting keeps its manifest, so its job is written and waits).
func (r *Runner) UserLeftPlugins() []string {
	out := []string{CoreJob}
	h := r.host.Load()
	if h == nil {
		return out
	}
	for _, p := range (*h).Plugins() {
		if p.Plugin != nil && p.Plugin.OnUserLeft {
			out = append(out, p.Name)
		}
	}
	return out
}

// WakeUserLeft runs the due jobs at once rather than at the next poll.
func (r *Runner) WakeUserLeft() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run runs due jobs until ctx ends.
func (r *Runner) Run(ctx context.Context) { claim.Loop(ctx, r.Poll, r.wake, batch, r.runBatch) }

// runBatch claims one batch of due jobs and attempts each; it answers how
// many it claimed.
func (r *Runner) runBatch(ctx context.Context) int {
	h := r.host.Load()
	if h == nil {
		return 0
	}
	token := claim.Token()
	rows, err := r.q.ClaimUserLeftJobs(ctx, coredb.ClaimUserLeftJobsParams{
		LeaseToken: &token, LeaseSeconds: lease.Seconds(), MaxRows: batch})
	if err != nil {
		if ctx.Err() == nil {
			r.log.ErrorContext(ctx, "claim user-left jobs", "error", err)
		}
		return 0
	}
	for _, j := range rows {
		var err error
		if j.Plugin == CoreJob {
			err = r.eraseCore(ctx, j.UserID)
		} else {
			err = r.attempt(ctx, *h, j)
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if err == nil {
			_, err = r.q.FinishUserLeftJob(sctx, coredb.FinishUserLeftJobParams{ID: j.ID, LeaseToken: &token})
		} else {
			if !errors.Is(err, errWaiting) {
				r.log.WarnContext(ctx, "a person who left is not erased yet; retried",
					"plugin", j.Plugin, "attempt", j.Attempts+1, "error", err)
			}
			wait := Delay(int(j.Attempts))
			if errors.Is(err, errWaiting) {
				wait = min(wait, maxWait)
			}
			_, err = r.q.RetryUserLeftJob(sctx, coredb.RetryUserLeftJobParams{ID: j.ID, LeaseToken: &token,
				NextAttemptAt: pgtype.Timestamptz{Time: time.Now().Add(wait), Valid: true},
				LastError:     err.Error()})
		}
		cancel()
		if err != nil {
			r.log.ErrorContext(ctx, "record a user-left job", "plugin", j.Plugin, "error", err)
		}
	}
	return len(rows)
}

// eraseCore runs the core's job once: the events about the person and
// their deliveries go, the outbox first (a statement waiting for a
// dispatcher's lock on an event lets the next see the deliveries it made);
// errWaiting while the rest of the leaving is under way, else the
// person's finished data deletion callbacks go too.
func (r *Runner) eraseCore(ctx context.Context, userID int64) error {
	uid := fmt.Sprint(userID)
	for _, erase := range []func() (int64, error){
		func() (int64, error) {
			return r.q.EraseUserEvents(ctx, coredb.EraseUserEventsParams{UserID: uid, Batch: eraseBatch})
		},
		func() (int64, error) {
			return r.q.EraseUserDeliveries(ctx, coredb.EraseUserDeliveriesParams{UserID: uid, Batch: eraseBatch})
		},
	} {
		for {
			n, err := erase()
			if err != nil {
				return err
			}
			if n < eraseBatch {
				break
			}
		}
	}
	busy, err := r.q.UserLeftWorkRemaining(ctx, coredb.UserLeftWorkRemainingParams{UserID: userID, CoreJob: CoreJob})
	if err != nil {
		return err
	}
	if busy {
		return errWaiting
	}
	_, err = r.q.EraseFinishedDataDeletionRequests(ctx, userID)
	return err
}

// attempt calls the plugin's hook once, with the operator's authority.
func (r *Runner) attempt(ctx context.Context, h Plugins, j coredb.ClaimUserLeftJobsRow) error {
	in, err := proto.Marshal(&pluginv1.UserLeftRequest{UserId: fmt.Sprint(j.UserID)})
	if err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	resp, err := h.Invoke(actx, j.Plugin, &pluginv1.InvokeRequest{Procedure: pluginrt.UserLeftProcedure, Request: in,
		Principal: &pluginv1.Principal{TokenKind: pluginv1.TokenKind_TOKEN_KIND_ADMIN}})
	if err != nil {
		return err
	}
	if e := resp.GetError(); e != nil {
		return wire.ErrorFromProto(e)
	}
	return nil
}

// Delay is the wait after the attempt numbered failedBefore (0 first):
// doubling from 2 s up to 10 minutes.
func Delay(failedBefore int) time.Duration {
	d := 2 * time.Second
	for range failedBefore {
		if d *= 2; d >= maxDelay {
			return maxDelay
		}
	}
	return d
}
