package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	svcroot "github.com/svcplatform/svc"
	"github.com/svcplatform/svc/gateway/internal/admin"
	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/catalog"
	"github.com/svcplatform/svc/gateway/internal/config"
	"github.com/svcplatform/svc/gateway/internal/coregraph"
	"github.com/svcplatform/svc/gateway/internal/dispatch"
	"github.com/svcplatform/svc/gateway/internal/docsearch"
	"github.com/svcplatform/svc/gateway/internal/graph"
	"github.com/svcplatform/svc/gateway/internal/host"
	"github.com/svcplatform/svc/gateway/internal/host/sandbox"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/leaving"
	"github.com/svcplatform/svc/gateway/internal/oauth"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/openai"
	"github.com/svcplatform/svc/gateway/internal/openapi"
	"github.com/svcplatform/svc/gateway/internal/prune"
	"github.com/svcplatform/svc/gateway/internal/replica"
	"github.com/svcplatform/svc/gateway/internal/secretbox"
	"github.com/svcplatform/svc/gateway/internal/seed"
	"github.com/svcplatform/svc/gateway/internal/server"
	"github.com/svcplatform/svc/gateway/internal/sla"
	"github.com/svcplatform/svc/gateway/internal/status"
	"github.com/svcplatform/svc/gateway/internal/store"
	"github.com/svcplatform/svc/gateway/internal/version"
	"github.com/svcplatform/svc/gateway/internal/web/chatapp"
	"github.com/svcplatform/svc/gateway/internal/web/console"
	"github.com/svcplatform/svc/gateway/internal/webhook"
	adminv1 "github.com/svcplatform/svc/gen/svc/admin/v1"
	"github.com/svcplatform/svc/gen/svc/admin/v1/adminv1connect"
	catalogv1 "github.com/svcplatform/svc/gen/svc/catalog/v1"
	"github.com/svcplatform/svc/gen/svc/catalog/v1/catalogv1connect"
	platformv1 "github.com/svcplatform/svc/gen/svc/platform/v1"
	"github.com/svcplatform/svc/gen/svc/platform/v1/platformv1connect"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/memtrim"
	"github.com/svcplatform/svc/internal/plugin/protocol"
	"github.com/svcplatform/svc/internal/readpool"
	"github.com/svcplatform/svc/internal/tracing"
	"github.com/svcplatform/svc/internal/tracing/otlp"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
)

// Run starts the gateway with command-line args and serves until ctx is
// cancelled or SIGINT/SIGTERM arrives. Logs go to stderr as JSON; stdout
// gets the short human summary of how to call the platform.
//
// The gateway is its parts, built in dependency order (each part's
// constructor takes the parts it needs), started, then stopped in the
// reverse order: the list below is the whole wiring.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := config.Parse(args, os.Getenv, stderr)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel)
	slog.SetDefault(log)
	// No other process, of this user or a plugin's, may read the
	// gateway's environment or memory (the master key, tokens in flight).
	if err := sandbox.Harden(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	g := &parts{cfg: cfg, log: log, stdout: stdout, stop: stop, metrics: observe.NewMetrics()}
	g.stderr = stderr
	defer g.stopAll()
	for _, part := range []func(context.Context) error{
		g.dataDir,    // the data folder, claimed by one gateway at a time
		g.tracing,    // first, so that what follows traces too
		g.listener,   // the port, and the public URL it gives
		g.database,   // the master key, then PostgreSQL (embedded or not)
		g.identity,   // users, Pages, apps; the authenticator
		g.webhooks,   // subscriptions and delivery
		g.dispatcher, // the gateway's own services and the call path
		g.server,     // the one port's HTTP server, serving the call path
		g.signIn,     // seed, OAuth server, sign-in pages, console
		g.plugins,    // the plugin host and what follows its table
		g.edges,      // Graph, listen, plugins' declared paths, /metrics
		g.background, // plugins started; pruning, delivery, reloads
	} {
		if err := part(ctx); err != nil {
			return err
		}
	}
	return g.serve(ctx)
}

