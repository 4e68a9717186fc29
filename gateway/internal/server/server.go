package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	gopath "path"
	"strings"
	"sync/atomic"
	"time"

	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	"connectrpc.com/vanguard"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/serving"
	"github.com/svcplatform/svc/gateway/internal/sla"
	"github.com/svcplatform/svc/gateway/internal/version"
	"github.com/svcplatform/svc/gateway/internal/web/pages"
)

// Options configure a Server.
type Options struct {
	Metrics *observe.Metrics
	// Ready reports whether the gateway can serve now: the database is
	// reachable and every plugin is serving. It backs /readyz and gRPC
	// health. /healthz is liveness: the port serves only after start-up
	// (migrations done, plugins started), and a database briefly away or a
	// plugin restarting must not get a live gateway killed by its
	// supervisor, so /healthz answers 200 while the process serves.
	Ready func(ctx context.Context) error
	// Authenticate resolves the request's credential into its context,
	// before any handler; nil: no authentication. It runs with the trace
	// id's, so that a request is copied with its new context once.
	Authenticate func(ctx context.Context, r *http.Request) context.Context
	// BodyReadTimeout bounds how long a client may take to send a request
	// body, so that slow bodies cannot hold connections; 0 means
	// DefaultBodyReadTimeout.
	BodyReadTimeout time.Duration
	// AccessLog, when set, gets one JSON line per request, the line an
	// slog.JSONHandler writes at info level (accessLine); nil: no access
	// log. Each line is one Write.
	AccessLog io.Writer
	// App names the app a request's credential belongs to, for the access
	// log ("" for none).
	App func(ctx context.Context) string
	// Activity, when set, is called at the start of every request (the
	// memory trimmer counts traffic with it); it must be cheap.
	Activity func()
	// Calls runs the calls of the route table's methods (Prepare); nil
	// serves compiled-in services only.
	Calls Calls
	// Outcomes counts the requests of the measured surfaces for the SLA
	// (package sla); nil counts nothing.
	Outcomes *sla.Recorder
}

// DefaultBodyReadTimeout is the default of Options.BodyReadTimeout: 1 MiB at
// about 35 KB/s.
const DefaultBodyReadTimeout = 30 * time.Second

// Service is one proto service offered on the port, with its schema.
type Service struct {
	Schema  protoreflect.ServiceDescriptor
	Handler http.Handler
	// Options apply to this service's transcoding (codecs, type resolver).
	Options []vanguard.ServiceOption
	// Admission gives the first step of a REST call of a method: the
	// server runs it once it has matched the request to the method, before
	// the transcoder reads anything of the request, and answers its error
	// (CONTRACT §15). nil, or a nil step: admitted.
	Admission func(md protoreflect.MethodDescriptor) func(ctx context.Context) error
}

// Server is the gateway's HTTP port.
type Server struct {
	opts     Options
	mux      *http.ServeMux
	rpc      atomic.Pointer[rpcTable]
	handler  http.Handler
	compiled []Service
	declared DeclaredPaths
	// exact are the handlers of the patterns that name one path and
	// nothing more (no method, host or wildcard; graph.Path): a request for
	// one is handed to its handler without the mux's walk, which that
	// pattern would win. shadowed are the paths that a more specific
	// pattern (with a method or a host) names too: the mux serves those.
	exact    map[string]http.Handler
	shadowed map[string]bool
}

// DeclaredPaths serves paths known only at run time (the plain HTTP paths
// plugins declare): ServePath answers r and reports true when r's method
// and path are one of them, and reports false, writing nothing, when not.
type DeclaredPaths interface {
	ServePath(w http.ResponseWriter, r *http.Request) bool
}

// rpcTable is one immutable generation of the proto services served; it is
// replaced whole when the set of services changes.
type rpcTable struct {
	transcoder http.Handler
	rest       restRoutes
	names      []string
	files      protodesc.Resolver
}

