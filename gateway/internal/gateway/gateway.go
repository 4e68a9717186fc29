package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/config"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/oauth"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/seed"
	"github.com/svcplatform/svc/gateway/internal/server"
	"github.com/svcplatform/svc/gateway/internal/store"
	"github.com/svcplatform/svc/gateway/internal/version"
	platformv1 "github.com/svcplatform/svc/gen/svc/platform/v1"
	"github.com/svcplatform/svc/gen/svc/platform/v1/platformv1connect"
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

	db, err := store.Open(ctx, cfg.DatabaseURL, cfg.DataDir, log)
	if err != nil {
		return err
	}
	defer db.Close()

	metrics := observe.NewMetrics()
	srv := server.New(server.Options{
		Metrics: metrics,
		Ready: func(ctx context.Context) error {
			return db.Pool.Ping(ctx)
		},
	})
	if err := srv.SetServices(coreServices(), protoregistry.GlobalFiles); err != nil {
		return fmt.Errorf("build routes: %w", err)
	}
	// Identity, sign-in and the OAuth server (issue #4): see startIdentity.
	if _, err := startIdentity(ctx, cfg, db, srv, stdout); err != nil {
		return err
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

// coreServices are the proto services compiled into the gateway.
func coreServices() []server.Service {
	_, platform := platformv1connect.NewPlatformServiceHandler(version.Service{}, server.HandlerOptions()...)
	return []server.Service{{
		Schema:  platformv1.File_svc_platform_v1_platform_proto.Services().ByName("PlatformService"),
		Handler: platform,
	}}
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
  Connect  curl -H 'Content-Type: application/json' -d '{}' %[1]s/svc.platform.v1.PlatformService/GetChangelog
  gRPC     grpcurl -plaintext %[2]s svc.platform.v1.PlatformService/GetChangelog
  health   curl %[1]s/healthz

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
func startIdentity(ctx context.Context, cfg config.Config, db *store.Store, srv *server.Server, stdout io.Writer) (*identityStack, error) {
	ids := identity.New(db.Pool)
	authn := auth.New(ids, auth.Options{})
	adminToken, generated, err := auth.EnsureAdminToken(ctx, ids.Queries(), cfg.AdminToken)
	if err != nil {
		return nil, err
	}
	if !cfg.NoDevSeed {
		path, _, err := seed.Run(ctx, ids, seed.Options{BaseURL: cfg.PublicURL, DataDir: cfg.DataDir, AdminToken: adminToken})
		if err != nil {
			return nil, fmt.Errorf("development seed: %w", err)
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
	as, err := oauth.New(ctx, oauth.Options{Issuer: cfg.PublicURL, Identity: ids, Auth: authn})
	if err != nil {
		return nil, err
	}
	as.Register(srv)
	srv.Handle("/api/mobile/auth/session", authn.SessionHandler())
	return &identityStack{Identity: ids, Auth: authn, OAuth: as}, nil
}