// parts are the gateway's parts, each set by the step that builds it.
type parts struct {
	cfg    config.Config
	log    *slog.Logger
	stdout io.Writer
	// stop ends the serving context (SIGINT, SIGTERM or a failure).
	stop func()
	// stops are run by stopAll, the last added first.
	stops []func()

	ln      net.Listener
	box     *secretbox.Box
	db      *store.Store
	ids     *identity.Service
	authn   *auth.Authenticator
	metrics *observe.Metrics
	trimmer *memtrim.Trimmer
	srv     *server.Server
	hooks   *webhook.Service
	// leavers runs the plugins' user-left jobs.
	leavers *leaving.Runner
	core    *sdk.Plugin
	calls   *callPath
	// seeded is the development world seeded at this start (nil if none),
	// whose sponsored item and lenses are made once the plugins serve.
	seeded *seed.Credentials
	r      *dispatch.Dispatcher
	host   *host.Host
	docs   *docsearch.Refresher
	// outcomes counts the SLA's requests; probes keep the status page's.
	outcomes *sla.Recorder
	probes   *status.Prober

	// stderr is where logs go; accessLines holds the access log's lines
	// until they are written there (nil: no access log).
	stderr      io.Writer
	accessLines *observe.LineWriter
}

// onStop adds a step to stopAll.
func (g *parts) onStop(f func()) { g.stops = append(g.stops, f) }

// stopAll stops what was started, in the reverse order.
func (g *parts) stopAll() {
	for i := len(g.stops) - 1; i >= 0; i-- {
		g.stops[i]()
	}
}

func (g *parts) dataDir(context.Context) error {
	release, err := claimDataDir(g.cfg.DataDir)
	if err != nil {
		return err
	}
	g.onStop(release)
	return nil
}

func (g *parts) tracing(ctx context.Context) error {
	flush, err := otlp.Setup(ctx, "gateway", Version, g.cfg.TracingEndpoint)
	if err != nil {
		return err
	}
	g.onStop(func() {
		fctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = flush(fctx)
	})
	if g.cfg.TracingEndpoint != "" {
		g.log.Info("tracing on", "endpoint", g.cfg.TracingEndpoint)
	}
	return nil
}

func (g *parts) listener(context.Context) error {
	ln, err := net.Listen("tcp", g.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", g.cfg.Addr, err)
	}
	g.ln = ln
	g.onStop(func() { _ = ln.Close() })
	if strings.HasSuffix(g.cfg.PublicURL, ":0") {
		// Port 0 asks the kernel for a free port; tell clients the real one.
		g.cfg.PublicURL = strings.TrimSuffix(g.cfg.PublicURL, "0") + fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	}
	return nil
}

func (g *parts) database(ctx context.Context) error {
	box, keySource, err := secretbox.Load(os.Getenv, g.cfg.DataDir)
	if err != nil {
		return fmt.Errorf("master key: %w", err)
	}
	g.box = box
	g.log.Info("master key loaded", "source", keySource, "fingerprint", box.Fingerprint())
	// The embedded cluster's superuser signs in with a password derived
	// from the master key, so that plugins, which can reach its socket,
	// can connect only as their own roles (store.PluginURL).
	db, err := store.Open(ctx, g.cfg.DatabaseURL, g.cfg.DataDir, embeddedPassword(box), g.log)
	if err != nil {
		return err
	}
	g.db = db
	g.onStop(db.Close)
	return nil
}

func (g *parts) identity(context.Context) error {
	g.ids = identity.New(g.db.Pool)
	g.outcomes = sla.NewRecorder(g.db.Pool, g.log.With("component", "sla"))
	// Client secrets sign webhooks, so identity keeps them sealed too.
	g.ids.SetSealer(g.box)
	g.authn = auth.New(g.ids, auth.Options{})
	return nil
}

