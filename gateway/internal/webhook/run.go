package webhook

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/gateway/internal/claim"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/internal/genericplan"
)

const (
	// dispatchBatch bounds how many events one dispatch statement takes
	// (it takes no more than the free job slots, fewer than this).
	dispatchBatch = 500
	// busyPoll is how soon the outbox is polled again after a poll found
	// events; idle polls back off from it, doubling up to PollInterval.
	busyPoll = 5 * time.Millisecond
	// claimBatch bounds one claim.
	claimBatch = 256
	// leaseDepth is how many jobs per worker a gateway keeps leased, so
	// that claims come in batches of twice the workers: each claim walks
	// the due deliveries, whose count it does not bound, so fewer and
	// larger claims cost PostgreSQL less per delivery. It also bounds how
	// long a hung endpoint's leased jobs wait: an app may lease about five
	// times its share of the workers (appLeases), which its share works
	// through in five attempt time-outs, the lease's length; deeper, they
	// would outlive their lease (docs/DECISIONS.md).
	leaseDepth = 4
	// claimScan is how many of the oldest due deliveries one claim
	// considers per delivery it wants, to pick each app's share from them.
	claimScan = 2
	// recordBatch bounds one recorder statement.
	recordBatch = 512
	// recordGather and recordLinger: a smaller batch waits up to
	// recordLinger for more outcomes (see recordLoop).
	recordGather = 64
	recordLinger = 10 * time.Millisecond
	// statementTimeout bounds the dispatcher's and the claimer's
	// statements. They are not cancelled when Run stops: a claim that
	// committed while its caller gave up would hold its rows for a whole
	// lease.
	statementTimeout = 30 * time.Second
)

// Run dispatches outbox events and delivers them until ctx ends. It then
// stops claiming, lets attempts in flight finish for up to DrainTimeout,
// cuts the rest (they are sent again later), records every outcome, and
// returns nil. Only one Run may be active per Service at a time; Run may be
// called again after it returned.
func (s *Service) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("webhook: Run is already running")
	}
	defer s.running.Store(false)
	book, err := s.bookkeepingPool()
	if err != nil {
		return err
	}
	defer book.Close()
	s.log.InfoContext(ctx, "webhook delivery started", "workers", s.opts.Workers)

	r := &runner{
		s: s, q: coredb.New(book), generic: coredb.New(genericplan.New(book, planAge)),
		// The queue holds every leased job, so queueing never blocks.
		jobs:      make(chan *job, leaseDepth*s.opts.Workers),
		capacity:  int64(leaseDepth * s.opts.Workers),
		results:   make(chan result, recordBatch),
		slotFreed: make(chan struct{}, 1),
		// dispatchFreed: the same for the dispatcher.
		dispatchFreed: make(chan struct{}, 1),
		held:          map[int64]int64{},
		running:       map[int64]int{},
		parked:        map[int64][]*job{},
	}
	// A busy app may lease all but the workers kept for the others.
	r.appLeases = r.capacity - int64(s.opts.Workers-s.opts.AppShare)
	// Attempts run under sendCtx: not cancelled with ctx, so that they may
	// finish while Run drains.
	sendCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()

	var dispatcher, workers, recorder sync.WaitGroup
	dispatcher.Go(func() { r.dispatchLoop(ctx) })
	dispatcher.Go(func() { s.deletionLoop(ctx, r.q) })
	recorder.Go(func() { r.recordLoop(context.WithoutCancel(ctx)) })
	for range s.opts.Workers {
		workers.Go(func() { r.work(ctx, sendCtx) })
	}
	r.claimLoop(ctx) // returns when ctx ends
	dispatcher.Wait()
	close(r.jobs) // nothing queues jobs any more

	drained := make(chan struct{})
	go func() { workers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(s.opts.DrainTimeout):
		s.log.WarnContext(ctx, "webhook attempts still in flight after the drain timeout; cutting them",
			"in_flight", r.inflight.Load())
		abort()
		<-drained
	}
	close(r.results)
	recorder.Wait()
	s.log.InfoContext(ctx, "webhook delivery stopped")
	return nil
}

// runner is the state of one Run.
type runner struct {
	s *Service
	// q runs the dispatcher's, claimer's and recorder's statements.
	q *coredb.Queries
	// generic runs DispatchEvents and the recorder's statements with a
	// generic plan made again once it is planAge old.
	generic *coredb.Queries
	jobs    chan *job
	// inflight counts jobs leased (or about to be) and not yet attempted to
	// the end. It never exceeds capacity, the size of the jobs queue.
	inflight  atomic.Int64
	capacity  int64
	results   chan result
	slotFreed chan struct{}
	// dispatchFreed is signalled with slotFreed, for the dispatcher.
	dispatchFreed chan struct{}

	// The fair share (Options.AppShare). held counts each app's jobs
	// leased and not yet attempted to the end; no app holds more than
	// appLeases, so the others always have leases left. running counts
	// each app's jobs being attempted, at most AppShare; an app's further
	// jobs wait in parked until one of its attempts ends, so that a hung
	// endpoint holds no more than AppShare workers.
	appLeases int64
	fairMu    sync.Mutex
	held      map[int64]int64
	running   map[int64]int
	parked    map[int64][]*job
}

