// Package wire is the SDK's side of the plugin protocol (svc.plugin.v1):
// running a plugin's calls from their wire form, its manifest, its gRPC
// service, and the conversions of errors and principals to and from the
// wire. The gateway and package plugintest use it; a plugin author never
// does: handlers see only package sdk's Go types.
package wire

import (
	"context"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	errorsv1 "github.com/svcplatform/svc/gen/svc/errors/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/bridge"
	"github.com/svcplatform/svc/sdk"
)

// Invoke runs one unary call of p in this process exactly as the gateway's
// calls are run: decode, deadline, handler, encode, errors. The gateway's
// in-process services, tests and benchmarks use it.
func Invoke(ctx context.Context, p *sdk.Plugin, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse {
	return bridge.Invoke(p, ctx, req)
}

// InvokeStream runs one server-streaming call of p in this process, handing
// each response to send.
func InvokeStream(ctx context.Context, p *sdk.Plugin, req *pluginv1.InvokeRequest, send func(*pluginv1.InvokeResponse) error) error {
	return bridge.InvokeStream(p, ctx, req, send)
}

// Manifest ends p's registration and returns its manifest, for running it
// inside the host process: the gateway serves its own services this way,
// through the same routing, validation and access checks as a plugin's.
func Manifest(p *sdk.Plugin) (*pluginv1.Manifest, error) { return bridge.Manifest(p) }

// ServeGRPC registers p's protocol service on s, reaching the gateway's Host
// service through broker. sdk.Plugin.Serve does this, and so does package
// plugintest.
func ServeGRPC(p *sdk.Plugin, broker *goplugin.GRPCBroker, s *grpc.Server) error {
	return bridge.ServeGRPC(p, broker, s)
}

// ErrorToProto returns the wire form of e: its Connect (= gRPC) code and
// message, and the Graph numbers.
func ErrorToProto(e *sdk.Error) *pluginv1.Error { return bridge.ErrorToProto(e) }

// ErrorFromProto rebuilds an *sdk.Error from its wire form: a plugin's
// answer, or the error of a call made through the host. It is the one
// conversion from the wire.
func ErrorFromProto(pe *pluginv1.Error) *sdk.Error { return bridge.ErrorFromProto(pe).(*sdk.Error) }

// ErrorFromCode derives the Graph error of a Connect or gRPC code, for
// errors that carry no Graph numbers of their own.
func ErrorFromCode(c codes.Code, message string) *sdk.Error {
	return bridge.ErrorFromCode(c, message).(*sdk.Error)
}

// ErrorCode is the Connect (= gRPC) code of e, from its HTTP status.
func ErrorCode(e *sdk.Error) codes.Code { return bridge.ErrorCode(e) }

// ErrorGraph returns the Graph numbers of e, the detail that Connect and
// gRPC callers receive beside the code.
func ErrorGraph(e *sdk.Error) *errorsv1.GraphError { return bridge.ErrorGraph(e) }

// PrincipalToProto returns the wire form of p.
func PrincipalToProto(p sdk.Principal) *pluginv1.Principal { return bridge.PrincipalToProto(p) }

// PrincipalFromProto returns the Go form of a wire principal; nil is the
// anonymous caller.
func PrincipalFromProto(pp *pluginv1.Principal) sdk.Principal {
	return bridge.PrincipalFromProto(pp).(sdk.Principal)
}