func (g *parts) server(context.Context) error {
	// The trimmer hands memory back to the OS after start-up, each reload
	// and each burst of traffic.
	g.trimmer = memtrim.New()
	var accessLog io.Writer
	if g.cfg.AccessLog == "on" && logLevel(g.cfg.LogLevel) <= slog.LevelInfo {
		// The access log's lines are gathered and written together
		// (observe.LineWriter): a write per request is a tenth of a chat
		// completion's CPU at one request in flight.
		g.accessLines = observe.NewLineWriter(g.stderr, accessLogDelay)
		g.onStop(func() { _ = g.accessLines.Close() })
		accessLog = g.accessLines
	}
	g.srv = server.New(server.Options{
		Metrics:      g.metrics,
		Authenticate: dispatch.Authenticate(g.authn),
		AccessLog:    accessLog,
		App: func(ctx context.Context) string {
			app, _ := dispatch.Caller(ctx)
			return app
		},
		Activity: g.trimmer.Touch,
		Outcomes: g.outcomes,
		// Every method of the route table is served through the dispatcher.
		Calls: g.r,
		Ready: func(ctx context.Context) error {
			if err := g.db.Pool.Ping(ctx); err != nil {
				return err
			}
			return g.host.Ready()
		},
	})
	return nil
}

func (g *parts) webhooks(context.Context) error {
	authn := g.authn
	hooks, err := webhook.New(webhook.Options{
		Pool: g.db.Pool, Logger: g.log, PublicURL: g.cfg.PublicURL, SecretBox: g.box,
		AllowPrivateNetworks: g.cfg.WebhookAllowPrivateNetworks,
		RefuseLoopback:       g.cfg.WebhookAllowLoopback != nil && !*g.cfg.WebhookAllowLoopback,
		Guard: func(ctx context.Context, appID string, least pluginv1.AppRole) error {
			return authn.AuthorizeApp(ctx, auth.FromContext(ctx), least, appID)
		},
		// The gateway's own app events, and those the plugins declare.
		EventTypes: func() []string {
			core := []string{identity.CheckupEventDue}
			if g.host == nil {
				return core
			}
			return append(core, g.host.EventTypes()...)
		},
		Attempted: func(lag time.Duration, ours bool) { g.outcomes.Record(sla.Webhooks, lag, ours) },
	})
	g.hooks = hooks
	return err
}

// signIn: identity, sign-in and the OAuth server (issue #4), see
// startIdentity.
func (g *parts) signIn(ctx context.Context) error {
	st, err := startIdentity(ctx, g.cfg, g.ids, g.authn, g.srv, g.hooks, g.box, g.stdout)
	if st != nil {
		g.seeded = st.Seeded
	}
	return err
}

// dispatcher builds the gateway's own services and the dispatcher every
// call takes: route, validate, authorize, invoke.
func (g *parts) dispatcher(ctx context.Context) error {
	// The gateway's own Graph nodes run in-process on the plugin SDK, so
	// they pass the same routing, validation and access checks as plugins;
	// they reach what plugins declare through the dispatcher (callPath).
	g.calls = &callPath{}
	g.core = sdk.New(sdk.Info{Name: "core", Version: buildVersion})
	// The plugins' user-left jobs: the runner learns the host once built.
	g.leavers = leaving.New(g.ids.Queries(), g.log.With("component", "leaving"))
	coregraph.New(coregraph.Options{Identity: g.ids,
		Forget: g.authn.Forget, PageChanged: g.authn.ForgetPage, AppChanged: g.authn.ForgetApp, UserChanged: g.authn.ForgetUser, Plugins: g.calls, Deletions: g.hooks,
		Leavers: g.leavers, AuthorizeBusiness: g.authn.AuthorizeBusiness}).Register(g.core)
	g.hooks.Register(g.core)
	reads, err := g.replica(ctx)
	if err != nil {
		return err
	}
	g.r, err = dispatch.New(dispatch.Options{Auth: g.authn, Core: g.core,
		Calls: observe.NewCalls(g.metrics), Reads: reads})
	g.calls.d = g.r
	return err
}

