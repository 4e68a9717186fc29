package plugintest

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"
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
	conn     *protocol.Conn
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
// The plugin is served by go-plugin's own Serve, in its test mode, and
// reached by a go-plugin client, as the gateway reaches it: the same
// handshake, broker and services, without exec.
func Start(t testing.TB, p *sdk.Plugin, opts ...Option) *Plugin {
	t.Helper()
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	var started *Plugin
	current := func() *Plugin { return started }
	if cfg.host == nil {
		cfg.host = selfHost{tp: current}
	}
	logger := hclog.New(&hclog.LoggerOptions{Name: "plugintest", Level: hclog.Warn, Output: testOutput{t}})

	ctx, stop := context.WithCancel(context.Background())
	reattach := make(chan *goplugin.ReattachConfig, 1)
	closed := make(chan struct{})
	go goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: protocol.Handshake,
		VersionedPlugins: map[int]goplugin.PluginSet{
			protocol.Version: {protocol.PluginKey: &protocol.GoPlugin{Serve: func(b *goplugin.GRPCBroker, s *grpc.Server) error { return wire.ServeGRPC(p, b, s) }}},
		},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, protocol.ServerOptions()...)...)
		},
		Logger: logger,
		Test:   &goplugin.ServeTestConfig{Context: ctx, ReattachConfigCh: reattach, CloseCh: closed},
	})
	var rc *goplugin.ReattachConfig
	select {
	case rc = <-reattach:
	case <-closed:
		stop()
		t.Fatal("plugintest: the plugin stopped before serving; see the log above")
	case <-time.After(10 * time.Second):
		stop()
		t.Fatal("plugintest: the plugin did not start serving within 10 s")
	}
	rc.ReattachFunc = func() (runner.AttachedRunner, error) { return inProcess{done: closed}, nil }

	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  protocol.Handshake,
		Plugins:          goplugin.PluginSet{protocol.PluginKey: &protocol.GoPlugin{Host: &hostServer{h: cfg.host, tp: current}}},
		Reattach:         rc,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		GRPCDialOptions:  protocol.DialOptions(),
		Logger:           logger,
	})
	var rpc goplugin.ClientProtocol
	t.Cleanup(func() {
		if rpc != nil {
			_ = rpc.Close() // asks the plugin to shut down, as the gateway does
		}
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Error("plugintest: the plugin did not stop within 5 s")
		}
		stop()
	})
	rpc, err := client.Client()
	if err != nil {
		stop()
		t.Fatalf("plugintest: connect: %v", err)
	}
	raw, err := rpc.Dispense(protocol.PluginKey)
	if err != nil {
		t.Fatalf("plugintest: dispense: %v", err)
	}
	tp := &Plugin{conn: raw.(*protocol.Conn)}

	dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if tp.manifest, err = tp.conn.Describe(dctx); err != nil {
		t.Fatalf("plugintest: %v", err)
	}
	h, err := tp.health(dctx)
	if err != nil {
		t.Fatalf("plugintest: health: %v", err)
	}
	if !h.GetServing() {
		t.Fatalf("plugintest: the plugin is not serving: %s", h.GetMessage())
	}
	started = tp
	return tp
}

// inProcess is the go-plugin runner of a plugin served by this process:
// it "exits" when its Serve returns.
type inProcess struct{ done <-chan struct{} }

func (r inProcess) Wait(ctx context.Context) error {
	select {
	case <-r.done:
	case <-ctx.Done():
	}
	return nil
}

func (inProcess) Kill(context.Context) error { return nil }
func (inProcess) ID() string                 { return "in-process" }

func (inProcess) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (inProcess) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

// testOutput sends go-plugin's warnings to the test log.
type testOutput struct{ t testing.TB }

func (o testOutput) Write(p []byte) (int, error) {
	o.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// health runs the plugin's health check.
func (tp *Plugin) health(ctx context.Context) (*pluginv1.HealthResponse, error) {
	return tp.conn.Plugin.Health(ctx, &pluginv1.HealthRequest{})
}

// invoke sends one unary call as the gateway does. The error is a transport
// failure; a refusal is a response carrying an Error.
func (tp *Plugin) invoke(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	return tp.conn.Plugin.Invoke(ctx, req)
}

// invokeStream sends one streaming call and passes each response to recv.
func (tp *Plugin) invokeStream(ctx context.Context, req *pluginv1.InvokeRequest, recv func(*pluginv1.InvokeResponse) error) error {
	stream, err := tp.conn.Plugin.InvokeStream(ctx, req)
	if err != nil {
		return err
	}
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := recv(resp); err != nil {
			return err
		}
	}
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
