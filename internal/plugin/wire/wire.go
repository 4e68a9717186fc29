// Package wire is the gateway's hold on package sdk's types at the plugin
// protocol (svc.plugin.v1): running an in-process *sdk.Plugin's calls from
// their wire form, its manifest and its gRPC service, and the conversions
// of sdk.Error (the platform's one error type) and sdk.Principal to and from
// the wire. The gateway and package plugintest use it; a plugin author never
// does: handlers see only package sdk's Go types.
//
// Nothing here reaches into sdk: a plugin's protocol side is
// internal/plugin/pluginrt, which *sdk.Plugin is a conversion away from, and
// errors and principals convert field by field, the mapping of errors to
// Connect codes and Graph numbers being protocol.Refusal's.
package wire

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"

	errorsv1 "github.com/svcplatform/svc/gen/svc/errors/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/pluginrt"
	"github.com/svcplatform/svc/internal/plugin/protocol"
	"github.com/svcplatform/svc/sdk"
)

// rt is p's protocol side.
func rt(p *sdk.Plugin) *pluginrt.Plugin { return (*pluginrt.Plugin)(p) }

// Invoke runs one unary call of p in this process exactly as the gateway's
// calls are run: decode, deadline, handler, encode, errors. The gateway's
// in-process services, tests and benchmarks use it.
func Invoke(ctx context.Context, p *sdk.Plugin, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse {
	return rt(p).Invoke(ctx, req)
}

// InvokeStream runs one server-streaming call of p in this process, handing
// each response to send.
func InvokeStream(ctx context.Context, p *sdk.Plugin, req *pluginv1.InvokeRequest, send func(*pluginv1.InvokeResponse) error) error {
	return rt(p).InvokeStream(ctx, req, send)
}

// Manifest ends p's registration and returns its manifest, for running it
// inside the host process: the gateway serves its own services this way,
// through the same routing, validation and access checks as a plugin's.
func Manifest(p *sdk.Plugin) (*pluginv1.Manifest, error) { return rt(p).Manifest() }

// LaneServer is p's side of the fast lane, admitting the processes allow
// admits, as sdk.Plugin.Serve serves it; package plugintest uses it.
func LaneServer(p *sdk.Plugin, allow func(pid int) bool) *protocol.LaneServer {
	return rt(p).LaneServer(allow)
}

// DisconnectHost closes p's connection to the Host service, if it has one.
func DisconnectHost(p *sdk.Plugin) { rt(p).DisconnectHost() }

// refusal is e as the protocol carries it.
func refusal(e *sdk.Error) protocol.Refusal {
	return protocol.Refusal{HTTPStatus: e.HTTPStatus, Code: e.Code, Subcode: e.Subcode, Type: e.Type,
		Message: e.Message, Transient: e.Transient, Field: e.Field}
}

// fromRefusal is the *sdk.Error of r; internal: an unexpected failure whose
// cause is message.
func fromRefusal(r protocol.Refusal, internal bool, message string) *sdk.Error {
	if internal {
		return sdk.Internal(errors.New(message))
	}
	return &sdk.Error{HTTPStatus: r.HTTPStatus, Code: r.Code, Subcode: r.Subcode, Type: r.Type,
		Message: r.Message, Transient: r.Transient, Field: r.Field}
}

// ErrorToProto returns the wire form of e: its Connect (= gRPC) code and
// message, and the Graph numbers.
func ErrorToProto(e *sdk.Error) *pluginv1.Error { return refusal(e).Proto() }

// ErrorFromProto rebuilds an *sdk.Error from its wire form: a plugin's
// answer, or the error of a call made through the host. It is the one
// conversion from the wire.
func ErrorFromProto(pe *pluginv1.Error) *sdk.Error {
	r, internal := protocol.RefusalFromProto(pe)
	return fromRefusal(r, internal, pe.GetMessage())
}

// ErrorFromCode derives the Graph error of a Connect or gRPC code, for
// errors that carry no Graph numbers of their own.
func ErrorFromCode(c codes.Code, message string) *sdk.Error {
	r, internal := protocol.RefusalFromCode(c, message)
	return fromRefusal(r, internal, message)
}

// ErrorCode is the Connect (= gRPC) code of e, from its HTTP status.
func ErrorCode(e *sdk.Error) codes.Code { return refusal(e).ConnectCode() }

// ErrorGraph returns the Graph numbers of e, the detail that Connect and
// gRPC callers receive beside the code.
func ErrorGraph(e *sdk.Error) *errorsv1.GraphError { return refusal(e).Graph() }

// PrincipalToProto returns the wire form of p.
func PrincipalToProto(p sdk.Principal) *pluginv1.Principal {
	return &pluginv1.Principal{
		TokenKind: pluginv1.TokenKind(p.Kind), UserId: p.UserID, AppId: p.AppID,
		Scopes: p.Scopes, Live: p.Live, Staff: p.Staff, Plugin: p.Plugin,
	}
}

// PrincipalFromProto returns the Go form of a wire principal; nil is the
// anonymous caller.
func PrincipalFromProto(pp *pluginv1.Principal) sdk.Principal {
	return sdk.Principal{
		Kind: sdk.TokenKind(pp.GetTokenKind()), UserID: pp.GetUserId(), AppID: pp.GetAppId(),
		Scopes: pp.GetScopes(), Live: pp.GetLive(), Staff: pp.GetStaff(), Plugin: pp.GetPlugin(),
	}
}
