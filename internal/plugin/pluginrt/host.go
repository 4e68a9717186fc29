package pluginrt

import (
	"context"
	"errors"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
	"github.com/svcplatform/svc/internal/tracing"
)

// ErrNoHost is returned by HostClient methods when the plugin runs without a
// gateway, e.g. in a test that gave it no host (sdk.ErrNoHost).
var ErrNoHost = errors.New("sdk: the plugin has no connection to the gateway's Host service")

// HostClient calls the gateway's Host service, in its wire types; package
// sdk converts. A transport failure is returned as the gRPC error, for sdk
// to map.
type HostClient struct {
	p          *Plugin
	delegation string
	traceID    string
}

// hostConn is the connection to the Host service, made when the gateway
// first describes the plugin, over the fast lane's framing on the socket
// the gateway named (DescribeRequest.host_socket).
type hostConn struct {
	client hostClient
	lane   *protocol.LaneClient // nil when a test serves the host otherwise
	close  func() error
}

// hostClient is the Host service (laneHost; tests may serve another).
type hostClient = protocol.HostService

// laneHost is the Host service served by the gateway over the fast lane's
// framing (protocol.ProcHost…).
type laneHost struct{ c *protocol.LaneClient }

func (l laneHost) Call(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	res := new(pluginv1.InvokeResponse)
	return res, protocol.CallControl(ctx, l.c, protocol.ProcHostCall, req, res)
}

func (l laneHost) PageAccess(ctx context.Context, req *pluginv1.PageAccessRequest) (*pluginv1.PageAccessResponse, error) {
	res := new(pluginv1.PageAccessResponse)
	return res, protocol.CallControl(ctx, l.c, protocol.ProcHostPageAccess, req, res)
}

func (l laneHost) BusinessAccess(ctx context.Context, req *pluginv1.BusinessAccessRequest) (*pluginv1.BusinessAccessResponse, error) {
	res := new(pluginv1.BusinessAccessResponse)
	return res, protocol.CallControl(ctx, l.c, protocol.ProcHostBusinessAccess, req, res)
}

func (l laneHost) AppInfo(ctx context.Context, req *pluginv1.AppInfoRequest) (*pluginv1.AppInfoResponse, error) {
	res := new(pluginv1.AppInfoResponse)
	return res, protocol.CallControl(ctx, l.c, protocol.ProcHostAppInfo, req, res)
}

func (l laneHost) UserInfo(ctx context.Context, req *pluginv1.UserInfoRequest) (*pluginv1.UserInfoResponse, error) {
	res := new(pluginv1.UserInfoResponse)
	return res, protocol.CallControl(ctx, l.c, protocol.ProcHostUserInfo, req, res)
}

func (h *HostClient) client() (hostClient, error) {
	hc := h.p.host.Load()
	if hc == nil {
		return nil, ErrNoHost
	}
	return hc.client, nil
}

// Call invokes procedure on whichever plugin serves it, with req, and
// decodes the answer into res. refusal is the other side's refusal; err a
// failure to encode, reach the host or decode.
func (h *HostClient) Call(ctx context.Context, procedure string, req, res proto.Message) (refusal *pluginv1.Error, err error) {
	c, err := h.client()
	if err != nil {
		return nil, err
	}
	in, err := proto.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("sdk: host call %s: encode request: %w", procedure, err)
	}
	ireq := &pluginv1.InvokeRequest{Procedure: procedure, Request: in, Delegation: h.delegation, TraceId: h.traceID}
	if d, ok := ctx.Deadline(); ok {
		ireq.DeadlineUnixNano = d.UnixNano()
	}
	resp, err := c.Call(ctx, ireq)
	if err != nil {
		return nil, HostError{What: procedure, Err: err}
	}
	if resp.GetError() != nil {
		return resp.GetError(), nil
	}
	if err := proto.Unmarshal(resp.GetResponse(), res); err != nil {
		return nil, fmt.Errorf("sdk: host call %s: decode response: %w", procedure, err)
	}
	return nil, nil
}

// PageAccess asks the gateway what a user or an app may do on a Page.
func (h *HostClient) PageAccess(ctx context.Context, req *pluginv1.PageAccessRequest) (*pluginv1.PageAccessResponse, error) {
	c, err := h.client()
	if err != nil {
		return nil, err
	}
	resp, err := c.PageAccess(ctx, req)
	if err != nil {
		return nil, HostError{What: "PageAccess", Err: err}
	}
	return resp, nil
}