// busy returns the apps this runner holds jobs of and how many more each
// may lease, as ClaimDeliveries and DispatchEvents take them.
func (r *runner) busy() (apps, room []int64) {
	r.fairMu.Lock()
	defer r.fairMu.Unlock()
	for app, n := range r.held {
		apps = append(apps, app)
		room = append(room, max(0, r.appLeases-n))
	}
	return apps, room
}

// anyFull reports whether an app holds all the leases it may.
func (r *runner) anyFull() bool {
	r.fairMu.Lock()
	defer r.fairMu.Unlock()
	for _, n := range r.held {
		if n >= r.appLeases {
			return true
		}
	}
	return false
}

// queue hands a leased job to the workers.
func (r *runner) queue(j *job) {
	r.fairMu.Lock()
	r.held[j.d.AppID]++
	r.fairMu.Unlock()
	r.jobs <- j
}

// start reports whether a worker may attempt j now; if its app already
// has AppShare attempts running, j is parked for the worker of one of them.
func (r *runner) start(j *job) bool {
	app := j.d.AppID
	r.fairMu.Lock()
	defer r.fairMu.Unlock()
	if r.running[app] >= r.s.opts.AppShare {
		r.parked[app] = append(r.parked[app], j)
		return false
	}
	r.running[app]++
	return true
}

// done counts j attempted to the end, and returns the next parked job of
// its app, which the caller's worker attempts in its place, or nil. It
// wakes the claimer when the app was at its lease limit: the last claim
// may have stopped there while deliveries of the app were due.
func (r *runner) done(j *job) *job {
	app := j.d.AppID
	r.fairMu.Lock()
	wasFull := r.held[app] >= r.appLeases
	if r.held[app]--; r.held[app] == 0 {
		delete(r.held, app)
	}
	var next *job
	if q := r.parked[app]; len(q) > 0 {
		next, r.parked[app] = q[0], q[1:]
		if len(r.parked[app]) == 0 {
			delete(r.parked, app)
		}
	} else if r.running[app]--; r.running[app] == 0 {
		delete(r.running, app)
	}
	r.fairMu.Unlock()
	if wasFull {
		r.s.notify()
	}
	return next
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// planAge is how long a bookkeeping connection keeps its generic plans,
// DispatchEvents' and RecordOutcomes'. Planned afresh (the pool's
// force_custom_plan), DispatchEvents cost 1–1.5 ms of planning, most of its
// cost at about 100 dispatches a second during a post-write load, and
// RecordOutcomes 0.5–0.6 ms a batch, more than most of its execution. A
// generic plan made while core.outbox was empty reads the whole outbox (a
// hash join on a sequential scan): kept until the next analyse, that was
// the stale plan force_custom_plan was chosen against; remade every second,
// it reads at most what a second added, and the next plan uses the index.
// Both statements' shapes are right at any size otherwise (EXPLAIN of the
// generic plans with empty and with 28,000–72,000-row tables; see each
// statement for what had to change).
const planAge = time.Second

// bookkeepingPool opens the connections of the dispatcher, the claimer and
// the recorder: a few, beside the gateway's pool, with synchronous_commit
// off. A database crash may then lose the last moments of this bookkeeping
// (an outbox event's dispatch with its deliveries, a claim, an outcome),
// and that only makes the affected events be dispatched or attempted again:
// duplicates, which at-least-once delivery allows, never a lost event. The
// events themselves are committed by their producers, durably. In return
// no delivery waits for a WAL flush.
func (s *Service) bookkeepingPool() (*pgxpool.Pool, error) {
	cfg := s.pool.Config().Copy()
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	// Each statement is planned for the tables as they are now. A generic
	// plan is made once, at the sixth run of a statement, and kept until
	// the table is next analysed: made while core.webhook_deliveries was
	// small, RecordOutcomes' plan read the whole table (a sequential scan
	// of 18,000 rows for 14 outcomes) for as long as a burst lasted.
	// DispatchEvents and RecordOutcomes run with a generic plan
	// (runner.generic), made again once it is planAge old, and shaped so
	// that it finds their rows by key at any size.
	cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	cfg.ConnConfig.RuntimeParams["application_name"] = "svc-webhook"
	cfg.MaxConns, cfg.MinConns = 4, 0
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("webhook: open the bookkeeping pool: %w", err)
	}
	return pool, nil
}