// New builds a server with the operational endpoints and no services yet.
func New(opts Options) *Server {
	s := &Server{opts: opts, mux: http.NewServeMux(), exact: map[string]http.Handler{}, shadowed: map[string]bool{}}
	s.Handle("GET /healthz", http.HandlerFunc(s.live))
	s.Handle("GET /readyz", http.HandlerFunc(s.health))
	s.Handle("GET /developers/changelog", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log := version.Changelog()
		releases := make([]pages.Release, len(log))
		for i, e := range log {
			releases[i] = pages.Release{Version: e.Version, Date: e.Date, Kind: e.Kind, Summary: e.Summary}
		}
		// The same renderer, and so the same security headers, as every
		// other page of the gateway.
		if err := pages.RenderChangelog(w, releases); err != nil {
			slog.ErrorContext(r.Context(), "render changelog", "error", err)
		}
	}))
	s.Handle(grpchealth.NewHandler(healthChecker{s}))
	reflector := grpcreflect.NewReflector(s, grpcreflect.WithDescriptorResolver(currentFiles{s}))
	s.Handle(grpcreflect.NewHandlerV1(reflector))
	s.Handle(grpcreflect.NewHandlerV1Alpha(reflector))
	s.Handle("/", http.HandlerFunc(s.serveRPC))
	if opts.BodyReadTimeout == 0 {
		opts.BodyReadTimeout = DefaultBodyReadTimeout
	}
	s.handler = traced(opts, versioned(limited(opts.BodyReadTimeout, http.HandlerFunc(s.route))))
	if err := s.SetServices(nil, protoregistry.GlobalFiles); err != nil {
		panic(err) // an empty table cannot fail
	}
	return s
}

// Handle adds a handler for a pattern outside the proto services (OAuth
// form posts, HTML pages, the Graph endpoint). It must be called before the
// server starts serving.
func (s *Server) Handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, h) // refuses a pattern conflicting with another
	exact, path := exactPattern(pattern)
	switch {
	case path == "":
	case exact && !s.shadowed[path]:
		s.exact[path] = h
	case !exact:
		s.shadowed[path] = true
		delete(s.exact, path)
	}
}

// exactPattern reports whether pattern (net/http's syntax) names one clean
// path and nothing more, and the literal path it names with a method or a
// host ("" when it has a wildcard or names a subtree: no request the exact
// pattern of that path serves can match it without the mux refusing the
// two as conflicting).
func exactPattern(pattern string) (exact bool, path string) {
	method := false
	if i := strings.IndexAny(pattern, " \t"); i >= 0 {
		method, pattern = true, strings.TrimLeft(pattern[i:], " \t")
	}
	host := !strings.HasPrefix(pattern, "/")
	if i := strings.IndexByte(pattern, '/'); i >= 0 {
		pattern = pattern[i:]
	}
	if strings.ContainsAny(pattern, "{%") || strings.HasSuffix(pattern, "/") || gopath.Clean(pattern) != pattern {
		return false, ""
	}
	return !method && !host, pattern
}