// replica: a read replica, when configured, serves plugin reads that may
// lag; the gateway's own lookups (tokens, sessions, apps) stay on the
// primary.
func (g *parts) replica(ctx context.Context) (dispatch.Reads, error) {
	c := g.cfg.Replica
	if c.URL == "" {
		return nil, nil
	}
	reads, err := replica.New(replica.Options{Primary: g.db.Pool, URL: c.URL,
		MaxLag: time.Duration(c.MaxLag), MaxLagBytes: c.MaxLagBytes, Log: g.log.With("component", "replica")})
	if err != nil {
		return nil, err
	}
	g.onStop(reads.Close)
	g.metrics.Registry().MustRegister(reads.Collectors()...)
	go reads.Run(ctx)
	g.log.Info("read replica configured", "max_lag", time.Duration(c.MaxLag).String(), "max_lag_bytes", c.MaxLagBytes)
	return reads, nil
}

// plugins builds the plugin host, the compiled-in services that read it,
// and what follows each new route table: the API reference, the docs
// search index, the memory trimmer.
func (g *parts) plugins(ctx context.Context) error {
	r := g.r
	g.host = host.New(host.Options{
		Dir: g.cfg.PluginsDir, Pins: g.cfg.PluginPins, Logger: g.log,
		// Each plugin runs contained (package sandbox): its own user when
		// the gateway is root, a Landlock sandbox otherwise.
		RequireIsolation: g.cfg.RequirePluginIsolation, Instance: g.cfg.DataDir,
		DigestFile: filepath.Join(g.cfg.DataDir, "plugin-digests.json"),
		HostServer: r.HostServer(g.ids),
		OnChange:   r.Rebuild,
		// Plugins get a scrubbed environment (host.pluginEnv) plus this.
		Env: func(plugin string) ([]string, error) { return g.pluginEnv(ctx, plugin) },
	})
	r.UseHost(g.host)
	g.leavers.UseHost(g.host)
	docsIndex := docsearch.NewIndex(g.db.Pool)
	g.srv.Compiled(compiledServices(admin.New(g.host, r.Routes).WithUsers(g.ids.Users, g.authn.ForgetUser).
		WithCheckups(g.ids.Apps, g.authn.ForgetApp),
		catalog.New(r, g.host.Plugins, catalog.SDKs(buildVersion)),
		docsearch.NewService(docsIndex))...)
	// The API reference and the docs search index follow the route table:
	// rebuilt (the reference, lazily) and refreshed (the index, off the
	// request path) whenever a plugin loads, restarts or goes.
	reference := openapi.New(openapi.Info{Title: "svc", Version: buildVersion, ServerURL: g.cfg.PublicURL}, r.Table, compiledReference())
	g.srv.Handle("GET "+openapi.Path, reference)
	docEntries, err := docsearch.DocEntries(svcroot.Docs)
	if err != nil {
		return fmt.Errorf("embedded docs: %w", err)
	}
	g.docs = docsearch.NewRefresher(docsIndex, func() ([]docsearch.Entry, error) {
		doc, _ := reference.Current()
		return append(slices.Clone(docEntries), docsearch.APIEntries(doc)...), nil
	}, g.log.With("component", "docsearch"))
	r.OnTable(func() {
		g.docs.Trigger()
		g.trimmer.Trigger()
	})
	return nil
}

// pluginEnv is what a plugin's environment adds to the scrubbed one: the
// database in use, whether the development seed is on, its settings
// (plugins.<name> of the configuration), and tracing.
func (g *parts) pluginEnv(ctx context.Context, plugin string) ([]string, error) {
	dbURL, err := pluginDatabaseURL(ctx, g.db, g.box, plugin, g.log)
	if err != nil {
		return nil, err
	}
	// SVC_DEV_SEED=1 tells every plugin that this is a development
	// installation (the development seed is on), where it may add its own
	// conveniences: the wearables plugin's simulated device, the chat
	// plugin's sponsored item; the gateway need not know plugin schemas
	// for that.
	devSeed := "1"
	if g.cfg.NoDevSeed {
		devSeed = "0"
	}
	env := []string{migrate.EnvDatabaseURL + "=" + dbURL, "SVC_DEV_SEED=" + devSeed}
	if g.cfg.Replica.URL != "" {
		// The standby has the plugin's role by replication.
		replicaURL, err := store.SameRole(g.cfg.Replica.URL, dbURL, g.db.URL)
		if err != nil {
			return nil, err
		}
		env = append(env, readpool.EnvURL+"="+replicaURL)
	}
	env = append(env, g.cfg.PluginEnv(plugin, os.LookupEnv)...)
	if g.cfg.TracingEndpoint != "" {
		env = append(env, tracing.EnvEndpoint+"="+g.cfg.TracingEndpoint)
	}
	return env, nil
}

