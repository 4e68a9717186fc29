package sdk_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"

	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/internal/testplugin/testsvc"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func setup(t *testing.T) *plugintest.Plugin {
	t.Helper()
	t.Parallel()
	return plugintest.Start(t, testsvc.New(testsvc.Config{Version: "1.2.3"}))
}

func TestManifestDescribesServicesWithEveryFileTheyNeed(t *testing.T) {
	t.Parallel()
	m, err := wire.Manifest(testsvc.New(testsvc.Config{Version: "1.2.3"}))
	if err != nil {
		t.Fatal(err)
	}
	if m.GetName() != "testplugin" || m.GetVersion() != "1.2.3" || m.GetProtocolVersion() != protocol.Version {
		t.Fatalf("identity = %q %q v%d", m.GetName(), m.GetVersion(), m.GetProtocolVersion())
	}
	if got := strings.Join(m.GetServices(), ","); got != "svc.testplugin.v1.TestService" {
		t.Fatalf("services = %s", got)
	}
	if got := strings.Join(m.GetEvents(), ","); got != "testplugin.echo.sent" {
		t.Fatalf("events = %s", got)
	}
	pos := map[string]int{}
	for i, f := range m.GetFiles().GetFile() {
		pos[f.GetName()] = i
		for _, dep := range f.GetDependency() {
			if j, ok := pos[dep]; !ok || j >= i {
				t.Errorf("%s comes before its dependency %s", f.GetName(), dep)
			}
		}
	}
	for _, want := range []string{
		"svc/testplugin/v1/testplugin.proto", "svc/plugin/v1/options.proto", "google/api/annotations.proto",
		"google/api/http.proto", "buf/validate/validate.proto", "google/protobuf/descriptor.proto",
	} {
		if _, ok := pos[want]; !ok {
			t.Errorf("descriptor set lacks %s", want)
		}
	}
	if _, err := protodesc.NewFiles(m.GetFiles()); err != nil {
		t.Fatalf("descriptor set does not build: %v", err)
	}
	again, err := wire.Manifest(testsvc.New(testsvc.Config{Version: "1.2.3"}))
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(m.GetFiles(), again.GetFiles()) {
		t.Fatal("descriptor set differs between two builds of the same plugin")
	}
}

func TestHandlerSeesPrincipalTraceIDAndDeadline(t *testing.T) {
	p := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	want, _ := ctx.Deadline()
	res, err := plugintest.Call[*testpluginv1.EchoResponse](ctx, p, testsvc.ProcEcho,
		sdk.Principal{UserID: "42", Scopes: []string{"pages:read"}}, &testpluginv1.EchoRequest{Id: "7", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetId() != "7" || res.GetText() != "hi" || res.GetUserId() != "42" || res.GetTraceId() != plugintest.TraceID {
		t.Fatalf("echo = %v", res)
	}
	if res.GetDeadlineUnixNano() != want.UnixNano() {
		t.Fatalf("handler deadline = %d, want %d", res.GetDeadlineUnixNano(), want.UnixNano())
	}
}

func TestRefusals(t *testing.T) {
	p := setup(t)
	for _, tc := range []struct {
		rule      string
		procedure string
		req       *testpluginv1.FailRequest
		status    int
		code      int
		subcode   int
		message   string
	}{
		{"a Graph error reaches the gateway with its numbers", testsvc.ProcFail,
			&testpluginv1.FailRequest{Kind: "graph", HttpStatus: 400, Code: 10, ErrorSubcode: 2018278, Message: "outside the window"},
			400, 10, 2018278, "outside the window"},
		{"a plain error is internal and its text is not shown", testsvc.ProcFail,
			&testpluginv1.FailRequest{Kind: "plain"}, 500, 1, 0, "An unexpected error has occurred"},
		{"a panic is internal", testsvc.ProcFail,
			&testpluginv1.FailRequest{Kind: "panic"}, 500, 1, 0, "An unexpected error has occurred"},
		{"an unknown method is refused with code 2500", "/svc.testplugin.v1.TestService/Nope",
			&testpluginv1.FailRequest{}, 404, 2500, 0, "has no method"},
		{"a streaming method called as unary is refused", testsvc.ProcCount,
			&testpluginv1.FailRequest{}, 400, 100, 0, "InvokeStream"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			_, err := plugintest.Call[*testpluginv1.FailResponse](context.Background(), p, tc.procedure, sdk.Principal{}, tc.req)
			var e *sdk.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *sdk.Error", err)
			}
			if e.HTTPStatus != tc.status || e.Code != tc.code || e.Subcode != tc.subcode || !strings.Contains(e.Message, tc.message) {
				t.Fatalf("error = %d %d/%d %q", e.HTTPStatus, e.Code, e.Subcode, e.Message)
			}
			if strings.Contains(e.Message, "secret") {
				t.Fatalf("internal error leaked: %q", e.Message)
			}
		})
	}
}

