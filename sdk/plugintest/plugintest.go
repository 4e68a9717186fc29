package plugintest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/sdk"
)

// TraceID is the trace id of calls made by Call and CallStream.
const TraceID = "plugintest-trace"

// Plugin is a plugin under test, running in this process.
type Plugin struct {
	lane     *protocol.LaneClient
	manifest *pluginv1.Manifest
	// calls holds the principals of calls in flight by delegation handle,
	// as the gateway does, so that Host.Call acts as the caller of the call
	// the plugin serves, or as the plugin itself.
	calls    sync.Map
	nextCall atomic.Uint64
}

type config struct {
	host Host
}

// Option configures Start.
type Option func(*config)

// WithHost makes h the gateway the plugin asks (sdk.HostClient), instead of
// the default host, which routes calls back to the plugin under test and
// answers nothing else.
func WithHost(h Host) Option {
	return func(c *config) { c.host = h }
}

// Start serves p in-process, describes it and checks its health, failing
// the test when any of that fails. Everything stops at the end of the test.
//
// The plugin is reached as the gateway reaches it: its fast lane on a unix
// socket in a private folder, Describe with the Host service's socket
// beside it, Health, then the calls; without exec.
func Start(t testing.TB, p *sdk.Plugin, opts ...Option) *Plugin {
	t.Helper()
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	var started atomic.Pointer[Plugin]
	current := func() *Plugin { return started.Load() }
	if cfg.host == nil {
		cfg.host = selfHost{tp: current}
	}
	// Not t.TempDir: a socket's path must stay under about 100 bytes.
	dir, err := os.MkdirTemp("", "plugintest-")
	if err != nil {
		t.Fatalf("plugintest: %v", err)
	}
	self := func(pid int) bool { return pid == os.Getpid() }
	lanePath, hostPath := filepath.Join(dir, protocol.FastLaneSocket), filepath.Join(dir, protocol.HostSocket)
	laneLn, err := net.Listen("unix", lanePath)
	if err != nil {
		t.Fatalf("plugintest: %v", err)
	}
	hostLn, err := net.Listen("unix", hostPath)
	if err != nil {
		t.Fatalf("plugintest: %v", err)
	}
	go func() { _ = wire.LaneServer(p, self).Serve(laneLn) }()
	host := &protocol.LaneServer{Handler: protocol.HostHandler(&hostServer{h: cfg.host, tp: current}, hostCode), Allow: self}
	go func() { _ = host.Serve(hostLn) }()
	tp := &Plugin{}
	t.Cleanup(func() {
		if tp.lane != nil {
			_ = tp.lane.Close()
		}
		_ = laneLn.Close()
		_ = hostLn.Close()
		wire.DisconnectHost(p)
		_ = os.RemoveAll(dir)
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if tp.lane, err = protocol.DialLane(ctx, lanePath, 1, os.Getpid()); err != nil {
		t.Fatalf("plugintest: connect: %v", err)
	}
	tp.manifest = new(pluginv1.Manifest)
	if err := protocol.CallControl(ctx, tp.lane, protocol.ProcDescribe,
		&pluginv1.DescribeRequest{ProtocolVersion: protocol.Version, HostSocket: hostPath}, tp.manifest); err != nil {
		t.Fatalf("plugintest: describe: %v", err)
	}
	h, err := tp.health(ctx)
	if err != nil {
		t.Fatalf("plugintest: health: %v", err)
	}
	if !h.GetServing() {
		t.Fatalf("plugintest: the plugin is not serving: %s", h.GetMessage())
	}
	started.Store(tp)
	return tp
}

// health runs the plugin's health check.
func (tp *Plugin) health(ctx context.Context) (*pluginv1.HealthResponse, error) {
	res := new(pluginv1.HealthResponse)
	return res, protocol.CallControl(ctx, tp.lane, protocol.ProcHealth, &pluginv1.HealthRequest{}, res)
}

// invoke sends one unary call as the gateway does. The error is a transport
// failure; a refusal is a response carrying an Error.
func (tp *Plugin) invoke(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	return tp.lane.Invoke(ctx, req)
}

// invokeStream sends one streaming call and passes each response to recv.
func (tp *Plugin) invokeStream(ctx context.Context, req *pluginv1.InvokeRequest, recv func(*pluginv1.InvokeResponse) error) error {
	return tp.lane.InvokeStream(ctx, req, recv)
}

// Call invokes the unary method procedure as principal and decodes its
// answer. A refusal by the plugin is returned as an *sdk.Error.
func Call[Res proto.Message](ctx context.Context, tp *Plugin, procedure string, principal sdk.Principal, req proto.Message) (Res, error) {
	var zero Res
	ireq, err := request(ctx, procedure, principal, req)
	if err != nil {
		return zero, err
	}
	defer tp.delegate(ireq)()
	resp, err := tp.invoke(ctx, ireq)
	if err != nil {
		return zero, fmt.Errorf("plugintest: invoke %s: %w", procedure, err)
	}
	if resp.GetError() != nil {
		return zero, wire.ErrorFromProto(resp.GetError())
	}
	return decode[Res](resp)
}

// CallStream invokes the streaming method procedure as principal and returns
// every message it sent. When the stream ends with a refusal, the messages
// before it are returned with the *sdk.Error.
func CallStream[Res proto.Message](ctx context.Context, tp *Plugin, procedure string, principal sdk.Principal, req proto.Message) ([]Res, error) {
	var out []Res
	err := Stream(ctx, tp, procedure, principal, req, func(res Res) error {
		out = append(out, res)
		return nil
	})
	return out, err
}

// Stream invokes the streaming method procedure as principal and hands each
// message to recv as it arrives, until the stream ends, recv returns an
// error (which Stream returns) or ctx ends: for streams that stay open,
// such as a device's. A refusal ending the stream is returned as an
// *sdk.Error.
func Stream[Res proto.Message](ctx context.Context, tp *Plugin, procedure string, principal sdk.Principal, req proto.Message, recv func(Res) error) error {
	ireq, err := request(ctx, procedure, principal, req)
	if err != nil {
		return err
	}
	defer tp.delegate(ireq)()
	var refusal, stop error
	err = tp.invokeStream(ctx, ireq, func(resp *pluginv1.InvokeResponse) error {
		if resp.GetError() != nil {
			refusal = wire.ErrorFromProto(resp.GetError())
			return nil
		}
		res, err := decode[Res](resp)
		if err != nil {
			return err
		}
		if err := recv(res); err != nil {
			stop = err
			return err
		}
		return nil
	})
	switch {
	case stop != nil:
		return stop
	case err != nil:
		return fmt.Errorf("plugintest: stream %s: %w", procedure, err)
	}
	return refusal
}

func request(ctx context.Context, procedure string, principal sdk.Principal, req proto.Message) (*pluginv1.InvokeRequest, error) {
	in, err := proto.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("plugintest: encode request: %w", err)
	}
	ireq := &pluginv1.InvokeRequest{Procedure: procedure, Request: in, Principal: wire.PrincipalToProto(principal), TraceId: TraceID}
	if d, ok := ctx.Deadline(); ok {
		ireq.DeadlineUnixNano = d.UnixNano()
	}
	return ireq, nil
}

func decode[Res proto.Message](resp *pluginv1.InvokeResponse) (Res, error) {
	var zero Res
	res := zero.ProtoReflect().Type().New().Interface().(Res)
	if err := proto.Unmarshal(resp.GetResponse(), res); err != nil {
		return zero, fmt.Errorf("plugintest: decode response: %w", err)
	}
	return res, nil
}

// delegate gives req a delegation handle for the call's duration, as the
// gateway does; the returned function ends it.
func (tp *Plugin) delegate(req *pluginv1.InvokeRequest) func() {
	handle := strconv.FormatUint(tp.nextCall.Add(1), 36)
	tp.calls.Store(handle, req.GetPrincipal())
	req.Delegation = handle
	return func() { tp.calls.Delete(handle) }
}

// principal is whom a Host call presenting handle acts as: the caller of a
// call in flight, or the plugin itself.
func (tp *Plugin) principal(handle string) *pluginv1.Principal {
	if v, ok := tp.calls.Load(handle); ok && handle != "" {
		if p, _ := v.(*pluginv1.Principal); p != nil {
			return p
		}
	}
	return &pluginv1.Principal{TokenKind: pluginv1.TokenKind_TOKEN_KIND_PLUGIN, Plugin: tp.manifest.GetName()}
}