// edges registers the entry points on the server beside the dispatcher's
// own (Connect, gRPC, REST): the Graph, gateway listen, the plain HTTP
// paths plugins declare, and /metrics.
func (g *parts) edges(ctx context.Context) error {
	r, authn := g.r, g.authn
	graphEndpoint := graph.New(graph.Options{
		PublicURL:   g.cfg.PublicURL,
		Dispatcher:  r,
		Idempotency: graph.NewPGIdempotency(g.db.Pool).SealWith(g.box),
		Limiter:     graph.NewLimiter(limits(g.cfg.RateLimits)),
		AccessToken: authn.AccessToken,
	})
	g.srv.Handle(graph.Path, graphEndpoint)
	// The server's transcoder and the Graph node router follow the route
	// table: each is built for a new table before it is in use. The first
	// table is built once both follow it. So does the scope catalog: the
	// scopes plugins declare are recorded for every gateway.
	r.Follow(g.srv, graphEndpoint, newDeclaredScopes(g.ids, g.log.With("component", "scopes")))
	if err := r.Rebuild(nil); err != nil {
		return fmt.Errorf("build routes: %w", err)
	}
	// gateway listen: an app's deliveries over an outbound stream, to a
	// developer's machine (package webhook, listen.go). Who may listen is
	// who may manage the app's subscription: its key or token, or a team
	// member's token with the Developer role at least (CONTRACT §4).
	listen := g.hooks.ListenHandler(ctx, func(r *http.Request, appID string) error {
		// The server resolved the credential already, for every request.
		p, err := auth.Caller(r.Context())
		if err != nil {
			return err
		}
		return authn.AuthorizeApp(r.Context(), p, pluginv1.AppRole_APP_ROLE_DEVELOPER, appID)
	}, apierr.Write)
	g.srv.Handle("GET "+webhook.ListenPath, listen)
	g.srv.Handle("POST "+webhook.ListenAckPath, listen)
	// Plain HTTP paths plugins declare (the completions plugin's POST
	// /v1/chat/completions and GET /v1/models, on OpenAI's wire), and the
	// metrics plugins hand over.
	g.srv.HandleDeclared(openai.New(g.calls, g.cfg.PublicURL))
	// The platform's status, SLA and incidents (CONTRACT §18).
	g.probes = status.New(status.Options{Pool: g.db.Pool, Log: g.log.With("component", "status"),
		Plugins: func() []string {
			var names []string
			for _, p := range g.host.Plugins() {
				names = append(names, p.Name)
			}
			return names
		},
		Probe: g.host.Probe})
	status.NewService(g.db.Pool, g.probes).Register(g.srv.Handle)
	g.metrics.AddGatherer(openai.Gatherer(g.calls))
	// /metrics: on the main port to the admin token only, or on the
	// operator's own listener to whoever reaches it (CONTRACT §15).
	if g.cfg.MetricsAddr == "" {
		g.srv.Handle("GET /metrics", auth.AdminOnly(g.metrics.Handler()))
		return nil
	}
	mln, err := net.Listen("tcp", g.cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("listen on %s (--metrics-addr): %w", g.cfg.MetricsAddr, err)
	}
	go serveMetrics(ctx, mln, g.metrics.Handler(), g.log)
	g.log.Info("metrics serving", "addr", mln.Addr().String())
	return nil
}

