package protocol

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// HostService is the gateway's Host service as a plugin reaches it: the
// calls of svc.plugin.v1.Host.
type HostService interface {
	Call(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error)
	PageAccess(ctx context.Context, req *pluginv1.PageAccessRequest) (*pluginv1.PageAccessResponse, error)
	BusinessAccess(ctx context.Context, req *pluginv1.BusinessAccessRequest) (*pluginv1.BusinessAccessResponse, error)
	AppInfo(ctx context.Context, req *pluginv1.AppInfoRequest) (*pluginv1.AppInfoResponse, error)
	UserInfo(ctx context.Context, req *pluginv1.UserInfoRequest) (*pluginv1.UserInfoResponse, error)
}

// HostHandler serves hs on a lane (LaneServer.Handler): the calls named
// ProcHost…. A failure travels as an Error carrying code(err), a Connect
// code.
func HostHandler(hs HostService, code func(error) uint32) Handler {
	return func(ctx context.Context, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse {
		if d := req.GetDeadlineUnixNano(); d != 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, time.Unix(0, d))
			defer cancel()
		}
		switch req.GetProcedure() {
		case ProcHostCall:
			return hostAnswer(ctx, req, new(pluginv1.InvokeRequest), hs.Call, code)
		case ProcHostPageAccess:
			return hostAnswer(ctx, req, new(pluginv1.PageAccessRequest), hs.PageAccess, code)
		case ProcHostBusinessAccess:
			return hostAnswer(ctx, req, new(pluginv1.BusinessAccessRequest), hs.BusinessAccess, code)
		case ProcHostAppInfo:
			return hostAnswer(ctx, req, new(pluginv1.AppInfoRequest), hs.AppInfo, code)
		case ProcHostUserInfo:
			return hostAnswer(ctx, req, new(pluginv1.UserInfoRequest), hs.UserInfo, code)
		}
		return &pluginv1.InvokeResponse{Error: &pluginv1.Error{ConnectCode: 12, // unimplemented
			Message: fmt.Sprintf("the Host service has no call %q", req.GetProcedure())}}
	}
}

func hostAnswer[Req, Res proto.Message](ctx context.Context, req *pluginv1.InvokeRequest, in Req, call func(context.Context, Req) (Res, error), code func(error) uint32) *pluginv1.InvokeResponse {
	if err := proto.Unmarshal(req.GetRequest(), in); err != nil {
		return &pluginv1.InvokeResponse{Error: &pluginv1.Error{ConnectCode: 3, Message: "decode host request: " + err.Error()}}
	}
	res, err := call(ctx, in)
	if err != nil {
		return &pluginv1.InvokeResponse{Error: &pluginv1.Error{ConnectCode: code(err), Message: err.Error()}}
	}
	return ControlAnswer(res, nil)
}

// UnimplementedHost answers every Host call unimplemented; embed it in a
// HostService that serves only some.
type UnimplementedHost struct{}

func unimplemented(call string) error {
	return &ControlFault{Procedure: call, Code: 12, Message: "not implemented"}
}

func (UnimplementedHost) Call(context.Context, *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	return nil, unimplemented(ProcHostCall)
}

func (UnimplementedHost) PageAccess(context.Context, *pluginv1.PageAccessRequest) (*pluginv1.PageAccessResponse, error) {
	return nil, unimplemented(ProcHostPageAccess)
}

func (UnimplementedHost) BusinessAccess(context.Context, *pluginv1.BusinessAccessRequest) (*pluginv1.BusinessAccessResponse, error) {
	return nil, unimplemented(ProcHostBusinessAccess)
}

func (UnimplementedHost) AppInfo(context.Context, *pluginv1.AppInfoRequest) (*pluginv1.AppInfoResponse, error) {
	return nil, unimplemented(ProcHostAppInfo)
}

func (UnimplementedHost) UserInfo(context.Context, *pluginv1.UserInfoRequest) (*pluginv1.UserInfoResponse, error) {
	return nil, unimplemented(ProcHostUserInfo)
}
