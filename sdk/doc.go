// Package sdk is the library every svc plugin uses, ours and partners': it
// serves a plugin process to the gateway, registers typed method handlers,
// describes the plugin (its protobuf API, Graph and REST bindings, access
// rules and events) and gives handlers the caller, a logger and a client of
// the gateway's Host service.
//
// A plugin is a main package:
//
//	func main() {
//		p := sdk.New(sdk.Info{Name: "hello", Version: "1.0.0"})
//		methods := hellov1.File_svc_hello_v1_hello_proto.Services().ByName("HelloService").Methods()
//		sdk.Handle(p, methods.ByName("SayHello"),
//			func(ctx context.Context, call *sdk.Call, req *hellov1.SayHelloRequest) (*hellov1.SayHelloResponse, error) {
//				return &hellov1.SayHelloResponse{Message: "Hello, " + req.GetName() + "!"}, nil
//			})
//		p.Serve()
//	}
//
// Handle registers a unary method and HandleStream a server-streaming one;
// there is no other way. Handlers see only this package's Go types: the
// caller (Principal, with its TokenKind), the host's facts (PageAccess,
// AppInfo, UserInfo), list paging (Window, Paging) and ids (ParseID,
// FormatID, the one parser of the platform's ids). No generated (wire) type
// is part of this API, nor of event's, migrate's or plugintest's: the four
// packages are the whole SDK, and api.txt lists every exported name (a
// test keeps it true). The plugin protocol itself (svc.plugin.v1, the
// handshake, the fast lane) is the platform's: Plugin, Call and HostClient
// are defined on internal/plugin/pluginrt's types, which run it, and
// internal/plugin/wire is the gateway's hold on them.
//
// Routing, authentication, authorization and request validation happen in
// the gateway, from the options on the plugin's proto methods
// (svc.plugin.v1.graph, google.api.http, svc.plugin.v1.access,
// buf.validate); a handler sees only calls it is meant to answer. Business
// rules that need the plugin's own data stay in the handler, which refuses
// with an *Error carrying the Graph numbers of CONTRACT §3.
//
// A plugin must never write to stdout: the gateway reads its handshake there.
// Logs go to stderr as JSON (Call.Logger, Plugin.Logger); the gateway
// collects them.
//
// The process exits when the gateway stops it or dies. Package plugintest
// runs a plugin in-process for its unit tests.
package sdk