// background starts the plugins and the gateway's own background work.
func (g *parts) background(ctx context.Context) error {
	go g.docs.Run(ctx)
	go g.trimmer.Run(ctx)
	if err := g.host.Start(ctx); err != nil {
		return fmt.Errorf("start plugins: %w", err)
	}
	g.onStop(func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := g.host.Close(closeCtx); err != nil {
			g.log.Error("stop plugins", "error", err)
		}
	})
	go reloadOnSIGHUP(ctx, g.host, g.log)
	if g.seeded != nil {
		// The world seeded at this start gets its sponsored item through
		// the ads plugin's API, now that plugins serve.
		if ok, err := seed.Sponsored(ctx, g.r, g.seeded); !ok {
			g.log.Info("development seed: no sponsored item, the ads plugin is not installed")
		} else if err != nil {
			g.log.Error("development seed: no sponsored item", "error", err)
		}
		// The seeded lenses are made through the partners' path, so they
		// need the plugins serving; a failure leaves the world without
		// lenses, not the gateway down.
		if err := seed.Lenses(ctx, g.r, g.seeded); err != nil {
			g.log.Error("development seed: lenses", "error", err)
		}
	}
	go g.leavers.Run(ctx)
	// Data use checkup reminders (CONTRACT §17): written once per due
	// period whichever gateway looks first.
	go g.ids.Apps.RunCheckupReminders(ctx, checkupPoll, func(err error) {
		g.log.Error("data use checkup reminders", "error", err)
	})
	// Partner tiers (CONTRACT §18): each partner assessed at least daily,
	// by whichever gateway claims it first.
	go g.ids.Partners.RunAssessments(ctx, partnerPoll, func(err error) {
		g.log.Error("partner assessments", "error", err)
	})
	// The core tables stay bounded: one gateway at a time prunes.
	c := g.cfg.Retention
	pruner := prune.New(prune.Options{Pool: g.db.Pool, Log: g.log.With("component", "prune"), Interval: time.Duration(c.Interval),
		Retention: prune.Retention{Events: time.Duration(c.Events), Deliveries: time.Duration(c.Deliveries),
			IdempotencyKeys: time.Duration(c.IdempotencyKeys)}})
	g.metrics.Registry().MustRegister(pruner.Collectors()...)
	g.metrics.Registry().MustRegister(g.hooks.Collectors()...)
	g.metrics.Registry().MustRegister(observe.PoolCollector("gateway", g.db.Pool))
	go pruner.Run(ctx)
	// The SLA's minutes are flushed until the last one, at shutdown.
	slaDone := make(chan struct{})
	go func() { g.outcomes.Run(ctx); close(slaDone) }()
	g.onStop(func() { g.stop(); <-slaDone })
	go g.probes.Run(ctx)
	// Webhook delivery runs until shutdown; stop first, since serving can
	// end without ctx ending.
	hooksDone := make(chan error, 1)
	go func() { hooksDone <- g.hooks.Run(ctx) }()
	g.onStop(func() {
		g.stop()
		if err := <-hooksDone; err != nil && !errors.Is(err, context.Canceled) {
			g.log.Error("webhook delivery stopped", "error", err)
		}
	})
	return nil
}

// checkupPoll is how often the data use checkup reminders are looked for:
// a window of 30 days needs no finer clock; the operator's change wakes
// the loop at once.
const checkupPoll = time.Minute

// partnerPoll is how often partners not assessed for a day are looked for.
const partnerPoll = 10 * time.Minute

// serve serves the port until ctx ends or the embedded database exits.
func (g *parts) serve(ctx context.Context) error {
	printWelcome(g.stdout, g.cfg)
	g.log.Info("gateway serving", "addr", g.ln.Addr().String(), "public_url", g.cfg.PublicURL)
	serveErr := make(chan error, 1)
	go func() { serveErr <- g.srv.ListenAndServe(ctx, g.ln, g.cfg.TLSCert, g.cfg.TLSKey, 15*time.Second) }()
	var err error
	select {
	case err = <-serveErr:
	case err = <-g.db.Exited():
		err = fmt.Errorf("embedded PostgreSQL exited: %w", err)
		g.stop()
		<-serveErr
	}
	if g.accessLines != nil {
		_ = g.accessLines.Close() // the last requests' lines before "stopped"
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	g.log.Info("gateway stopped")
	return nil
}

// serveMetrics serves /metrics alone on ln until ctx ends.
func serveMetrics(ctx context.Context, ln net.Listener, metrics http.Handler, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
	defer stop()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("metrics listener stopped", "error", err)
	}
}