// route serves a request for an exact pattern's path with its handler,
// and any other with the mux. (CONNECT is the mux's: it matches those on
// their host.)
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	if h, ok := s.exact[r.URL.Path]; ok && r.Method != http.MethodConnect {
		h.ServeHTTP(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// HandleDeclared adds the paths declared at run time: a request that no
// pattern of Handle matches and that is not an RPC goes to p before the
// REST bindings of the proto services. It must be called before the
// server starts serving.
func (s *Server) HandleDeclared(p DeclaredPaths) { s.declared = p }

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.Activity != nil {
		s.opts.Activity()
	}
	s.handler.ServeHTTP(w, r)
}

// SetServices atomically replaces the proto services served. files resolves
// their descriptors for reflection. Requests already in flight finish on the
// table they started with.
func (s *Server) SetServices(services []Service, files protodesc.Resolver) error {
	t, err := newRPCTable(services, files)
	if err != nil {
		return err
	}
	s.rpc.Store(t)
	return nil
}

// newRPCTable builds the transcoder of services.
func newRPCTable(services []Service, files protodesc.Resolver) (*rpcTable, error) {
	vs := make([]*vanguard.Service, 0, len(services))
	names := make([]string, 0, len(services))
	rest := restRoutes{}
	for _, svc := range services {
		rest.addService(svc)
		vs = append(vs, vanguard.NewServiceWithSchema(svc.Schema, svc.Handler, svc.Options...))
		names = append(names, string(svc.Schema.FullName()))
	}
	t, err := vanguard.NewTranscoder(vs,
		vanguard.WithUnknownHandler(http.HandlerFunc(unknown)),
		vanguard.WithCodec(strictTranscoderJSON))
	if err != nil {
		return nil, err
	}
	return &rpcTable{transcoder: t, rest: rest, names: names, files: files}, nil
}

func (s *Server) serveRPC(w http.ResponseWriter, r *http.Request) {
	t := s.rpc.Load()
	if isRPC(r) {
		t.transcoder.ServeHTTP(w, r)
		return
	}
	if s.declared != nil && s.declared.ServePath(w, r) {
		return
	}
	if !t.rest.admitREST(w, r) {
		return
	}
	r, status := withRESTStatus(r)
	envelopeErrors(t.transcoder, status).ServeHTTP(w, r)
}

func unknown(w http.ResponseWriter, r *http.Request) {
	if isRPC(r) {
		// gRPC and Connect clients read 404 as Unimplemented.
		http.NotFound(w, r)
		return
	}
	apierr.Write(w, r, apierr.UnknownPath(r.URL.Path))
}

// Names lists the served services, for reflection.
func (s *Server) Names() []string {
	t := s.rpc.Load()
	return append([]string{grpchealth.HealthV1ServiceName}, t.names...)
}

// live answers /healthz: the process is up and serving.
func (s *Server) live(w http.ResponseWriter, _ *http.Request) {
	apierr.WriteJSONBody(w, http.StatusOK, statusOK)
}

// health answers /readyz: the database is reachable and every plugin serves.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if err := s.opts.Ready(r.Context()); err != nil {
		slog.DebugContext(r.Context(), "not ready", "reason", err)
		apierr.WriteJSONBody(w, http.StatusServiceUnavailable, []byte(`{"status":"unavailable"}`))
		return
	}
	apierr.WriteJSONBody(w, http.StatusOK, statusOK)
}

var statusOK = []byte(`{"status":"ok"}`)

type healthChecker struct{ s *Server }

func (h healthChecker) Check(ctx context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	if req.Service != "" && !h.known(req.Service) {
		return nil, apierr.ToConnect(apierr.NotFound("Service " + req.Service))
	}
	if err := h.s.opts.Ready(ctx); err != nil {
		return &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}, nil
	}
	return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
}

func (h healthChecker) known(name string) bool {
	for _, n := range h.s.Names() {
		if n == name {
			return true
		}
	}
	return false
}

// currentFiles resolves descriptors from the table in use at call time.
type currentFiles struct{ s *Server }

func (c currentFiles) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	return c.s.rpc.Load().files.FindFileByPath(path)
}

func (c currentFiles) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	return c.s.rpc.Load().files.FindDescriptorByName(name)
}

// ListenAndServe serves on addr until ctx is cancelled, then shuts down
// gracefully, waiting up to grace for requests in flight. With certFile and
// keyFile it serves TLS (HTTP/2 negotiated by ALPN); without, HTTP/1.1 and
// HTTP/2 over cleartext (h2c), so gRPC clients can connect directly.
func (s *Server) ListenAndServe(ctx context.Context, ln net.Listener, certFile, keyFile string, grace time.Duration) error {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
	}
	// Requests' contexts carry the shutdown signal from the base context:
	// no cost per request.
	closing, closeAll := context.WithCancel(context.Background())
	srv.BaseContext = func(net.Listener) context.Context {
		return serving.WithClosing(context.Background(), closing)
	}
	srv.RegisterOnShutdown(closeAll)
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetHTTP2(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	errc := make(chan error, 1)
	go func() {
		if certFile != "" {
			errc <- srv.ServeTLS(ln, certFile, keyFile)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if serveErr := <-errc; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}