// statementContext is the context of one dispatcher or claimer statement:
// it outlives ctx (see statementTimeout).
func statementContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), statementTimeout)
}

// dispatchLoop fans outbox events out into deliveries. It polls the
// dispatch queue (core.outbox_pending): every busyPoll while events come,
// backing off to PollInterval when none do. (The outbox sends no
// notification: NOTIFY would serialise every commit that writes an event;
// see migration 0013.) It takes only as many events as this gateway has
// free job slots, and the deliveries it creates are leased to this gateway
// in the same statement and queued at once, so their first attempt costs
// no claim. Events beyond that stay queued, which costs nothing, rather
// than become due deliveries that a claim has to find again: while the
// queue has more, the next dispatch waits until 2×Workers slots are free
// (or busyPoll passed), as a claim does. Once a poll found nothing, the
// next ones only ask whether anything is queued (OutboxQueued) until it
// is: an idle gateway's polls cost PostgreSQL a trivial statement each
// rather than the planning of DispatchEvents.
func (r *runner) dispatchLoop(ctx context.Context) {
	wait, full, idle := busyPoll, false, false
	batch := int64(2 * r.s.opts.Workers)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-r.dispatchFreed:
			if !full || r.capacity-r.inflight.Load() < batch {
				continue
			}
			timer.Stop() // Reset below; since Go 1.23 no stale tick is left
		}
		var events, asked int64
		var err error
		queued := true
		if idle {
			queued, err = r.probe(ctx, r.q.OutboxQueued)
		}
		if queued && err == nil {
			events, asked, err = r.dispatch(ctx)
		}
		full, idle = false, false
		switch {
		case err != nil:
			if ctx.Err() == nil {
				r.s.log.ErrorContext(ctx, "dispatch outbox events", "error", err)
			}
			wait, idle = r.s.opts.PollInterval, true
		case !queued:
			wait, idle = min(max(2*wait, busyPoll), r.s.opts.PollInterval), true
		case asked == 0 || events == asked:
			// More may be waiting: at once if slots are free, else
			// when enough are (dispatchFreed) or busyPoll passed.
			full, wait = true, busyPoll
			if r.capacity-r.inflight.Load() >= batch {
				wait = 0
			}
		case events > 0:
			wait = busyPoll
		default:
			wait, idle = min(max(2*wait, busyPoll), r.s.opts.PollInterval), true
		}
		timer.Reset(wait)
	}
}

// probe runs one of the idle polls, OutboxQueued or DeliveriesDue.
func (r *runner) probe(ctx context.Context, q func(context.Context) (bool, error)) (bool, error) {
	qctx, cancel := statementContext(ctx)
	defer cancel()
	return q(qctx)
}

// dispatch runs one dispatch statement, taking at most as many events as
// there are free job slots, and queues the deliveries it leased. It
// returns how many events it took and how many it asked for (0: no slot
// was free, and it ran nothing).
func (r *runner) dispatch(ctx context.Context) (events, asked int64, err error) {
	s := r.s
	slots := r.reserve(dispatchBatch)
	if slots == 0 {
		return 0, 0, nil
	}
	token, leaseEnds := claim.Token(), time.Now().Add(s.opts.Lease)
	busyApps, busyRoom := r.busy()
	qctx, cancel := statementContext(ctx)
	defer cancel()
	rows, err := r.generic.DispatchEvents(qctx, coredb.DispatchEventsParams{
		MaxEvents: int32(slots), ClaimMax: slots, LeaseMs: s.opts.Lease.Milliseconds(), LeaseToken: token,
		AppShare: r.appLeases, BusyApps: busyApps, BusyRoom: busyRoom,
	})
	if err != nil {
		r.unreserve(slots)
		return 0, slots, err
	}
	leased := int64(0)
	for _, d := range rows {
		if d.Seq == nil {
			continue // no delivery leased: the row only carries the counts
		}
		leased++
		r.queue(&job{token: token, leaseEnds: leaseEnds, d: coredb.ClaimDeliveriesRow{
			Seq: *d.Seq, ID: *d.ID, AppID: *d.AppID, EventID: *d.EventID, EventType: *d.EventType,
			PageID: d.PageID, EventCreatedAt: d.EventCreatedAt, Data: d.Data, Test: *d.Test,
			FailedAttempts: *d.FailedAttempts, AppMode: *d.AppMode, CallbackUrl: d.CallbackUrl,
			Active: d.Active, Sealed: d.Sealed, PreviousSealed: d.PreviousSealed,
			PreviousSecretExpiresAt: d.PreviousSecretExpiresAt,
		}})
	}
	r.unreserve(slots - leased)
	if len(rows) == 0 {
		return 0, slots, nil
	}
	if rows[0].Deliveries > leased {
		s.notify() // the rest are due now: the claimer takes them
	}
	return rows[0].Events, slots, nil
}

