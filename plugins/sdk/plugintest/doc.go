// Package plugintest runs a plugin in-process for its unit tests: the
// *sdk.Plugin is served over a real go-plugin gRPC connection (no exec, no
// build), described and health-checked as the gateway would, and called with
// any principal. Host callbacks go to a test host: by default one that
// routes Host.Call back to the plugin under test.
//
//	func TestSayHello(t *testing.T) {
//		p := plugintest.Start(t, hello.New())
//		res, err := plugintest.Call[*hellov1.SayHelloResponse](ctx, p,
//			"/svc.hello.v1.HelloService/SayHello", sdk.Principal{}, &hellov1.SayHelloRequest{Name: "Ada"})
//		…
//	}
//
// The gateway's own checks (routing, access rules, validation) do not run
// here; test those against a running gateway.
package plugintest
