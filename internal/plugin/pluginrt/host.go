package pluginrt

import (
	"context"
	"errors"
	"fmt"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
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

// hostConn is the connection to the Host service, dialled through
// go-plugin's broker when the gateway first describes the plugin.
type hostConn struct {
	conn   *grpc.ClientConn
	client pluginv1.HostClient
}

func (h *HostClient) client() (pluginv1.HostClient, error) {
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
// Err is the gRPC error. Package sdk maps it to what a handler returns.
type HostError struct {
	What string
	Err  error
}

func (e HostError) Error() string { return fmt.Sprintf("sdk: host call %s: %v", e.What, e.Err) }

func (e HostError) Unwrap() error { return e.Err }

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