// claimLoop keeps up to leaseDepth×Workers jobs leased, and returns when
// ctx ends. It claims once at least 2×Workers of them are free, when
// deliveries may be due: it was woken, the poll ticked, or the last claim
// came back full. So claims stay batched under load and an idle gateway
// does not query after every attempt. A smaller claim is made while an app
// holds all the leases it may, and at each poll tick: an app whose
// endpoint hangs holds leases it does not give back soon, and the other
// apps' due deliveries must not wait for them. A claim that only the poll
// asks for (no wake-up, the last claim not full) is made once
// DeliveriesDue finds a due delivery: an idle gateway's polls cost
// PostgreSQL a trivial statement each rather than the planning of
// ClaimDeliveries.
func (r *runner) claimLoop(ctx context.Context) {
	s := r.s
	// While an app holds all the leases it may, only Workers-AppShare
	// can be free: claims then have to be that small for the other apps
	// to get any.
	batch, small := int64(2*s.opts.Workers), max(1, int64(s.opts.Workers-s.opts.AppShare))
	tick := time.NewTicker(s.opts.PollInterval)
	defer tick.Stop()
	due, more, ticked, woken := true, false, false, true
	for {
		free := r.capacity - r.inflight.Load()
		ready := (free >= batch || free >= small && (ticked || r.anyFull())) && (due || more) && ctx.Err() == nil
		if ready && !more && !woken {
			// Only the poll asks: claim if something is due. A failed
			// probe lets the claim run (and say why).
			if found, err := r.probe(ctx, r.q.DeliveriesDue); err == nil && !found {
				ready, due, ticked = false, false, false
			}
		}
		if ready {
			want := min(free, claimBatch)
			got, err := r.claim(ctx, want)
			if err != nil {
				s.log.ErrorContext(ctx, "claim webhook deliveries", "error", err)
			}
			due, more, ticked, woken = false, got == want, false, false
			if more && r.capacity-r.inflight.Load() >= batch {
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
			due, woken = true, true
		case <-tick.C:
			due, ticked = true, true
		case <-r.slotFreed:
		}
	}
}

// claim leases up to n due deliveries and queues them for the workers.
func (r *runner) claim(ctx context.Context, n int64) (int64, error) {
	s := r.s
	slots := r.reserve(n)
	if slots == 0 {
		return 0, nil
	}
	token, leaseEnds := claim.Token(), time.Now().Add(s.opts.Lease)
	busyApps, busyRoom := r.busy()
	qctx, cancel := statementContext(ctx)
	defer cancel()
	rows, err := r.q.ClaimDeliveries(qctx, coredb.ClaimDeliveriesParams{
		MaxRows: int32(slots), LeaseMs: s.opts.Lease.Milliseconds(), LeaseToken: token,
		ScanRows: int32(claimScan * slots), AppShare: r.appLeases, BusyApps: busyApps, BusyRoom: busyRoom,
	})
	r.unreserve(slots - int64(len(rows)))
	if err != nil {
		return 0, err
	}
	for _, d := range rows {
		r.queue(&job{d: d, token: token, leaseEnds: leaseEnds})
	}
	return int64(len(rows)), nil
}

// reserve takes up to n free slots for jobs about to be leased and returns
// how many it took. A slot comes back through unreserve, or when a worker
// is done with its job.
func (r *runner) reserve(n int64) int64 {
	for {
		held := r.inflight.Load()
		k := min(n, r.capacity-held)
		if k <= 0 {
			return 0
		}
		if r.inflight.CompareAndSwap(held, held+k) {
			return k
		}
	}
}

func (r *runner) unreserve(k int64) {
	if k > 0 {
		r.inflight.Add(-k)
		signal(r.slotFreed)
		signal(r.dispatchFreed)
	}
}

// work runs jobs until the queue closes, and the jobs parked behind the
// ones it ran. Jobs taken after ctx ended are released unsent.
func (r *runner) work(ctx, sendCtx context.Context) {
	for j := range r.jobs {
		if !r.start(j) {
			continue
		}
		for ; j != nil; j = r.done(j) {
			var res result
			if ctx.Err() != nil {
				res = result{job: j, outcome: released}
			} else {
				res = r.s.attempt(sendCtx, j)
			}
			r.results <- res
			r.unreserve(1)
		}
	}
}
