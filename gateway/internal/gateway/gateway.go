package gateway

import (
	"context"
	"encoding/json"
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
	"github.com/svcplatform/svc/gateway/internal/oauth"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/openai"
	"github.com/svcplatform/svc/gateway/internal/openapi"
	"github.com/svcplatform/svc/gateway/internal/prune"
	"github.com/svcplatform/svc/gateway/internal/replica"
	"github.com/svcplatform/svc/gateway/internal/route"
	"github.com/svcplatform/svc/gateway/internal/secretbox"
	"github.com/svcplatform/svc/gateway/internal/seed"
	"github.com/svcplatform/svc/gateway/internal/server"
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
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/migrate"
)

// Run starts the gateway with command-line args and serves until ctx is
// cancelled or SIGINT/SIGTERM arrives. Logs go to stderr as JSON; stdout
// gets the short human summary of how to call the platform.
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
	release, err := claimDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	defer release()
	// Tracing first, so that the database pools made below trace too.
	flushTraces, err := tracing.Setup(ctx, "gateway", Version, cfg.TracingEndpoint)
	if err != nil {
		return err
	}
	defer func() {
		fctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = flushTraces(fctx)
	}()
	if cfg.TracingEndpoint != "" {
		log.Info("tracing on", "endpoint", cfg.TracingEndpoint)
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	defer ln.Close()
	if strings.HasSuffix(cfg.PublicURL, ":0") {
		// Port 0 asks the kernel for a free port; tell clients the real one.
		cfg.PublicURL = strings.TrimSuffix(cfg.PublicURL, "0") + fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	}

	box, keySource, err := secretbox.Load(os.Getenv, cfg.DataDir)
	if err != nil {
		return fmt.Errorf("master key: %w", err)
	}
	log.Info("master key loaded", "source", keySource, "fingerprint", box.Fingerprint())
	// The embedded cluster's superuser signs in with a password derived
	// from the master key, so that plugins, which can reach its socket,
	// can connect only as their own roles (store.PluginURL).
	db, err := store.Open(ctx, cfg.DatabaseURL, cfg.DataDir, embeddedPassword(box), log)
	if err != nil {
		return err
	}
	defer db.Close()

	ids := identity.New(db.Pool)
	// Client secrets sign webhooks, so identity keeps them sealed too
	// (core.apps is their one home; the webhook dispatcher reads them there).
	ids.SetSealer(box)
	authn := auth.New(ids, auth.Options{})
	metrics := observe.NewMetrics()
	var plugins *host.Host
	// The trimmer hands memory back to the OS after start-up, each reload
	// and each burst of traffic.
	trimmer := memtrim.New()
	var accessLog *slog.Logger
	if cfg.AccessLog == "on" {
		accessLog = log
	}
	srv := server.New(server.Options{
		Metrics:      metrics,
		Authenticate: dispatch.Authenticate(authn),
		AccessLog:    accessLog,
		App: func(ctx context.Context) string {
			app, _ := dispatch.Caller(ctx)
			return app
		},
		Activity: trimmer.Touch,
		Ready: func(ctx context.Context) error {
			if err := db.Pool.Ping(ctx); err != nil {
				return err
			}
			return plugins.Ready()
		},
	})
	hooks, err := webhook.New(webhook.Options{
		Pool: db.Pool, Logger: log, PublicURL: cfg.PublicURL, SecretBox: box,
		AllowPrivateNetworks: cfg.WebhookAllowPrivateNetworks,
		RefuseLoopback:       cfg.WebhookAllowLoopback != nil && !*cfg.WebhookAllowLoopback,
		Guard: func(ctx context.Context, caller sdk.Principal, appID string, least pluginv1.AppRole) error {
			return authn.AuthorizeApp(ctx, auth.FromSDK(caller), least, appID)
		},
		EventTypes: func() []string {
			if plugins == nil {
				return nil
			}
			return plugins.EventTypes()
		},
	})
	if err != nil {
		return err
	}
	// Identity, sign-in and the OAuth server (issue #4): see startIdentity.
	if _, err := startIdentity(ctx, cfg, ids, authn, srv, hooks, box, stdout); err != nil {
		return err
	}

	// The gateway's own Graph nodes run in-process on the plugin SDK, so
	// they pass the same routing, validation and access checks as plugins.
	core := sdk.New(sdk.Info{Name: "core", Version: buildVersion})
	graphSvc := coregraph.New(ids).OnRevoke(authn.Forget).OnPageChange(authn.ForgetPage)
	graphSvc.Register(core)
	hooks.Register(core)
	// A read replica, when configured, serves plugin reads that may lag;
	// the gateway's own lookups (tokens, sessions, apps) stay on the primary.
	var reads route.Reads
	if cfg.Replica.URL != "" {
		replicaReads, err := replica.New(replica.Options{Primary: db.Pool, URL: cfg.Replica.URL,
			MaxLag: time.Duration(cfg.Replica.MaxLag), MaxLagBytes: cfg.Replica.MaxLagBytes, Log: log.With("component", "replica")})
		if err != nil {
			return err
		}
		defer replicaReads.Close()
		metrics.Registry().MustRegister(replicaReads.Collectors()...)
		go replicaReads.Run(ctx)
		reads = replicaReads
		log.Info("read replica configured", "max_lag", time.Duration(cfg.Replica.MaxLag).String(), "max_lag_bytes", cfg.Replica.MaxLagBytes)
	}
	// Every call of a plugin or of the gateway's own services takes the
	// dispatcher's path: route, validate, authorize, invoke.
	r, err := dispatch.New(dispatch.Options{Server: srv, Auth: authn, Core: core, Calls: observe.NewCalls(metrics), Reads: reads})
	if err != nil {
		return err
	}
	// me/assigned_assets lists the ad accounts the ads plugin keeps, and
	// going live tells svcchat.
	graphSvc.WithPlugins(r.CallJSON)
	devSeed := "1"
	if cfg.NoDevSeed {
		devSeed = "0"
	}
	completionsEnv, err := completionsConfig(cfg.Completions)
	if err != nil {
		return err
	}
	plugins = host.New(host.Options{
		Dir: cfg.PluginsDir, Pins: cfg.PluginPins, Logger: log,
		// Each plugin runs contained (package sandbox): its own user when
		// the gateway is root, a Landlock sandbox otherwise.
		RequireIsolation: cfg.RequirePluginIsolation, Instance: cfg.DataDir,
		HostServer: r.HostServer(ids),
		OnChange:   r.Rebuild,
		// Plugins get a scrubbed environment (host.pluginEnv) plus this:
		// the database in use, and their own settings.
		Env: func(plugin string) ([]string, error) {
			// SVC_DEV_SEED=1 tells every plugin that this is a development
			// installation (the development seed is on), where it may add
			// its own conveniences: the wearables plugin's simulated device,
			// the chat plugin's sponsored item; the gateway need not know
			// plugin schemas for that.
			dbURL, err := pluginDatabaseURL(ctx, db, box, plugin, log)
			if err != nil {
				return nil, err
			}
			env := []string{migrate.EnvDatabaseURL + "=" + dbURL, "SVC_DEV_SEED=" + devSeed}
			if cfg.Replica.URL != "" {
				// The standby has the plugin's role by replication.
				replicaURL, err := store.SameRole(cfg.Replica.URL, dbURL, db.URL)
				if err != nil {
					return nil, err
				}
				env = append(env, readpool.EnvURL+"="+replicaURL)
			}
			if plugin == "completions" {
				env = append(env, completionsEnv...)
			}
			if cfg.TracingEndpoint != "" {
				env = append(env, tracing.EnvEndpoint+"="+cfg.TracingEndpoint)
			}
			return env, nil
		},
	})
	r.UseHost(plugins)
	docsIndex := docsearch.NewIndex(db.Pool)
	r.Compiled(compiledServices(admin.New(plugins, r.Routes).WithUsers(ids.Users, authn.ForgetUser),
		catalog.New(r.Table, plugins.Plugins, []catalog.SDK{{Name: "github.com/svcplatform/svc/sdk", Version: buildVersion}}),
		docsearch.NewService(docsIndex))...)
	// The API reference and the docs search index follow the route table:
	// rebuilt (the reference, lazily) and refreshed (the index, off the
	// request path) whenever a plugin loads, restarts or goes.
	reference := openapi.New(openapi.Info{Title: "svc", Version: buildVersion, ServerURL: cfg.PublicURL}, r.Table, compiledReference())
	srv.Handle("GET "+openapi.Path, reference)
	docEntries, err := docsearch.DocEntries(svcroot.Docs)
	if err != nil {
		return fmt.Errorf("embedded docs: %w", err)
	}
	docsIndexer := docsearch.NewRefresher(docsIndex, func() ([]docsearch.Entry, error) {
		doc, _ := reference.Current()
		return append(slices.Clone(docEntries), docsearch.APIEntries(doc)...), nil
	}, log.With("component", "docsearch"))
	r.OnTable(func() {
		docsIndexer.Trigger()
		trimmer.Trigger()
	})
	go docsIndexer.Run(ctx)
	go trimmer.Run(ctx)
	if err := r.Rebuild(nil); err != nil {
		return fmt.Errorf("build routes: %w", err)
	}
	srv.Handle(graph.Path, graph.New(graph.Options{
		PublicURL:   cfg.PublicURL,
		Router:      r.GraphRouter,
		Idempotency: graph.NewPGIdempotency(db.Pool).SealWith(box),
		Limiter:     graph.NewLimiter(limits(cfg.RateLimits)),
		Caller:      dispatch.Caller,
		AccessToken: authn.AccessToken,
	}))
	// gateway listen: an app's deliveries over an outbound stream, to a
	// developer's machine (package webhook, listen.go). Who may listen is
	// who may manage the app's subscription: its key or token, or a team
	// member's token with the Developer role at least (CONTRACT §4).
	listen := hooks.ListenHandler(ctx, func(r *http.Request, appID string) error {
		// The server resolved the credential already, for every request.
		p, err := auth.Caller(r.Context())
		if err != nil {
			return err
		}
		return authn.AuthorizeApp(r.Context(), p, pluginv1.AppRole_APP_ROLE_DEVELOPER, appID)
	}, apierr.Write)
	srv.Handle("GET "+webhook.ListenPath, listen)
	srv.Handle("POST "+webhook.ListenAckPath, listen)
	// POST /v1/chat/completions and GET /v1/models speak OpenAI's wire.
	edge := openai.New(r.Table)
	edge.Register(srv)
	metrics.AddGatherer(edge.Gatherer())
	if err := plugins.Start(ctx); err != nil {
		return fmt.Errorf("start plugins: %w", err)
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := plugins.Close(closeCtx); err != nil {
			log.Error("stop plugins", "error", err)
		}
	}()
	go reloadOnSIGHUP(ctx, plugins, log)
	// The core tables stay bounded: one gateway at a time prunes.
	pruner := prune.New(prune.Options{Pool: db.Pool, Log: log.With("component", "prune"), Interval: time.Duration(cfg.Retention.Interval),
		Retention: prune.Retention{Events: time.Duration(cfg.Retention.Events), Deliveries: time.Duration(cfg.Retention.Deliveries),
			IdempotencyKeys: time.Duration(cfg.Retention.IdempotencyKeys)}})
	metrics.Registry().MustRegister(pruner.Collectors()...)
	metrics.Registry().MustRegister(hooks.Collectors()...)
	metrics.Registry().MustRegister(observe.PoolCollector("gateway", db.Pool))
	go pruner.Run(ctx)
	// Webhook delivery runs until shutdown; stop() first, since serving can
	// end without ctx ending.
	hooksDone := make(chan error, 1)
	go func() { hooksDone <- hooks.Run(ctx) }()
	defer func() {
		stop()
		if err := <-hooksDone; err != nil && !errors.Is(err, context.Canceled) {
			log.Error("webhook delivery stopped", "error", err)
		}
	}()

	// /metrics: on the main port to the admin token only, or on the
	// operator's own listener to whoever reaches it (CONTRACT §15).
	if cfg.MetricsAddr == "" {
		srv.Handle("GET /metrics", auth.AdminOnly(metrics.Handler()))
	} else {
		mln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			return fmt.Errorf("listen on %s (--metrics-addr): %w", cfg.MetricsAddr, err)
		}
		go serveMetrics(ctx, mln, metrics.Handler(), log)
		log.Info("metrics serving", "addr", mln.Addr().String())
	}

	printWelcome(stdout, cfg)
	log.Info("gateway serving", "addr", ln.Addr().String(), "public_url", cfg.PublicURL)

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.ListenAndServe(ctx, ln, cfg.TLSCert, cfg.TLSKey, 15*time.Second) }()
	select {
	case err = <-serveErr:
	case err = <-db.Exited():
		err = fmt.Errorf("embedded PostgreSQL exited: %w", err)
		stop()
		<-serveErr
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	log.Info("gateway stopped")
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

// completionsConfig is the environment of the completions plugin: its
// section of the config file, which it validates. The upstreams' API keys
// stay in the variables the section names, which the plugin inherits.
func completionsConfig(c config.Completions) ([]string, error) {
	if len(c.Upstreams) == 0 && c.Budget == nil {
		return nil, nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("completions config: %w", err)
	}
	env := []string{"SVC_COMPLETIONS_CONFIG=" + string(b)}
	// Plugins get a scrubbed environment: pass the upstreams' API keys, and
	// only those, from the variables the configuration names.
	for _, u := range c.Upstreams {
		if u.APIKeyEnv != "" {
			if v, ok := os.LookupEnv(u.APIKeyEnv); ok {
				env = append(env, u.APIKeyEnv+"="+v)
			}
		}
	}
	return env, nil
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

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level)) // validated by config
	return slog.New(observe.LogHandler{Handler: slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})})
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
	if !cfg.NoDevSeed {
		path, creds, err := seed.Run(ctx, ids, seed.Options{BaseURL: cfg.PublicURL, DataDir: cfg.DataDir, AdminToken: adminToken})
		if err != nil {
			return nil, fmt.Errorf("development seed: %w", err)
		}
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
	return &identityStack{Identity: ids, Auth: authn, OAuth: as}, nil
}

// PrintFlags writes the flags of serving with their defaults, for
// `gateway help`.
func PrintFlags(w io.Writer) { config.PrintDefaults(w) }
