package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/secretbox"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/netguard"
)

// APIVersion is the api_version written in every body.
const APIVersion = "v1"

// AppGuard applies the platform's one rule of who may act on an app
// (CONTRACT §4) to the caller of the call ctx carries (the gateway's
// principal, as its dispatcher authorized it), for a node whose app the
// gateway cannot read from the request (a delivery's app). It returns nil
// or the refusal to answer. The gateway backs it with auth.
type AppGuard func(ctx context.Context, appID string, least pluginv1.AppRole) error

// Defaults of Options.
const (
	DefaultAttemptTimeout = 10 * time.Second
	DefaultVerifyTimeout  = 10 * time.Second
	DefaultJitter         = 0.2
	DefaultFailureWindow  = 24 * time.Hour
	DefaultWorkers        = 64
	DefaultPollInterval   = 100 * time.Millisecond
	DefaultDrainTimeout   = 5 * time.Second
)

// DefaultRetrySchedule is the wait before each retry of a failed delivery
// (CONTRACT §6); after the last one the delivery fails.
var DefaultRetrySchedule = []time.Duration{
	10 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute,
	2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// Options configure a Service. Zero values take the defaults.
type Options struct {
	// Pool is the gateway's database, migrated. Required.
	Pool *pgxpool.Pool
	// Logger receives the service's logs; default slog.Default().
	Logger *slog.Logger
	// PublicURL names the platform in the User-Agent of callback requests.
	PublicURL string
	// SecretBox opens the apps' signing secrets: their client secrets,
	// which identity keeps sealed under the master key in core.apps.
	// Required.
	SecretBox *secretbox.Box
	// EventTypes returns the event types apps may subscribe to and send
	// test events of: those the loaded plugins declare. Required when
	// Register is used.
	EventTypes func() []string
	// Guard decides who may act on an app, for the Graph nodes that name a
	// delivery rather than an app. Required when Register is used.
	Guard AppGuard
	// AllowPrivateNetworks lets callbacks reach private, shared (100.64/10)
	// and link-local addresses, for installations whose apps live on an
	// internal network. Loopback stays reserved to apps in development mode;
	// cloud metadata addresses stay refused.
	AllowPrivateNetworks bool
	// RefuseLoopback refuses callbacks on this machine's loopback addresses
	// even for development apps: the operator's choice on a shared server,
	// the default when the development world is not seeded.
	RefuseLoopback bool
	// AttemptTimeout bounds one attempt: a 2xx must arrive within it.
	AttemptTimeout time.Duration
	// VerifyTimeout bounds the verification request made when saving.
	VerifyTimeout time.Duration
	// RetrySchedule is the wait before each retry; default
	// DefaultRetrySchedule. Its length is the number of retries.
	RetrySchedule []time.Duration
	// Jitter spreads each wait by ± this fraction; default 0.2, negative
	// for none.
	Jitter float64
	// FailureWindow: an endpoint failing every attempt for this long is
	// disabled. Default 24 h.
	FailureWindow time.Duration
	// Workers bounds the attempts in flight in this gateway. Default 64:
	// with 32 (and so 128 jobs leased) a backlog's workers ran the queue
	// dry while the next batch was dispatched, and parked (performance.md).
	Workers int
	// AppShare bounds one app's deliveries leased by this gateway (being
	// attempted or queued for a worker), so that an app whose endpoint is
	// slow or hangs holds at most this many workers and the other apps
	// keep the rest. Default three quarters of Workers: one busy app alone
	// still has most of the workers. Each gateway applies it to itself: N
	// gateways give one app up to N×AppShare.
	AppShare int
	// PollInterval is the longest the outbox and the due deliveries go
	// unpolled: the worst added latency of an event after a quiet spell
	// (while events flow the outbox is polled every few milliseconds).
	// Default 100 ms.
	PollInterval time.Duration
	// Lease is how long a claimed delivery stays reserved to this gateway.
	// It must exceed AttemptTimeout; default 2×AttemptTimeout + 30 s. A
	// gateway that dies holding leases delays those deliveries by up to it.
	Lease time.Duration
	// DrainTimeout is how long Run lets attempts in flight finish when it
	// stops; the rest are cut and sent again later. Default 5 s.
	DrainTimeout time.Duration
	// TLSConfig verifies HTTPS callbacks, e.g. with a private CA; nil uses
	// the system roots.
	TLSConfig *tls.Config
	// LookupIP resolves callback host names; default the system resolver.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// Attempted, when set, learns of every attempt recorded, for the SLA
	// (package sla): lag is from the event to a first attempt's end (a
	// retry's own duration), and ours says it failed by the platform's
	// fault, not the receiver's.
	Attempted func(lag time.Duration, ours bool)
}

// Service delivers webhooks and serves the webhook Graph nodes. Create it
// with New, register its methods with Register, and call Run once.
type Service struct {
	// manual limits test events and replays per app.
	manual     manualLimiter
	opts       Options
	pool       *pgxpool.Pool
	q          *coredb.Queries
	log        *slog.Logger
	box        *secretbox.Box
	guard      AppGuard
	eventTypes func() []string
	lookupIP   func(ctx context.Context, host string) ([]netip.Addr, error)

	// One client per connection policy, so that a connection opened under
	// one policy is never reused under another (see policyFor).
	reaches   [policies]netguard.Reach
	clients   [policies]*http.Client
	userAgent string

	// outcomes counts recorded attempts by app, event type and outcome
	// (svc_webhook_attempts_total).
	outcomes *prometheus.CounterVec

	// listeners are the streams of gateway listen open on this gateway.
	listeners listenHub

	// wake tells the running claimer that deliveries were created here.
	wake    chan struct{}
	running atomic.Bool
	// deletionWake tells the data deletion sender that requests were
	// written here (WakeDeletions).
	deletionWake chan struct{}
}

// New checks opts and returns a Service.
func New(opts Options) (*Service, error) {
	if opts.Pool == nil {
		return nil, errors.New("webhook: Options.Pool is required")
	}
	if opts.SecretBox == nil {
		return nil, errors.New("webhook: Options.SecretBox is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	setDefault(&opts.AttemptTimeout, DefaultAttemptTimeout)
	setDefault(&opts.VerifyTimeout, DefaultVerifyTimeout)
	setDefault(&opts.FailureWindow, DefaultFailureWindow)
	setDefault(&opts.PollInterval, DefaultPollInterval)
	setDefault(&opts.DrainTimeout, DefaultDrainTimeout)
	setDefault(&opts.Lease, 2*opts.AttemptTimeout+30*time.Second)
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.AppShare <= 0 {
		opts.AppShare = max(1, opts.Workers-opts.Workers/4)
	}
	if opts.RetrySchedule == nil {
		opts.RetrySchedule = DefaultRetrySchedule
	}
	opts.RetrySchedule = slices.Clone(opts.RetrySchedule)
	switch {
	case opts.Jitter == 0:
		opts.Jitter = DefaultJitter
	case opts.Jitter < 0:
		opts.Jitter = 0
	case opts.Jitter >= 1:
		return nil, fmt.Errorf("webhook: Jitter %v must be below 1", opts.Jitter)
	}
	if opts.Lease <= opts.AttemptTimeout {
		return nil, fmt.Errorf("webhook: Lease %s must exceed AttemptTimeout %s", opts.Lease, opts.AttemptTimeout)
	}
	if opts.LookupIP == nil {
		opts.LookupIP = netguard.SystemLookup
	}
	s := &Service{
		opts: opts, pool: opts.Pool, q: coredb.New(opts.Pool),
		log: opts.Logger.With("component", "webhook"), box: opts.SecretBox, guard: opts.Guard, eventTypes: opts.EventTypes,
		lookupIP: opts.LookupIP, wake: make(chan struct{}, 1), deletionWake: make(chan struct{}, 1), outcomes: newOutcomes(),
		userAgent: "svc-webhooks/1.0",
	}
	if opts.PublicURL != "" {
		s.userAgent += " (+" + opts.PublicURL + ")"
	}
	private, loopback := opts.AllowPrivateNetworks, !opts.RefuseLoopback
	s.reaches = [policies]netguard.Reach{
		plainDev: {Loopback: loopback},
		tlsDev:   {Public: true, Loopback: loopback, Private: private},
		tlsLive:  {Public: true, Private: private},
	}
	for p, r := range s.reaches {
		s.clients[p] = s.newClient(r)
	}
	return s, nil
}

func setDefault(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}

// Backlog counts the deliveries not yet done, for metrics.
func (s *Service) Backlog(ctx context.Context) (int64, error) {
	n, err := s.q.CountPendingWebhookDeliveries(ctx)
	if err != nil {
		return 0, fmt.Errorf("webhook: count pending deliveries: %w", err)
	}
	return n, nil
}

// notify wakes the running claimer, if any, without blocking.
func (s *Service) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
