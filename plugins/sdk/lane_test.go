package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
	"github.com/svcplatform/svc/plugins/sdk/protocol"
)

func echoPlugin(t *testing.T) *Plugin {
	t.Helper()
	p := New(Info{Name: "echo", Version: "1"})
	Handle(p, testMethod("Echo"), func(ctx context.Context, call *Call, req *testpluginv1.EchoRequest) (*testpluginv1.EchoResponse, error) {
		if req.GetText() == "slow" {
			time.Sleep(20 * time.Millisecond)
		}
		return &testpluginv1.EchoResponse{Id: req.GetId(), Text: req.GetText(), UserId: call.Principal().UserID}, nil
	})
	if err := p.freeze(); err != nil {
		t.Fatal(err)
	}
	return p
}

func serveLane(t *testing.T, p *Plugin, allow func(int) bool) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lane")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	path := filepath.Join(dir, protocol.FastLaneSocket)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	srv := &protocol.LaneServer{Handler: p.invoke, Allow: allow, Logger: p.log}
	go func() { _ = srv.Serve(ln) }()
	return path
}

func TestFastLaneAnswersConcurrentCallsEachToItsCaller(t *testing.T) {
	t.Parallel()
	p := echoPlugin(t)
	path := serveLane(t, p, allowGateway)
	ctx := context.Background()
	lane, err := protocol.DialLane(ctx, path, 2, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer lane.Close()

	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				text := fmt.Sprintf("g%d-%d", g, i)
				if i%10 == 0 {
					text = "slow" // later calls overtake it
				}
				in, _ := proto.Marshal(&testpluginv1.EchoRequest{Id: "1", Text: text})
				resp, err := lane.Invoke(ctx, &pluginv1.InvokeRequest{Procedure: "/svc.testplugin.v1.TestService/Echo", Request: in,
					Principal: &pluginv1.Principal{UserId: text}})
				if err != nil {
					errs <- err
					return
				}
				var out testpluginv1.EchoResponse
				if err := proto.Unmarshal(resp.GetResponse(), &out); err != nil || out.GetUserId() != text || out.GetText() != text {
					errs <- fmt.Errorf("call %s answered %v (%v)", text, &out, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestFastLaneRefusesAProcessOtherThanTheGateway(t *testing.T) {
	t.Parallel()
	p := echoPlugin(t)
	path := serveLane(t, p, func(int) bool { return false })
	if _, err := protocol.DialLane(context.Background(), path, 1, os.Getpid()); err == nil {
		t.Fatal("a process the plugin does not admit opened a fast lane")
	}
}

func TestFastLaneRefusesASocketServedByAnotherProcess(t *testing.T) {
	t.Parallel()
	p := echoPlugin(t)
	path := serveLane(t, p, allowGateway)
	if _, err := protocol.DialLane(context.Background(), path, 1, os.Getpid()+1); err == nil {
		t.Fatal("dialled a socket served by another process than the plugin")
	}
}

func TestLogLinesAreGoPluginJSONWithTheTraceID(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := New(Info{Name: "x"})
	p.log = newLogger(&buf)
	call := &Call{p: p, procedure: "/a.B/C", traceID: "T1"}
	call.Logger().Warn("something", "n", 3)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("not JSON: %q", buf.String())
	}
	if line["@message"] != "something" || line["@level"] != "warn" || line["trace_id"] != "T1" ||
		line["procedure"] != "/a.B/C" || line["n"] != float64(3) || line["@timestamp"] == nil {
		t.Fatalf("log line = %v", line)
	}
}

func TestFastLaneCallEndsWithItsContextAndTheLaneStaysUsable(t *testing.T) {
	t.Parallel()
	p := New(Info{Name: "slow"})
	Handle(p, testMethod("Slow"), func(ctx context.Context, _ *Call, req *testpluginv1.SlowRequest) (*testpluginv1.SlowResponse, error) {
		time.Sleep(time.Duration(req.GetSleepMs()) * time.Millisecond)
		return &testpluginv1.SlowResponse{}, nil
	})
	path := serveLane(t, p, allowGateway)
	lane, err := protocol.DialLane(context.Background(), path, 1, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer lane.Close()
	call := func(ctx context.Context, ms int64) error {
		in, _ := proto.Marshal(&testpluginv1.SlowRequest{SleepMs: ms})
		_, err := lane.Invoke(ctx, &pluginv1.InvokeRequest{Procedure: "/svc.testplugin.v1.TestService/Slow", Request: in})
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := call(ctx, 2000); err != context.DeadlineExceeded || time.Since(start) > time.Second {
		t.Fatalf("call past its deadline = %v after %s", err, time.Since(start))
	}
	if err := call(context.Background(), 1); err != nil {
		t.Fatalf("next call = %v", err)
	}
}

func testMethod(name protoreflect.Name) protoreflect.MethodDescriptor {
	return testpluginv1.File_svc_testplugin_v1_testplugin_proto.Services().ByName("TestService").Methods().ByName(name)
}
