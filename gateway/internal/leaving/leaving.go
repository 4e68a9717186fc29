// Package leaving runs the plugins' user-left jobs (CONTRACT §16): when a
// person leaves, identity writes one core.user_left_jobs row per plugin
// that declares the hook (sdk.OnUserLeft) in the transaction that deletes
// them; any gateway claims due rows with a lease (SKIP LOCKED, as the data
// deletion callbacks), calls the plugin's reserved procedure through the
// host — never through the route table, so no client reaches it — and
// deletes the row once the plugin answers, or retries later, without end:
// a person's data must go even if a plugin is down for a day.
package leaving

import (
	"context"
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
)

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

// UserLeftPlugins names the plugins whose last manifest declares the hook
// (a plugin restarting keeps its manifest, so its job is written and waits).
func (r *Runner) UserLeftPlugins() []string {
	h := r.host.Load()
	if h == nil {
		return nil
	}
	var out []string
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
		err := r.attempt(ctx, *h, j)
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if err == nil {
			_, err = r.q.FinishUserLeftJob(sctx, coredb.FinishUserLeftJobParams{ID: j.ID, LeaseToken: &token})
		} else {
			r.log.WarnContext(ctx, "a plugin did not erase the data of a person who left; retried",
				"plugin", j.Plugin, "attempt", j.Attempts+1, "error", err)
			_, err = r.q.RetryUserLeftJob(sctx, coredb.RetryUserLeftJobParams{ID: j.ID, LeaseToken: &token,
				NextAttemptAt: pgtype.Timestamptz{Time: time.Now().Add(Delay(int(j.Attempts))), Valid: true},
				LastError:     err.Error()})
		}
		cancel()
		if err != nil {
			r.log.ErrorContext(ctx, "record a user-left job", "plugin", j.Plugin, "error", err)
		}
	}
	return len(rows)
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
