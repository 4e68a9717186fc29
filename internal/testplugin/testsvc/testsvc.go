// Package testsvc is the service of internal/testplugin, the plugin that
// exists for the tests of the plugin host and the SDK. It is a package of
// its own so that benchmarks can call the same handlers in-process.
package testsvc

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"time"

	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
	"github.com/svcplatform/svc/sdk"
)

// Procedures of svc.testplugin.v1.TestService.
const (
	ProcEcho  = "/svc.testplugin.v1.TestService/Echo"
	ProcSlow  = "/svc.testplugin.v1.TestService/Slow"
	ProcCount = "/svc.testplugin.v1.TestService/Count"
	ProcRelay = "/svc.testplugin.v1.TestService/Relay"
	ProcFail  = "/svc.testplugin.v1.TestService/Fail"
)

// Config selects how the plugin behaves, including how it misbehaves.
type Config struct {
	// Name is the plugin's name; "testplugin" when empty.
	Name string
	// Version is reported in the manifest and in every Echo answer.
	Version string
	// CrashAfter, when > 0, makes the process exit abruptly while serving
	// that many-th call.
	CrashAfter int64
	// Unhealthy, when set, makes the health check fail with this message.
	Unhealthy string
	// Alias serves AliasService alone, which claims TestService's Graph node.
	Alias bool
}

// New returns the test plugin.
func New(cfg Config) *sdk.Plugin {
	if cfg.Name == "" {
		cfg.Name = "testplugin"
	}
	p := sdk.New(sdk.Info{Name: cfg.Name, Version: cfg.Version, Events: []string{"testplugin.echo.sent"}})
	s := &service{cfg: cfg, pid: int64(os.Getpid())}
	if cfg.Unhealthy != "" {
		p.OnHealth(func(context.Context) error { return errors.New(cfg.Unhealthy) })
	}
	if cfg.Alias {
		alias := testpluginv1.File_svc_testplugin_v1_testplugin_proto.Services().ByName("AliasService").Methods()
		sdk.Handle(p, alias.ByName("Echo"), s.Echo)
		return p
	}
	methods := testpluginv1.File_svc_testplugin_v1_testplugin_proto.Services().ByName("TestService").Methods()
	sdk.Handle(p, methods.ByName("Echo"), s.Echo)
	sdk.Handle(p, methods.ByName("Slow"), s.Slow)
	sdk.HandleStream(p, methods.ByName("Count"), s.Count)
	sdk.Handle(p, methods.ByName("Relay"), s.Relay)
	sdk.Handle(p, methods.ByName("Fail"), s.Fail)
	sdk.Handle(p, methods.ByName("ProbeDatabase"), s.ProbeDatabase)
	sdk.Handle(p, methods.ByName("Escape"), s.Escape)
	sdk.Handle(p, methods.ByName("PageFacts"), PageFacts)
	return p
}

// PageFacts answers what the gateway sent with the call of the Page the
// request names.
func PageFacts(_ context.Context, call *sdk.Call, req *testpluginv1.PageFactsRequest) (*testpluginv1.PageFactsResponse, error) {
	a, ok := call.PageAccess(req.GetPageId())
	if !ok {
		return &testpluginv1.PageFactsResponse{}, nil
	}
	return &testpluginv1.PageFactsResponse{Sent: true, Exists: a.Exists, PageName: a.Name, ChatSurfacing: a.ChatSurfacing}, nil
}

type service struct {
	cfg   Config
	pid   int64
	calls atomic.Int64
}

func (s *service) count() {
	if n := s.calls.Add(1); s.cfg.CrashAfter > 0 && n >= s.cfg.CrashAfter {
		os.Exit(3)
	}
}

// Echo answers with what it received and who answered.
func (s *service) Echo(ctx context.Context, call *sdk.Call, req *testpluginv1.EchoRequest) (*testpluginv1.EchoResponse, error) {
	s.count()
	res := &testpluginv1.EchoResponse{
		Id: req.GetId(), Text: req.GetText(), Pid: s.pid, Version: s.cfg.Version,
		UserId: call.Principal().UserID, TraceId: call.TraceID(),
	}
	if d, ok := ctx.Deadline(); ok {
		res.DeadlineUnixNano = d.UnixNano()
	}
	return res, nil
}

// Slow sleeps, keeping the call in flight.
func (s *service) Slow(ctx context.Context, _ *sdk.Call, req *testpluginv1.SlowRequest) (*testpluginv1.SlowResponse, error) {
	s.count()
	t := time.NewTimer(time.Duration(req.GetSleepMs()) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return &testpluginv1.SlowResponse{Pid: s.pid}, nil
	case <-ctx.Done():
		return &testpluginv1.SlowResponse{Pid: s.pid, Cancelled: true}, nil
	}
}

// Count streams 1..n.
func (s *service) Count(ctx context.Context, _ *sdk.Call, req *testpluginv1.CountRequest, send func(*testpluginv1.CountResponse) error) error {
	s.count()
	for i := int32(1); i <= req.GetN(); i++ {
		if req.GetFailAfter() > 0 && i > req.GetFailAfter() {
			return sdk.Invalid("fail_after", "Failing after %d messages, as asked.", req.GetFailAfter())
		}
		if err := send(&testpluginv1.CountResponse{I: i}); err != nil {
			return err
		}
	}
	return nil
}

// Relay calls Echo through the gateway's Host service.
func (s *service) Relay(ctx context.Context, call *sdk.Call, req *testpluginv1.RelayRequest) (*testpluginv1.RelayResponse, error) {
	s.count()
	var echo testpluginv1.EchoResponse
	if err := call.Host().Call(ctx, ProcEcho, &testpluginv1.EchoRequest{Id: req.GetId(), Text: req.GetText()}, &echo); err != nil {
		return nil, err
	}
	return &testpluginv1.RelayResponse{Echo: &echo, RelayPid: s.pid}, nil
}

// Fail refuses the call the way it is asked to.
func (s *service) Fail(_ context.Context, _ *sdk.Call, req *testpluginv1.FailRequest) (*testpluginv1.FailResponse, error) {
	s.count()
	switch req.GetKind() {
	case "graph":
		return nil, sdk.Errorf(int(req.GetHttpStatus()), int(req.GetCode()), int(req.GetErrorSubcode()), "%s", req.GetMessage())
	case "panic":
		panic("testplugin: asked to panic")
	}
	return nil, errors.New("testplugin: a plain error with a secret inside")
}
