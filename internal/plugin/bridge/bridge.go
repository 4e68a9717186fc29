// Package bridge carries the SDK's wire plumbing to package wire, which the
// gateway imports, without exporting it from package sdk, whose API is what
// plugin authors write against. Package sdk sets every variable when it is
// initialized; the values typed any are *sdk.Plugin, *sdk.Error and
// sdk.Principal, which this package cannot name (sdk imports it).
package bridge

import (
	"context"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	errorsv1 "github.com/svcplatform/svc/gen/svc/errors/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

var (
	Invoke       func(p any, ctx context.Context, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse
	InvokeStream func(p any, ctx context.Context, req *pluginv1.InvokeRequest, send func(*pluginv1.InvokeResponse) error) error
	Manifest     func(p any) (*pluginv1.Manifest, error)
	ServeGRPC    func(p any, broker *goplugin.GRPCBroker, s *grpc.Server) error

	ErrorToProto   func(e any) *pluginv1.Error
	ErrorFromProto func(pe *pluginv1.Error) any
	ErrorFromCode  func(c codes.Code, message string) any
	ErrorCode      func(e any) codes.Code
	ErrorGraph     func(e any) *errorsv1.GraphError

	PrincipalToProto   func(p any) *pluginv1.Principal
	PrincipalFromProto func(pp *pluginv1.Principal) any
)