// limits applies the configured rate limits over the defaults.
func limits(c config.RateLimits) graph.Limits {
	l := graph.DefaultLimits
	pick := func(configured int, def *int) {
		switch {
		case configured < 0:
			*def = 0 // unlimited
		case configured > 0:
			*def = configured
		}
	}
	pick(c.App, &l.App)
	pick(c.User, &l.User)
	pick(c.Page, &l.Page)
	return l
}

// buildVersion is the gateway's version, shown to operators.
const buildVersion = "1.39.0"

// Version is the gateway's release, for bin/gateway --version.
const Version = buildVersion

// PluginProtocol is the plugin protocol version the gateway speaks.
const PluginProtocol = protocol.Version

// compiledServices are the Connect services compiled into the gateway.
func compiledServices(adm *admin.Service, cat *catalog.Service, docs *docsearch.Service) []server.Service {
	_, platform := platformv1connect.NewPlatformServiceHandler(version.Service{}, server.HandlerOptions()...)
	_, adminH := adminv1connect.NewAdminServiceHandler(adm, server.HandlerOptions()...)
	_, catalogH := catalogv1connect.NewCatalogServiceHandler(cat, server.HandlerOptions()...)
	_, docsH := catalogv1connect.NewDocsServiceHandler(docs, server.HandlerOptions()...)
	return []server.Service{
		{Schema: platformv1.File_svc_platform_v1_platform_proto.Services().ByName("PlatformService"), Handler: platform},
		{Schema: adminv1.File_svc_admin_v1_admin_proto.Services().ByName("AdminService"), Handler: adminH},
		{Schema: catalogv1.File_svc_catalog_v1_catalog_proto.Services().ByName("CatalogService"), Handler: catalogH},
		{Schema: catalogv1.File_svc_catalog_v1_docs_proto.Services().ByName("DocsService"), Handler: docsH},
	}
}

// compiledReference describes the compiled services for the API reference,
// with who may call them (they are outside the route table's access rules).
func compiledReference() []openapi.Compiled {
	return []openapi.Compiled{
		{Service: platformv1.File_svc_platform_v1_platform_proto.Services().ByName("PlatformService"), Public: true, Access: "anyone."},
		{Service: adminv1.File_svc_admin_v1_admin_proto.Services().ByName("AdminService"), Access: "the operator, with the admin token."},
		{Service: catalogv1.File_svc_catalog_v1_catalog_proto.Services().ByName("CatalogService"), Public: true, Access: "anyone."},
		{Service: catalogv1.File_svc_catalog_v1_docs_proto.Services().ByName("DocsService"), Public: true, Access: "anyone."},
	}
}

// reloadOnSIGHUP reloads every plugin (and loads new ones) on SIGHUP.
func reloadOnSIGHUP(ctx context.Context, plugins *host.Host, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			log.Info("SIGHUP: reloading every plugin")
			if err := plugins.ReloadAll(ctx); err != nil {
				log.Error("reload after SIGHUP", "error", err)
			}
		}
	}
}

// accessLogDelay is how long the access log holds a line at most.
const accessLogDelay = 100 * time.Millisecond

func newLogger(w io.Writer, level string) *slog.Logger {
	return slog.New(observe.LogHandler{Handler: slog.NewJSONHandler(w, &slog.HandlerOptions{Level: logLevel(level)})})
}

func logLevel(level string) slog.Level {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level)) // validated by config
	return l
}

