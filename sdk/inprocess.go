package sdk

import (
	"context"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	errorsv1 "github.com/svcplatform/svc/gen/svc/errors/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/bridge"
)

// The wire plumbing reaches the gateway through package wire, never through
// this package's API: see internal/bridge.
func init() {
	bridge.Invoke = func(p any, ctx context.Context, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse {
		return p.(*Plugin).invoke(ctx, req)
	}
	bridge.InvokeStream = func(p any, ctx context.Context, req *pluginv1.InvokeRequest, send func(*pluginv1.InvokeResponse) error) error {
		return p.(*Plugin).invokeStream(ctx, req, send)
	}
	bridge.Manifest = func(p any) (*pluginv1.Manifest, error) { return p.(*Plugin).inProcessManifest() }
	bridge.ServeGRPC = func(p any, broker *goplugin.GRPCBroker, s *grpc.Server) error {
		return p.(*Plugin).serveGRPC(broker, s)
	}
	bridge.ErrorToProto = func(e any) *pluginv1.Error { return errorToProto(e.(*Error)) }
	bridge.ErrorFromProto = func(pe *pluginv1.Error) any { return errorFromProto(pe) }
	bridge.ErrorFromCode = func(c codes.Code, message string) any { return errorFromCode(c, message) }
	bridge.ErrorCode = func(e any) codes.Code { return codeFor(e.(*Error)) }
	bridge.ErrorGraph = func(e any) *errorsv1.GraphError { return graphOf(e.(*Error)) }
	bridge.PrincipalToProto = func(p any) *pluginv1.Principal { return principalToProto(p.(Principal)) }
	bridge.PrincipalFromProto = func(pp *pluginv1.Principal) any { return principalFromProto(pp) }
}

// inProcessManifest ends registration and returns the plugin's manifest,
// for running it inside the host process (wire.Manifest).
func (p *Plugin) inProcessManifest() (*pluginv1.Manifest, error) {
	if err := p.freeze(); err != nil {
		return nil, err
	}
	return proto.Clone(p.manifest).(*pluginv1.Manifest), nil
}
