package sdk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
	"github.com/svcplatform/svc/internal/plugin/pluginrt"
	"github.com/svcplatform/svc/internal/plugin/protocol"
	"github.com/svcplatform/svc/internal/plugin/protocol/lanetest"
)

func echoPlugin(t testing.TB) *Plugin {
	t.Helper()
	p := New(Info{Name: "echo", Version: "1"})
	Handle(p, testMethod("Echo"), func(ctx context.Context, call *Call, req *testpluginv1.EchoRequest) (*testpluginv1.EchoResponse, error) {
		if req.GetText() == "slow" {
			time.Sleep(20 * time.Millisecond)
		}
		return &testpluginv1.EchoResponse{Id: req.GetId(), Text: req.GetText(), UserId: call.Principal().UserID}, nil
	})
	if err := p.rt().Freeze(); err != nil {
		t.Fatal(err)
	}
	return p
}

func serveLane(t testing.TB, p *Plugin, allow func(int) bool) string {
	t.Helper()
	return lanetest.Serve(t, p.rt().LaneServer(allow))
}

func TestFastLaneAnswersConcurrentCallsEachToItsCaller(t *testing.T) {
	t.Parallel()
	p := echoPlugin(t)
	path := serveLane(t, p, pluginrt.AllowGateway)
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
	path := serveLane(t, p, pluginrt.AllowGateway)
	if _, err := protocol.DialLane(context.Background(), path, 1, os.Getpid()+1); err == nil {
		t.Fatal("dialled a socket served by another process than the plugin")
	}
}

