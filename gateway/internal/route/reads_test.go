package route_test

import (
	"context"
	"sync"
	"testing"

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

// caller lets everyone in as user 7.
type caller struct{}

func (caller) Admit(context.Context, *pluginv1.Access) error { return nil }

func (caller) Check(context.Context, *pluginv1.Access, route.Target) (route.Grant, error) {
	return route.Grant{Principal: &pluginv1.Principal{UserId: "7"}}, nil
}

// reads allows the replica and remembers who wrote.
type reads struct {
	allow bool
	wrote []string
	asked int
	mu    sync.Mutex
}

func (r *reads) MayRead(*pluginv1.Principal) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked++
	return r.allow
}
func (r *reads) Wrote(p *pluginv1.Principal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wrote = append(r.wrote, p.GetUserId())
}

func testTable(t *testing.T, inv route.Invoker) *route.Table {
	return testTableOf(t, "testplugin", route.Source{Invoker: inv})
}

// testTableOf builds a table of src, serving the test plugin under name.
func testTableOf(t *testing.T, name string, src route.Source) *route.Table {
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
	tbl, err := route.Build([]route.Source{src}, caller{})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func TestOnlyAMethodWithoutSideEffectsMayReadTheReplicaAndEveryOtherCallCountsAsAWrite(t *testing.T) {
	t.Parallel()
	inv := &recorder{}
	r := &reads{allow: true}
	tbl := testTable(t, inv).WithReads(r)
	echo, _ := tbl.Method("/svc.testplugin.v1.TestService/Echo")
	fail, _ := tbl.Method("/svc.testplugin.v1.TestService/Fail")
	if !echo.ReadOnly || fail.ReadOnly {
		t.Fatalf("ReadOnly: Echo %v, Fail %v", echo.ReadOnly, fail.ReadOnly)
	}
	ctx := context.Background()
	if _, err := tbl.Call(ctx, echo, &testpluginv1.EchoRequest{Id: "1"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Call(ctx, fail, &testpluginv1.FailRequest{}, nil); err != nil {
		t.Fatal(err)
	}
	if !inv.reqs[0].GetReadReplica() || inv.reqs[1].GetReadReplica() {
		t.Fatalf("read_replica: read %v, write %v", inv.reqs[0].GetReadReplica(), inv.reqs[1].GetReadReplica())
	}
	if r.asked != 1 || len(r.wrote) != 1 || r.wrote[0] != "7" {
		t.Fatalf("asked %d, wrote %v", r.asked, r.wrote)
	}

	r.allow = false
	if _, err := tbl.Call(ctx, echo, &testpluginv1.EchoRequest{Id: "1"}, nil); err != nil {
		t.Fatal(err)
	}
	if inv.reqs[2].GetReadReplica() {
		t.Fatal("a read the router refused was marked for the replica")
	}
}

func TestWithoutAReplicaNoCallIsMarkedForIt(t *testing.T) {
	t.Parallel()
	inv := &recorder{}
	tbl := testTable(t, inv)
	echo, _ := tbl.Method("/svc.testplugin.v1.TestService/Echo")
	if _, err := tbl.Call(context.Background(), echo, &testpluginv1.EchoRequest{Id: "1"}, nil); err != nil {
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
	tbl := testTableOf(t, "core", route.Source{Invoker: inv, PrimaryOnly: true}).WithReads(r)
	echo, _ := tbl.Method("/svc.testplugin.v1.TestService/Echo")
	if _, err := tbl.Call(context.Background(), echo, &testpluginv1.EchoRequest{Id: "1"}, nil); err != nil {
		t.Fatal(err)
	}
	if inv.reqs[0].GetReadReplica() || r.asked != 0 {
		t.Fatalf("read_replica %v, asked %d", inv.reqs[0].GetReadReplica(), r.asked)
	}
}