func TestStreamSendsEachMessageThenTheError(t *testing.T) {
	p := setup(t)
	ctx := context.Background()
	got, err := plugintest.CallStream[*testpluginv1.CountResponse](ctx, p, testsvc.ProcCount, sdk.Principal{}, &testpluginv1.CountRequest{N: 3})
	if err != nil || len(got) != 3 || got[2].GetI() != 3 {
		t.Fatalf("stream = %v, %v", got, err)
	}
	got, err = plugintest.CallStream[*testpluginv1.CountResponse](ctx, p, testsvc.ProcCount, sdk.Principal{}, &testpluginv1.CountRequest{N: 5, FailAfter: 2})
	var e *sdk.Error
	if len(got) != 2 || !errors.As(err, &e) || e.Field != "fail_after" {
		t.Fatalf("stream = %v, %v", got, err)
	}
}

func TestHostCallReachesAnotherMethodWithTheCallersPrincipal(t *testing.T) {
	p := setup(t)
	res, err := plugintest.Call[*testpluginv1.RelayResponse](context.Background(), p, testsvc.ProcRelay,
		sdk.Principal{UserID: "99"}, &testpluginv1.RelayRequest{Id: "1", Text: "via host"})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetEcho().GetText() != "via host" || res.GetEcho().GetUserId() != "99" || res.GetEcho().GetTraceId() != plugintest.TraceID {
		t.Fatalf("relay = %v", res)
	}
}

func TestRegistrationMistakesStopThePlugin(t *testing.T) {
	t.Parallel()
	methods := testpluginv1.File_svc_testplugin_v1_testplugin_proto.Services().ByName("TestService").Methods()
	echo, count := methods.ByName("Echo"), methods.ByName("Count")
	for _, tc := range []struct {
		rule     string
		register func(p *sdk.Plugin)
		panic    string
	}{
		{"a request type other than the method's", func(p *sdk.Plugin) {
			sdk.Handle(p, echo, func(context.Context, *sdk.Call, *testpluginv1.SlowRequest) (*testpluginv1.EchoResponse, error) {
				return nil, nil
			})
		}, "takes svc.testplugin.v1.EchoRequest"},
		{"a response type other than the method's", func(p *sdk.Plugin) {
			sdk.Handle(p, echo, func(context.Context, *sdk.Call, *testpluginv1.EchoRequest) (*testpluginv1.SlowResponse, error) {
				return nil, nil
			})
		}, "returns svc.testplugin.v1.EchoResponse"},
		{"a streaming method registered as unary", func(p *sdk.Plugin) {
			sdk.Handle(p, count, func(context.Context, *sdk.Call, *testpluginv1.CountRequest) (*testpluginv1.CountResponse, error) {
				return nil, nil
			})
		}, "is a streaming method"},
		{"the same method twice", func(p *sdk.Plugin) {
			fn := func(context.Context, *sdk.Call, *testpluginv1.EchoRequest) (*testpluginv1.EchoResponse, error) {
				return nil, nil
			}
			sdk.Handle(p, echo, fn)
			sdk.Handle(p, echo, fn)
		}, "registered twice"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), tc.panic) {
					t.Fatalf("panic = %v, want %q", r, tc.panic)
				}
			}()
			tc.register(sdk.New(sdk.Info{Name: "x"}))
		})
	}
}
