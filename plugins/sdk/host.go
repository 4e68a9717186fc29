package sdk

import (
	"context"
	"errors"
	"fmt"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/plugins/sdk/protocol"
)

// ErrNoHost is returned by HostClient methods when the plugin runs without a
// gateway, e.g. in a test that gave it no host.
var ErrNoHost = errors.New("sdk: the plugin has no connection to the gateway's Host service")

// HostClient calls the gateway's Host service: another plugin's methods, and
// the core's identity data.
type HostClient struct {
	p          *Plugin
	delegation string
	traceID    string
}

// hostConn is the connection to the Host service, dialled through
// go-plugin's broker when the gateway first describes the plugin.
type hostConn struct {
	conn   *grpc.ClientConn
	client pluginv1.HostClient
}

// Call invokes procedure (e.g. "/svc.completions.v1.CompletionsService/Complete")
// on whichever plugin serves it, with req, and decodes the answer into res.
// A refusal by the other plugin is returned as its *Error, so a handler may
// return it as is.
func (h *HostClient) Call(ctx context.Context, procedure string, req, res proto.Message) error {
	hc := h.p.host.Load()
	if hc == nil {
		return ErrNoHost
	}
	in, err := proto.Marshal(req)
	if err != nil {
		return fmt.Errorf("sdk: host call %s: encode request: %w", procedure, err)
	}
	ireq := &pluginv1.InvokeRequest{Procedure: procedure, Request: in, Delegation: h.delegation, TraceId: h.traceID}
	if d, ok := ctx.Deadline(); ok {
		ireq.DeadlineUnixNano = d.UnixNano()
	}
	resp, err := hc.client.Call(ctx, ireq)
	if err != nil {
		return hostError(procedure, err)
	}
	if resp.GetError() != nil {
		return ErrorFromProto(resp.GetError())
	}
	if err := proto.Unmarshal(resp.GetResponse(), res); err != nil {
		return fmt.Errorf("sdk: host call %s: decode response: %w", procedure, err)
	}
	return nil
}

// PageAccess asks the gateway what a user or an app may do on a Page.
func (h *HostClient) PageAccess(ctx context.Context, req *pluginv1.PageAccessRequest) (*pluginv1.PageAccessResponse, error) {
	hc := h.p.host.Load()
	if hc == nil {
		return nil, ErrNoHost
	}
	resp, err := hc.client.PageAccess(ctx, req)
	if err != nil {
		return nil, hostError("PageAccess", err)
	}
	return resp, nil
}

// AppInfo asks the gateway about an app: its name, mode, products and
// platformConfig.
func (h *HostClient) AppInfo(ctx context.Context, appID string) (*pluginv1.AppInfoResponse, error) {
	hc := h.p.host.Load()
	if hc == nil {
		return nil, ErrNoHost
	}
	resp, err := hc.client.AppInfo(ctx, &pluginv1.AppInfoRequest{AppId: appID})
	if err != nil {
		return nil, hostError("AppInfo", err)
	}
	return resp, nil
}

// UserInfo asks the gateway whether a user exists and how the user is
// named.
func (h *HostClient) UserInfo(ctx context.Context, userID string) (*pluginv1.UserInfoResponse, error) {
	hc := h.p.host.Load()
	if hc == nil {
		return nil, ErrNoHost
	}
	resp, err := hc.client.UserInfo(ctx, &pluginv1.UserInfoRequest{UserId: userID})
	if err != nil {
		return nil, hostError("UserInfo", err)
	}
	return resp, nil
}

// hostError keeps a gateway that is briefly unreachable retryable for the
// caller.
func hostError(what string, err error) error {
	switch status.Code(err) {
	case codes.Unavailable:
		return Unavailable("The gateway").WithCause(fmt.Errorf("host call %s: %w", what, err))
	case codes.DeadlineExceeded, codes.Canceled:
		return fmt.Errorf("sdk: host call %s: %w", what, context.DeadlineExceeded)
	}
	return fmt.Errorf("sdk: host call %s: %w", what, err)
}

// connectHost dials the Host service the gateway serves on broker id. Later
// calls keep the first connection.
func (p *Plugin) connectHost(broker *goplugin.GRPCBroker, id uint32) error {
	p.hostDial.Lock()
	defer p.hostDial.Unlock()
	if p.host.Load() != nil {
		return nil
	}
	conn, err := broker.DialWithOptions(id, protocol.DialOptions()...)
	if err != nil {
		return fmt.Errorf("dial the host service (broker id %d): %w", id, err)
	}
	p.host.Store(&hostConn{conn: conn, client: pluginv1.NewHostClient(conn)})
	return nil
}