// BusinessAccess asks the gateway whether a user has the least role an
// action needs on a business.
func (h *HostClient) BusinessAccess(ctx context.Context, req *pluginv1.BusinessAccessRequest) (*pluginv1.BusinessAccessResponse, error) {
	c, err := h.client()
	if err != nil {
		return nil, err
	}
	resp, err := c.BusinessAccess(ctx, req)
	if err != nil {
		return nil, HostError{What: "BusinessAccess", Err: err}
	}
	return resp, nil
}

// AppInfo asks the gateway about an app.
func (h *HostClient) AppInfo(ctx context.Context, appID string) (*pluginv1.AppInfoResponse, error) {
	c, err := h.client()
	if err != nil {
		return nil, err
	}
	resp, err := c.AppInfo(ctx, &pluginv1.AppInfoRequest{AppId: appID})
	if err != nil {
		return nil, HostError{What: "AppInfo", Err: err}
	}
	return resp, nil
}

// UserInfo asks the gateway about a user.
func (h *HostClient) UserInfo(ctx context.Context, userID string) (*pluginv1.UserInfoResponse, error) {
	c, err := h.client()
	if err != nil {
		return nil, err
	}
	resp, err := c.UserInfo(ctx, &pluginv1.UserInfoRequest{UserId: userID})
	if err != nil {
		return nil, HostError{What: "UserInfo", Err: err}
	}
	return resp, nil
}

// HostError is a Host call the gateway did not answer: What names the call,
// Err is the transport's error. Package sdk maps it (Failure) to what a
// handler returns.
type HostError struct {
	What string
	Err  error
}

// HostFailure is what kind of failure a HostError is.
type HostFailure int

const (
	// HostFailed: the gateway refused the call (a bug on one side).
	HostFailed HostFailure = iota
	// HostUnavailable: the gateway could not be reached; worth a retry.
	HostUnavailable
	// HostDeadline: the call's deadline passed, or it was cancelled.
	HostDeadline
)

// Failure tells what kind of failure e is.
func (e HostError) Failure() HostFailure {
	var fault *protocol.ControlFault
	switch {
	case errors.As(e.Err, &fault):
		switch fault.Code {
		case 14: // unavailable
			return HostUnavailable
		case 1, 4: // canceled, deadline_exceeded
			return HostDeadline
		}
		return HostFailed
	case errors.Is(e.Err, context.DeadlineExceeded), errors.Is(e.Err, context.Canceled):
		return HostDeadline
	}
	// A lane that failed: the gateway is gone or restarting.
	return HostUnavailable
}

func (e HostError) Error() string { return fmt.Sprintf("sdk: host call %s: %v", e.What, e.Err) }

func (e HostError) Unwrap() error { return e.Err }

// ConnectHostLane connects to the Host service served on the unix socket
// path by process peer (the gateway: this process's parent; an in-process
// test: this process). Later calls keep the first connection.
func (p *Plugin) ConnectHostLane(ctx context.Context, path string, peer int) error {
	p.hostDial.Lock()
	defer p.hostDial.Unlock()
	if p.host.Load() != nil {
		return nil
	}
	c, err := protocol.DialLane(ctx, path, 1, peer)
	if err != nil {
		return fmt.Errorf("dial the host service on %s: %w", path, err)
	}
	p.host.Store(&hostConn{client: laneHost{c}, lane: c, close: c.Close})
	return nil
}

// DisconnectHost closes the connection to the Host service, if there is
// one; Host calls then fail with ErrNoHost.
func (p *Plugin) DisconnectHost() {
	if hc := p.host.Swap(nil); hc != nil {
		_ = hc.close()
	}
}

// spanExporter hands the plugin's finished spans to the gateway, which
// exports them with its own (tracing.Start).
type spanExporter struct{ p *Plugin }

func (e spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	hc := e.p.host.Load()
	if hc == nil || hc.lane == nil {
		return nil // no gateway to hand them to
	}
	return protocol.CallControl(ctx, hc.lane, protocol.ProcHostExportSpans, tracing.Encode(spans), new(emptypb.Empty))
}

func (spanExporter) Shutdown(context.Context) error { return nil }