func printWelcome(w io.Writer, cfg config.Config) {
	host := strings.TrimPrefix(strings.TrimPrefix(cfg.PublicURL, "http://"), "https://")
	fmt.Fprintf(w, `
svc gateway is serving at %[1]s

  REST     curl %[1]s/api/v1/platform/changelog
  Connect  curl -H 'Content-Type: application/json' -H 'Connect-Protocol-Version: 1' -d '{}' %[1]s/svc.platform.v1.PlatformService/GetChangelog
  gRPC     grpcurl -plaintext %[2]s svc.platform.v1.PlatformService/GetChangelog
  health   curl %[1]s/healthz
  Graph    curl -H "Authorization: Bearer <api_key from the credentials file>" \
             '%[1]s/api/v1/graph?node=page/<page id>/connected_assets'

Press Ctrl-C to stop.
`, cfg.PublicURL, host)
}

// ---- identity and OAuth (issue #4) -------------------------------------

// identityStack is what the identity wiring gives the rest of the gateway:
// the identity store and the authenticator that resolves every request's
// principal (auth.Authenticator.Middleware, Authorize).
type identityStack struct {
	Identity *identity.Service
	Auth     *auth.Authenticator
	OAuth    *oauth.Server
	// Seeded is the development world seeded at this start; nil if none.
	Seeded *seed.Credentials
}

// startIdentity makes the admin token valid, seeds the development world on
// the first start, and registers sign-in, the OAuth server and the session
// endpoint on srv.
func startIdentity(ctx context.Context, cfg config.Config, ids *identity.Service, authn *auth.Authenticator, srv *server.Server, hooks *webhook.Service, box *secretbox.Box, stdout io.Writer) (*identityStack, error) {
	ids.SetSignUpOpen(cfg.SignUp != "closed")
	adminToken, generated, err := auth.EnsureAdminToken(ctx, ids.Queries(), cfg.AdminToken)
	if err != nil {
		return nil, err
	}
	var seeded *seed.Credentials
	if !cfg.NoDevSeed {
		path, creds, err := seed.Run(ctx, ids, seed.Options{BaseURL: cfg.PublicURL, DataDir: cfg.DataDir, AdminToken: adminToken})
		if err != nil {
			return nil, fmt.Errorf("development seed: %w", err)
		}
		seeded = creds
		if creds != nil {
			// Hashing the seeded passwords (argon2id, 19 MiB each) grew the
			// heap; give that memory back rather than idle on it.
			debug.FreeOSMemory()
		}
		if path == "" {
			path = filepath.Join(cfg.DataDir, seed.FileName)
		}
		if _, statErr := os.Stat(path); statErr == nil {
			fmt.Fprintf(stdout, "Development credentials (users, Page, app, admin token): %s\n", path)
			fmt.Fprintf(stdout, "Check the platform end to end: gateway smoke --credentials %s (make smoke)\n", path)
		}
	} else if generated {
		// No seed file to hold it: keep the generated admin token in the data folder.
		path := filepath.Join(cfg.DataDir, "admin-token")
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(adminToken+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("write admin token: %w", err)
		}
		fmt.Fprintf(stdout, "Admin token written to %s\n", path)
	}
	as, err := oauth.New(ctx, oauth.Options{Issuer: cfg.PublicURL, Identity: ids, Auth: authn,
		KeySecret: box.Derive("oauth signing keys")})
	if err != nil {
		return nil, err
	}
	as.Register(srv)
	srv.Handle("/api/mobile/auth/session", authn.SessionHandler())
	srv.Handle("/api/mobile/auth/signup", authn.SignUpHandler())
	// The developer console: pages over the public APIs, signed in with
	// the login page's session cookie. Its plain forms (no JavaScript)
	// call the same APIs in-process, through srv.
	console.New(console.Options{LoginPath: oauth.PathLogin, API: srv, Sessions: authn}).Register(srv)
	// The consumer chat app, emulated: static files over the mobile APIs.
	srv.Handle("GET /chat", chatapp.Handler())
	srv.Handle("GET /chat/", chatapp.Handler())
	return &identityStack{Identity: ids, Auth: authn, OAuth: as, Seeded: seeded}, nil
}

// PrintFlags writes the flags of serving with their defaults, for
// `gateway help`.
func PrintFlags(w io.Writer) { config.PrintDefaults(w) }
