package pluginrt

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/memtrim"
	"github.com/svcplatform/svc/internal/plugin/protocol"
)

// Serve runs the plugin until the gateway stops it or dies, then exits the
// process (sdk.Plugin.Serve).
func (p *Plugin) Serve() {
	if err := p.Freeze(); err != nil {
		p.log.Error("plugin cannot start", "error", err)
		os.Exit(1)
	}
	finishProfiles := p.startProfiles()
	// Start-up (migrations, descriptors) is a burst of its own; the
	// process never returns from Serve, so the trimmer runs for its life.
	p.trim = memtrim.New()
	p.trim.OnTrim(dropAnswers)
	go p.trim.Run(context.Background())
	p.trim.Trigger()
	watchParent(p.log, func() { p.stop(); finishProfiles() })
	lane, err := p.listenLane()
	if err != nil {
		// The gateway falls back to gRPC; slower, still correct.
		p.log.Warn("fast lane unavailable", "error", err)
	}
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: protocol.Handshake,
		VersionedPlugins: map[int]goplugin.PluginSet{
			protocol.Version: {protocol.PluginKey: &protocol.GoPlugin{Serve: p.ServeGRPC}},
		},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, protocol.ServerOptions()...)...)
		},
		Logger: hclog.New(&hclog.LoggerOptions{Output: stderr, JSONFormat: true, Level: hclog.Warn}),
	})
	// go-plugin returns when the gateway has shut the plugin down.
	if lane != nil {
		_ = lane.Close()
	}
	p.stop()
	finishProfiles()
	os.Exit(0)
}

// ServeGRPC registers the plugin's protocol service on s, reaching the
// gateway's Host service through broker. Serve calls it, and so does
// package plugintest.
func (p *Plugin) ServeGRPC(broker *goplugin.GRPCBroker, s *grpc.Server) error {
	if err := p.Freeze(); err != nil {
		return err
	}
	pluginv1.RegisterPluginServer(s, &grpcServer{p: p, broker: broker})
	return nil
}

// listenLane opens the fast-lane socket in the private folder the gateway
// named, when it named one.
func (p *Plugin) listenLane() (net.Listener, error) {
	dir := os.Getenv(protocol.EnvFastLaneDir)
	if dir == "" {
		return nil, nil
	}
	path := filepath.Join(dir, protocol.FastLaneSocket)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("restrict %s: %w", path, err)
	}
	srv := p.LaneServer(AllowGateway)
	go func() {
		if err := srv.Serve(ln); err != nil {
			p.log.Error("fast lane stopped", "error", err)
		}
	}()
	p.laneSocket = path
	return ln, nil
}

// LaneServer is the plugin's side of the fast lane, admitting the
// processes allow admits.
func (p *Plugin) LaneServer(allow func(pid int) bool) *protocol.LaneServer {
	// A connection's end counts as activity for the trimmer: the gateway
	// closes a burst's extra connections just after it, and what they held
	// is garbage from then on.
	return &protocol.LaneServer{Handler: p.laneInvoke, Stream: p.InvokeStream, Release: releaseAnswer, Allow: allow, Logger: p.log,
		Ended: p.trim.Touch}
}

// AllowGateway admits fast-lane connections from the process that started
// this one (the gateway) only; the plugin's own process is admitted too, for
// in-process tests.
func AllowGateway(pid int) bool {
	return pid == os.Getppid() || pid == os.Getpid()
}

// grpcServer is the plugin's svc.plugin.v1.Plugin service.
type grpcServer struct {
	pluginv1.UnimplementedPluginServer
	p      *Plugin
	broker *goplugin.GRPCBroker
}

func (s *grpcServer) Describe(ctx context.Context, req *pluginv1.DescribeRequest) (*pluginv1.Manifest, error) {
	m, err := s.p.describe(ctx, req, s.broker)
	var fault *protocol.ControlFault
	if errors.As(err, &fault) && fault.Code == connectFailedPrecondition {
		return nil, status.Error(codes.FailedPrecondition, fault.Message)
	} else if err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	return m, nil
}

// connectFailedPrecondition is Connect's failed_precondition code.
const connectFailedPrecondition = 9

// describe answers the gateway's Describe: the manifest, once the protocol
// version is checked and the Host service connected. broker is go-plugin's,
// nil on the fast lane.
func (p *Plugin) describe(ctx context.Context, req *pluginv1.DescribeRequest, broker *goplugin.GRPCBroker) (*pluginv1.Manifest, error) {
	if v := req.GetProtocolVersion(); v != protocol.Version {
		return nil, &protocol.ControlFault{Procedure: protocol.ProcDescribe, Code: connectFailedPrecondition,
			Message: fmt.Sprintf("the gateway speaks plugin protocol version %d; plugin %q speaks version %d", v, p.name, protocol.Version)}
	}
	if path := req.GetHostSocket(); path != "" {
		if err := p.ConnectHostLane(ctx, path, os.Getppid()); err != nil {
			return nil, err
		}
	} else if id := req.GetHostBrokerId(); id != 0 && broker != nil {
		if err := p.connectHost(broker, id); err != nil {
			return nil, err
		}
	}
	m := proto.Clone(p.manifest).(*pluginv1.Manifest)
	if p.laneSocket != "" {
		m.FastLane = &pluginv1.FastLane{SocketPath: p.laneSocket}
	}
	return m, nil
}

// laneInvoke is the fast lane's handler: the protocol's own calls
// (Describe, Health), which only the gateway may make, then Invoke.
func (p *Plugin) laneInvoke(ctx context.Context, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse {
	if !strings.HasPrefix(req.GetProcedure(), "/svc.plugin.v1.") {
		return p.Invoke(ctx, req)
	}
	ctx, cancel := callContext(ctx, req)
	defer cancel()
	switch req.GetProcedure() {
	case protocol.ProcDescribe:
		in := new(pluginv1.DescribeRequest)
		if err := proto.Unmarshal(req.GetRequest(), in); err != nil {
			return protocol.ControlAnswer(nil, err)
		}
		return protocol.ControlAnswer(p.describe(ctx, in, nil))
	case protocol.ProcHealth:
		return protocol.ControlAnswer(p.checkHealth(ctx), nil)
	}
	return p.Invoke(ctx, req)
}

func (s *grpcServer) Invoke(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	return s.p.Invoke(ctx, req), nil
}

func (s *grpcServer) InvokeStream(req *pluginv1.InvokeRequest, stream grpc.ServerStreamingServer[pluginv1.InvokeResponse]) error {
	return s.p.InvokeStream(stream.Context(), req, stream.Send)
}

func (s *grpcServer) Health(ctx context.Context, _ *pluginv1.HealthRequest) (*pluginv1.HealthResponse, error) {
	return s.p.checkHealth(ctx), nil
}
