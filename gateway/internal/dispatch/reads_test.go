package dispatch_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/dispatch"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/route"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/sdk"
)

// recorder is an invoker that keeps the requests it is given.
type recorder struct {
	mu   sync.Mutex
	reqs []*pluginv1.InvokeRequest
}

func (r *recorder) Invoke(_ context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	return &pluginv1.InvokeResponse{}, nil
}

// reads allows the replica and remembers who wrote.
type reads struct {
	allow bool
	wrote []string
	asked int
	mu    sync.Mutex
}

func (r *reads) MayRead(*auth.Principal) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked++
	return r.allow
}
func (r *reads) Wrote(p *auth.Principal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wrote = append(r.wrote, p.UserID)
}

// testDispatcher is a Dispatcher, asking reads (nil: none) of the replica,
// serving the test plugin's Echo and Fail (both public) with inv.
func testDispatcher(t *testing.T, inv route.Invoker, rd dispatch.Reads) *dispatch.Dispatcher {
	return testDispatcherOf(t, "testplugin", route.Source{Invoker: inv}, rd)
}

func testDispatcherOf(t *testing.T, name string, src route.Source, rd dispatch.Reads) *dispatch.Dispatcher {
	t.Helper()
	p := sdk.New(sdk.Info{Name: "testplugin", Version: "1"})
	methods := testpluginv1.File_svc_testplugin_v1_testplugin_proto.Services().ByName("TestService").Methods()
	sdk.Handle(p, methods.ByName("Echo"), func(context.Context, *sdk.Call, *testpluginv1.EchoRequest) (*testpluginv1.EchoResponse, error) {
		return nil, nil
	})
	sdk.Handle(p, methods.ByName("Fail"), func(context.Context, *sdk.Call, *testpluginv1.FailRequest) (*testpluginv1.FailResponse, error) {
		return nil, nil
	})
	m, err := wire.Manifest(p)
	if err != nil {
		t.Fatal(err)
	}
	if src.Plugin, err = manifestcheck.Check(m); err != nil {
		t.Fatal(err)
	}
	src.Plugin.Name = name
	// p is the dispatcher's core too, but the table is src's alone.
	d, err := dispatch.New(dispatch.Options{Core: p,
		Calls: observe.NewCalls(observe.NewMetrics()), Reads: rd})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Publish(src); err != nil {
		t.Fatal(err)
	}
	return d
}

// asUser7 is a call's context with user 7 as its caller.
func asUser7() context.Context {
	return auth.WithPrincipal(context.Background(), &auth.Principal{Kind: pluginv1.TokenKind_TOKEN_KIND_SESSION, UserID: "7"})
}

func TestOnlyAMethodWithoutSideEffectsMayReadTheReplicaAndEveryOtherCallCountsAsAWrite(t *testing.T) {
	t.Parallel()
	inv := &recorder{}
	r := &reads{allow: true}
	d := testDispatcher(t, inv, r)
	tbl := d.Table()
	echo, _ := tbl.Method("/svc.testplugin.v1.TestService/Echo")
	fail, _ := tbl.Method("/svc.testplugin.v1.TestService/Fail")
	if !echo.ReadOnly || fail.ReadOnly {
		t.Fatalf("ReadOnly: Echo %v, Fail %v", echo.ReadOnly, fail.ReadOnly)
	}
	ctx := asUser7()
	if _, err := d.Call(ctx, echo, &testpluginv1.EchoRequest{Id: "1"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Call(ctx, fail, &testpluginv1.FailRequest{}, nil); err != nil {
		t.Fatal(err)
	}
	if !inv.reqs[0].GetReadReplica() || inv.reqs[1].GetReadReplica() {
		t.Fatalf("read_replica: read %v, write %v", inv.reqs[0].GetReadReplica(), inv.reqs[1].GetReadReplica())
	}
	if r.asked != 1 || len(r.wrote) != 1 || r.wrote[0] != "7" {
		t.Fatalf("asked %d, wrote %v", r.asked, r.wrote)
	}

	r.allow = false
	if _, err := d.Call(ctx, echo, &testpluginv1.EchoRequest{Id: "1"}, nil); err != nil {
		t.Fatal(err)
	}
	if inv.reqs[2].GetReadReplica() {
		t.Fatal("a read the router refused was marked for the replica")
	}
}

func TestWithoutAReplicaNoCallIsMarkedForIt(t *testing.T) {
	t.Parallel()
	inv := &recorder{}
	d := testDispatcher(t, inv, nil)
	echo, _ := d.Table().Method("/svc.testplugin.v1.TestService/Echo")
	if _, err := d.Call(asUser7(), echo, &testpluginv1.EchoRequest{Id: "1"}, nil); err != nil {
		t.Fatal(err)
	}
	if inv.reqs[0].GetReadReplica() {
		t.Fatal("marked for a replica that is not configured")
	}
}

func TestTheGatewaysOwnReadsAreNeverOfferedTheReplica(t *testing.T) {
	t.Parallel()
	inv := &recorder{}
	r := &reads{allow: true}
	d := testDispatcherOf(t, "core", route.Source{Invoker: inv, PrimaryOnly: true}, r)
	echo, _ := d.Table().Method("/svc.testplugin.v1.TestService/Echo")
	if _, err := d.Call(asUser7(), echo, &testpluginv1.EchoRequest{Id: "1"}, nil); err != nil {
		t.Fatal(err)
	}
	if inv.reqs[0].GetReadReplica() || r.asked != 0 {
		t.Fatalf("read_replica %v, asked %d", inv.reqs[0].GetReadReplica(), r.asked)
	}
}

// intoRecorder is an AnswerInvoker that keeps a copy of each request it is
// given, as the lane keeps nothing of them.
type intoRecorder struct{ recorder }

func (r *intoRecorder) InvokeInto(ctx context.Context, req *pluginv1.InvokeRequest, _ []byte) (*pluginv1.InvokeResponse, error) {
	req.Delegation, req.Traceparent = "d", "t" // as the host sets them
	return r.Invoke(ctx, proto.Clone(req).(*pluginv1.InvokeRequest))
}

func TestAReusedPluginRequestCarriesNothingOfTheCallBefore(t *testing.T) {
	t.Parallel()
	inv := &intoRecorder{}
	d := testDispatcher(t, inv, &reads{allow: true})
	echo, _ := d.Table().Method("/svc.testplugin.v1.TestService/Echo")
	ctx, cancel := context.WithTimeout(observe.WithTraceID(asUser7(), "trace1"), time.Minute)
	defer cancel()
	answer := make([]byte, 0, 64)
	if _, err := d.CallInto(ctx, echo, &testpluginv1.EchoRequest{Id: "1"}, nil, answer); err != nil {
		t.Fatal(err)
	}
	if _, err := d.CallInto(context.Background(), echo, &testpluginv1.EchoRequest{Id: "2"}, nil, answer); err != nil {
		t.Fatal(err)
	}
	first, second := inv.reqs[0], inv.reqs[1]
	if first.GetPrincipal().GetUserId() != "7" || first.GetTraceId() != "trace1" || first.GetDeadlineUnixNano() == 0 || !first.GetReadReplica() {
		t.Fatalf("first request %v, want user 7's, traced, with a deadline, for the replica", first)
	}
	want := &pluginv1.InvokeRequest{Procedure: echo.Procedure, Request: second.GetRequest(), ReadReplica: true, Delegation: "d", Traceparent: "t"}
	if !proto.Equal(second, want) {
		t.Fatalf("second request %v, want %v", second, want)
	}
}