func TestFastLaneCallEndsWithItsContextAndTheLaneStaysUsable(t *testing.T) {
	t.Parallel()
	p := New(Info{Name: "slow"})
	Handle(p, testMethod("Slow"), func(ctx context.Context, _ *Call, req *testpluginv1.SlowRequest) (*testpluginv1.SlowResponse, error) {
		time.Sleep(time.Duration(req.GetSleepMs()) * time.Millisecond)
		return &testpluginv1.SlowResponse{}, nil
	})
	path := serveLane(t, p, pluginrt.AllowGateway)
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

// countPlugin streams CountResponse 0..n-1 (failing after fail_after when
// set); "/…/Slow" waits for its context to end and reports it on ended.
func countPlugin(t *testing.T, ended chan<- string) *Plugin {
	t.Helper()
	p := New(Info{Name: "count", Version: "1"})
	HandleStream(p, testMethod("Count"), func(ctx context.Context, _ *Call, req *testpluginv1.CountRequest, send func(*testpluginv1.CountResponse) error) error {
		for i := range req.GetN() {
			if req.GetFailAfter() > 0 && i == req.GetFailAfter() {
				return Errorf(409, 100, 0, "failed after %d", i)
			}
			if err := send(&testpluginv1.CountResponse{I: i}); err != nil {
				return err
			}
		}
		if req.GetN() == 1 { // then holds the stream open until the gateway leaves
			<-ctx.Done()
			ended <- "stream"
		}
		return nil
	})
	Handle(p, testMethod("Slow"), func(ctx context.Context, _ *Call, req *testpluginv1.SlowRequest) (*testpluginv1.SlowResponse, error) {
		<-ctx.Done()
		ended <- "unary"
		return nil, ctx.Err()
	})
	if err := p.rt().Freeze(); err != nil {
		t.Fatal(err)
	}
	return p
}

func countOn(ctx context.Context, lane *protocol.LaneClient, req *testpluginv1.CountRequest, recv func(i int32) error) error {
	in, _ := proto.Marshal(req)
	return lane.InvokeStream(ctx, &pluginv1.InvokeRequest{Procedure: "/svc.testplugin.v1.TestService/Count", Request: in},
		func(resp *pluginv1.InvokeResponse) error {
			if e := resp.GetError(); e != nil {
				return errorFromProto(e)
			}
			var c testpluginv1.CountResponse
			if err := proto.Unmarshal(resp.GetResponse(), &c); err != nil {
				return err
			}
			return recv(c.GetI())
		})
}

func TestAStreamOnTheFastLaneArrivesInOrderEndsWithItsRefusalAndLeavesTheLaneUsable(t *testing.T) {
	t.Parallel()
	path := serveLane(t, countPlugin(t, make(chan string, 4)), pluginrt.AllowGateway)
	lane, err := protocol.DialLane(context.Background(), path, 1, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer lane.Close()
	if !lane.Streams() {
		t.Fatal("the lane of a current plugin does not carry streams")
	}
	for round := range 3 { // one connection: each stream reuses it
		var got []int32
		if err := countOn(context.Background(), lane, &testpluginv1.CountRequest{N: 5}, func(i int32) error { got = append(got, i); return nil }); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if fmt.Sprint(got) != "[0 1 2 3 4]" {
			t.Fatalf("round %d: got %v", round, got)
		}
		got = nil
		err := countOn(context.Background(), lane, &testpluginv1.CountRequest{N: 5, FailAfter: 3}, func(i int32) error { got = append(got, i); return nil })
		var e *Error
		if !errors.As(err, &e) || e.HTTPStatus != 409 || fmt.Sprint(got) != "[0 1 2]" {
			t.Fatalf("round %d: a failing stream gave %v after %v", round, err, got)
		}
	}
	if _, err := lane.Invoke(context.Background(), &pluginv1.InvokeRequest{Procedure: "/nope"}); err != nil {
		t.Fatalf("a unary call after the streams: %v", err)
	}
}

func TestTheGatewayLeavingAStreamOrACallOnTheFastLaneCancelsItsHandler(t *testing.T) {
	t.Parallel()
	ended := make(chan string, 4)
	path := serveLane(t, countPlugin(t, ended), pluginrt.AllowGateway)
	lane, err := protocol.DialLane(context.Background(), path, 1, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer lane.Close()
	gone := errors.New("the client left")
	// A stream that sends nothing more after its first message: the
	// gateway gives up on it (its client left).
	if err := countOn(context.Background(), lane, &testpluginv1.CountRequest{N: 1}, func(int32) error { return gone }); err != gone {
		t.Fatalf("stream = %v", err)
	}
	select {
	case what := <-ended:
		if what != "stream" {
			t.Fatalf("%s ended", what)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream's handler still runs after the gateway left")
	}
	// A unary call whose caller gives up.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	in, _ := proto.Marshal(&testpluginv1.SlowRequest{})
	if _, err := lane.Invoke(ctx, &pluginv1.InvokeRequest{Procedure: "/svc.testplugin.v1.TestService/Slow", Request: in}); err != context.DeadlineExceeded {
		t.Fatalf("call = %v", err)
	}
	select {
	case what := <-ended:
		if what != "unary" {
			t.Fatalf("%s ended", what)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call's handler still runs after the gateway left")
	}
	var got []int32
	if err := countOn(context.Background(), lane, &testpluginv1.CountRequest{N: 2}, func(i int32) error { got = append(got, i); return nil }); err != nil || len(got) != 2 {
		t.Fatalf("a stream after the departures = %v, %v", err, got)
	}
}

func TestALaneThatServesNoStreamsLeavesThemToGRPCAndStillAnswersCalls(t *testing.T) {
	t.Parallel()
	p := echoPlugin(t)
	path := lanetest.Serve(t, &protocol.LaneServer{Handler: p.rt().Invoke, Allow: pluginrt.AllowGateway, Logger: p.Logger()})
	lane, err := protocol.DialLane(context.Background(), path, 2, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer lane.Close()
	if lane.Streams() {
		t.Fatal("a lane without a stream handler claims streams")
	}
	in, _ := proto.Marshal(&testpluginv1.EchoRequest{Id: "1", Text: "hi"})
	if resp, err := lane.Invoke(context.Background(), &pluginv1.InvokeRequest{Procedure: "/svc.testplugin.v1.TestService/Echo", Request: in}); err != nil || resp.GetError() != nil {
		t.Fatalf("call = %v, %v", resp, err)
	}
}

func TestALaneCarriesAtMostItsStreamLimitAtOnceAndStillAnswersCalls(t *testing.T) {
	t.Parallel()
	path := serveLane(t, countPlugin(t, make(chan string, 256)), pluginrt.AllowGateway)
	lane, err := protocol.DialLane(context.Background(), path, 1, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer lane.Close()
	const held = 32 // the limit is 1024; a lower one keeps the test light
	lane.MaxStreams = held
	opened, release := make(chan struct{}, held), make(chan struct{})
	gone := errors.New("released")
	var wg sync.WaitGroup
	for range held {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = countOn(context.Background(), lane, &testpluginv1.CountRequest{N: 1}, func(int32) error {
				opened <- struct{}{}
				<-release
				return gone
			})
		}()
	}
	for range held {
		select {
		case <-opened:
		case <-time.After(30 * time.Second):
			t.Fatal("the streams did not all open")
		}
	}
	if err := countOn(context.Background(), lane, &testpluginv1.CountRequest{N: 2}, func(int32) error { return nil }); !errors.Is(err, protocol.ErrLaneBusy) {
		t.Fatalf("stream %d = %v, want ErrLaneBusy", held+1, err)
	}
	if _, err := lane.Invoke(context.Background(), &pluginv1.InvokeRequest{Procedure: "/nope"}); err != nil {
		t.Fatalf("a call beside %d streams: %v", held, err)
	}
	close(release)
	wg.Wait()
	if err := countOn(context.Background(), lane, &testpluginv1.CountRequest{N: 2}, func(int32) error { return nil }); err != nil {
		t.Fatalf("a stream once the others ended: %v", err)
	}
}

func TestAnswersOnTheFastLaneStayIntactWhileTheirBuffersAreReused(t *testing.T) {
	t.Parallel()
	// Answers of every size (empty, small, over what the free list keeps),
	// slow calls that get a watcher, and streams, at once on few
	// connections: an answer buffer reused before its answer was written
	// would show as another call's bytes. Each released answer is
	// overwritten first, so one released before it was written shows too.
	p := New(Info{Name: "echo", Version: "1"})
	Handle(p, testMethod("Echo"), func(ctx context.Context, call *Call, req *testpluginv1.EchoRequest) (*testpluginv1.EchoResponse, error) {
		if req.GetId() == "slow" {
			time.Sleep(25 * time.Millisecond)
		}
		return &testpluginv1.EchoResponse{Id: req.GetId(), Text: req.GetText()}, nil
	})
	HandleStream(p, testMethod("Count"), func(ctx context.Context, _ *Call, req *testpluginv1.CountRequest, send func(*testpluginv1.CountResponse) error) error {
		for i := range req.GetN() {
			if err := send(&testpluginv1.CountResponse{I: i}); err != nil {
				return err
			}
		}
		return nil
	})
	if err := p.rt().Freeze(); err != nil {
		t.Fatal(err)
	}
	srv := p.rt().LaneServer(pluginrt.AllowGateway)
	release := srv.Release
	srv.Release = func(resp *pluginv1.InvokeResponse) {
		for i := range resp.GetResponse() {
			resp.Response[i] = 0xff
		}
		release(resp)
	}
	lane, err := protocol.DialLane(context.Background(), lanetest.Serve(t, srv), 3, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer lane.Close()
	sizes := []int{0, 1, 300, 5000, (64 << 10) + 1000 /* over the largest buffer the free list keeps */}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				if g == 7 { // streams
					var got []int32
					if err := countOn(context.Background(), lane, &testpluginv1.CountRequest{N: int32(i % 7)}, func(n int32) error { got = append(got, n); return nil }); err != nil || len(got) != i%7 {
						errs <- fmt.Errorf("stream of %d gave %v (%v)", i%7, got, err)
						return
					}
					continue
				}
				id := fmt.Sprintf("g%d-%d", g, i)
				if i%9 == 0 {
					id = "slow"
				}
				text := string(bytes.Repeat([]byte{byte('a' + g)}, sizes[(g+i)%len(sizes)]))
				in, _ := proto.Marshal(&testpluginv1.EchoRequest{Id: id, Text: text})
				resp, err := lane.Invoke(context.Background(), &pluginv1.InvokeRequest{Procedure: "/svc.testplugin.v1.TestService/Echo", Request: in})
				if err != nil {
					errs <- err
					return
				}
				var out testpluginv1.EchoResponse
				if err := proto.Unmarshal(resp.GetResponse(), &out); err != nil || out.GetId() != id || out.GetText() != text {
					errs <- fmt.Errorf("call %s of %d bytes answered %q and %d bytes (%v)", id, len(text), out.GetId(), len(out.GetText()), err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
