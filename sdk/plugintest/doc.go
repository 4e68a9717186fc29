// Package plugintest runs a plugin in-process for its unit tests: the
// *sdk.Plugin is served over a real fast-lane socket, as the gateway reaches
// it (no exec, no build), described and health-checked as the gateway would, and called with
// any principal. What the plugin asks the gateway (sdk.HostClient) goes to
// a test host, a Host in the SDK's own types: by default one that routes
// calls back to the plugin under test; WithHost gives the test's own (embed
// NoHost, or use OnePage).
//
//	func TestSayHello(t *testing.T) {
//		p := plugintest.Start(t, hello.New())
//		res, err := plugintest.Call[*hellov1.SayHelloResponse](ctx, p,
//			"/svc.hello.v1.HelloService/SayHello", sdk.Principal{}, &hellov1.SayHelloRequest{Name: "Ada"})
//		…
//	}
//
// CheckManifest applies the gateway's load-time rules to what the plugin
// described, from the package the gateway itself uses
// (internal/plugin/manifestcheck): Graph node patterns and the request fields
// they bind, access rules that can be enforced, descriptors that resolve.
// The checks of each call (access rules against a real caller, request
// validation) are the gateway's and do not run on Call; test those against
// a running gateway.
package plugintest
