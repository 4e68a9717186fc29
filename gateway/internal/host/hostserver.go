package host

import (
	"context"
	"fmt"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
)

type callerKey struct{}

// CallerPlugin tells a HostServer which plugin is calling it.
func CallerPlugin(ctx context.Context) string {
	name, _ := ctx.Value(callerKey{}).(string)
	return name
}

// hostServerFor returns the Host service given to plugin name's processes.
func (h *Host) hostServerFor(name string) protocol.HostService {
	var next protocol.HostService = routingHost{h: h}
	if h.opts.HostServer != nil {
		next = h.opts.HostServer
	}
	return callerHost{name: name, next: next, d: &h.delegated}
}

// callerHost stamps the calling plugin's name on the context, and replaces
// the principal of a Host call by the one the plugin may act as: the
// principal of the call it serves (by its delegation handle), or itself.
type callerHost struct {
	protocol.UnimplementedHost
	name string
	next protocol.HostService
	d    *delegations
}

func (c callerHost) Call(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	req.Principal = c.d.principal(c.name, req.GetDelegation())
	req.Delegation = ""
	return c.next.Call(context.WithValue(ctx, callerKey{}, c.name), req)
}

func (c callerHost) PageAccess(ctx context.Context, req *pluginv1.PageAccessRequest) (*pluginv1.PageAccessResponse, error) {
	return c.next.PageAccess(context.WithValue(ctx, callerKey{}, c.name), req)
}

func (c callerHost) BusinessAccess(ctx context.Context, req *pluginv1.BusinessAccessRequest) (*pluginv1.BusinessAccessResponse, error) {
	return c.next.BusinessAccess(context.WithValue(ctx, callerKey{}, c.name), req)
}

func (c callerHost) AppInfo(ctx context.Context, req *pluginv1.AppInfoRequest) (*pluginv1.AppInfoResponse, error) {
	return c.next.AppInfo(context.WithValue(ctx, callerKey{}, c.name), req)
}

func (c callerHost) UserInfo(ctx context.Context, req *pluginv1.UserInfoRequest) (*pluginv1.UserInfoResponse, error) {
	return c.next.UserInfo(context.WithValue(ctx, callerKey{}, c.name), req)
}

// routingHost is the Host service when Options.HostServer is nil (tests of
// the host alone): Call goes to the plugin serving the procedure, with the
// principal callerHost resolved and no access checks; PageAccess, AppInfo
// and UserInfo are unimplemented. The gateway's HostServer checks access.
type routingHost struct {
	protocol.UnimplementedHost
	h *Host
}

func (r routingHost) Call(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	name, ok := r.h.Route(req.GetProcedure())
	if !ok {
		return &pluginv1.InvokeResponse{Error: ErrorProto(apierr.UnknownPath(req.GetProcedure()))}, nil
	}
	resp, err := r.h.Invoke(ctx, name, req)
	if err != nil {
		return &pluginv1.InvokeResponse{Error: ErrorProto(fmt.Errorf("host call: %w", err))}, nil
	}
	return resp, nil
}
