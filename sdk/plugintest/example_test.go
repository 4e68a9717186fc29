package plugintest_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	hellov1 "github.com/svcplatform/svc/gen/svc/hello/v1"
	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

// greeter is the plugin under test: hello/{name} greets the name, and
// refuses "nobody" as a node that does not exist.
func greeter() *sdk.Plugin {
	p := sdk.New(sdk.Info{Name: "hello", Version: "1.0.0"})
	sdk.Handle(p, hellov1.File_svc_hello_v1_hello_proto.Services().ByName("HelloService").Methods().ByName("SayHello"),
		func(_ context.Context, _ *sdk.Call, req *hellov1.SayHelloRequest) (*hellov1.SayHelloResponse, error) {
			if req.GetName() == "nobody" {
				return nil, sdk.NotFound("Name nobody")
			}
			return &hellov1.SayHelloResponse{Id: req.GetName(), Message: "Hello, " + req.GetName() + "!"}, nil
		})
	return p
}

// A unit test starts the plugin in-process, over the same gRPC protocol
// the gateway speaks, and calls a method as the caller of its choosing (here
// nobody: the method is public). In a test, pass the test's t; an example
// has none, so this one makes its own (exampleT, below).
func ExampleStart() {
	t := newExampleT()
	defer t.cleanup()

	p := plugintest.Start(t, greeter())
	res, err := plugintest.CallT[*hellov1.SayHelloResponse](t, p,
		"/svc.hello.v1.HelloService/SayHello", sdk.Principal{}, &hellov1.SayHelloRequest{Name: "Ada"})
	fmt.Println(res.GetMessage(), err)
	// Output: Hello, Ada! <nil>
}

// A refusal arrives as the *sdk.Error the handler returned, with the
// numbers of CONTRACT §3 the gateway will answer with; WantRefusal checks
// them and returns the error for a closer look.
func ExampleWantRefusal() {
	t := newExampleT()
	defer t.cleanup()

	p := plugintest.Start(t, greeter())
	_, err := plugintest.CallT[*hellov1.SayHelloResponse](t, p,
		"/svc.hello.v1.HelloService/SayHello", sdk.Principal{}, &hellov1.SayHelloRequest{Name: "nobody"})
	e := plugintest.WantRefusal(t, err, 404, 100, 33)
	fmt.Println(e.Message)
	// Output: Name nobody does not exist, cannot be loaded due to missing permissions, or does not support this operation.
}

// CheckManifest applies the rules the gateway applies when it loads the
// plugin (Graph node patterns and the request fields they bind, access
// rules, descriptors) and lists the bindings it would serve.
func ExampleCheckManifest() {
	t := newExampleT()
	defer t.cleanup()

	for _, route := range plugintest.CheckManifest(t, plugintest.Start(t, greeter())) {
		fmt.Println(route)
	}
	// Output:
	// GET hello/{name}
	// RPC /svc.hello.v1.HelloService/SayHello
	// POST hello/{name}/waves
	// RPC /svc.hello.v1.HelloService/Wave
}

// A server-streaming method answers every message it sent, in order.
func ExampleCallStream() {
	t := newExampleT()
	defer t.cleanup()

	p := sdk.New(sdk.Info{Name: "counter", Version: "1.0.0"})
	sdk.HandleStream(p, testpluginv1.File_svc_testplugin_v1_testplugin_proto.Services().ByName("TestService").Methods().ByName("Count"),
		func(_ context.Context, _ *sdk.Call, req *testpluginv1.CountRequest, send func(*testpluginv1.CountResponse) error) error {
			for i := range req.GetN() {
				if err := send(&testpluginv1.CountResponse{I: i + 1}); err != nil {
					return err
				}
			}
			return nil
		})
	tp := plugintest.Start(t, p)
	got, err := plugintest.CallStream[*testpluginv1.CountResponse](context.Background(), tp,
		"/svc.testplugin.v1.TestService/Count", sdk.Principal{UserID: "7"}, &testpluginv1.CountRequest{N: 3})
	for _, m := range got {
		fmt.Print(m.GetI(), " ")
	}
	fmt.Println(err)
	// Output: 1 2 3 <nil>
}

// exampleT is the part of testing.TB that plugintest uses, for examples,
// which have no *testing.T: a failure panics, cleanups run at the end.
type exampleT struct {
	testing.TB // nil: any other method panics
	cleanups   []func()
}

func newExampleT() *exampleT { return &exampleT{} }

func (t *exampleT) Helper()                        {}
func (t *exampleT) Cleanup(f func())               { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Log(args ...any)                { fmt.Fprintln(os.Stderr, args...) }
func (t *exampleT) Error(args ...any)              { panic(fmt.Sprint(args...)) }
func (t *exampleT) Fatal(args ...any)              { panic(fmt.Sprint(args...)) }
func (t *exampleT) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }

func (t *exampleT) cleanup() {
	for _, f := range slices.Backward(t.cleanups) {
		f()
	}
}
