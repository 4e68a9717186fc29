package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/internal/testplugin/testsvc"
)

func TestStartDescribesAndServesEveryPlugin(t *testing.T) {
	b := setup(t, map[string]map[string]string{
		"alpha": {"SVC_TESTPLUGIN_VERSION": "1.0.0"},
		"beta":  {"SVC_TESTPLUGIN_VERSION": "2.0.0"},
	})
	if err := b.h.Ready(); err != nil {
		t.Fatalf("ready: %v", err)
	}
	infos := b.h.Plugins()
	if len(infos) != 2 || infos[0].Name != "alpha" || infos[1].Name != "beta" {
		t.Fatalf("plugins = %v", infos)
	}
	for _, i := range infos {
		sum, _ := fileSHA256(b.dir + "/" + i.Name)
		if i.State != StateServing || i.PID == 0 || i.Protocol != protocol.Version || i.SHA256 != sum || i.StartedAt.IsZero() {
			t.Errorf("%s: %v", i.Name, i)
		}
		if len(i.Plugin.Services) != 1 || i.Plugin.Services[0].FullName() != "svc.testplugin.v1.TestService" {
			t.Errorf("%s services = %v", i.Name, i.Plugin.Services)
		}
		if _, err := i.Plugin.Files.FindFileByPath("buf/validate/validate.proto"); err != nil {
			t.Errorf("%s: descriptor set lacks buf/validate: %v", i.Name, err)
		}
	}
	if got := fmt.Sprint(b.changes.snapshots()); got != "[[alpha@1.0.0] [alpha@1.0.0 beta@2.0.0]]" {
		t.Fatalf("OnChange snapshots = %s", got)
	}
	res, err := b.echo(context.Background(), "beta", "hi")
	if err != nil || res.GetVersion() != "2.0.0" || res.GetText() != "hi" || res.GetTraceId() != "t-hi" {
		t.Fatalf("echo = %v, %v", res, err)
	}
}

func TestReloadWhileCallingFailsNoRequest(t *testing.T) {
	b := setup(t, map[string]map[string]string{"echo": {"SVC_TESTPLUGIN_VERSION": "1"}})
	ctx := context.Background()
	first := b.info(t, "echo").PID

	stop := make(chan struct{})
	var calls, failures atomic.Int64
	var firstErr atomic.Value
	versions := sync.Map{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				if w%4 == 0 {
					// Slow calls are in flight at every switch.
					err = b.slow(ctx, "echo", 15)
				} else {
					var res *testpluginv1.EchoResponse
					if res, err = b.echo(ctx, "echo", fmt.Sprint(w, i)); err == nil {
						versions.Store(res.GetVersion(), true)
					}
				}
				calls.Add(1)
				if err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	var pids []int
	for v := 2; v <= 3; v++ {
		time.Sleep(900 * time.Millisecond)
		b.install(t, "echo", map[string]string{"SVC_TESTPLUGIN_VERSION": fmt.Sprint(v)})
		info, err := b.h.Reload(ctx, "echo")
		if err != nil {
			t.Fatalf("reload to v%d: %v", v, err)
		}
		pids = append(pids, info.PID)
	}
	time.Sleep(900 * time.Millisecond)
	close(stop)
	wg.Wait()

	if n := failures.Load(); n > 0 {
		t.Fatalf("%d of %d calls failed during reloads; first: %v", n, calls.Load(), firstErr.Load())
	}
	for _, v := range []string{"1", "2", "3"} {
		if _, ok := versions.Load(v); !ok {
			t.Errorf("no call was answered by version %s", v)
		}
	}
	t.Logf("%d calls, none failed, across processes %d → %v", calls.Load(), first, pids)
	waitFor(t, 5*time.Second, "the replaced processes to stop", func() bool {
		return processGone(first) && processGone(pids[0])
	})
	if i := b.info(t, "echo"); i.PID != pids[1] || i.Version != "3" || i.State != StateServing {
		t.Fatalf("after reloads: %v", i)
	}
}

func TestKilledPluginRestartsByItselfAndTheGapAnswersOnlyUnavailable(t *testing.T) {
	b := setup(t, map[string]map[string]string{"echo": nil})
	ctx := context.Background()
	before := b.info(t, "echo")

	stop := make(chan struct{})
	var mu sync.Mutex
	var wrong []error
	var unavailable atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := b.echo(ctx, "echo", "x")
				if err == nil {
					continue
				}
				if e, ok := apierr.As(err); ok && e.HTTPStatus == 503 && e.Code == 2 && e.Transient {
					unavailable.Add(1)
				} else {
					mu.Lock()
					wrong = append(wrong, err)
					mu.Unlock()
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	if err := syscall.Kill(before.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "a new process", func() bool {
		i := b.info(t, "echo")
		return i.State == StateServing && i.PID != before.PID && i.PID != 0
	})
	res, err := b.echo(ctx, "echo", "back")
	close(stop)
	wg.Wait()
	if err != nil || res.GetPid() == int64(before.PID) {
		t.Fatalf("after restart: %v, %v", res, err)
	}
	if len(wrong) > 0 {
		t.Fatalf("during the gap, errors other than 503/code 2: %v", wrong)
	}
	after := b.info(t, "echo")
	if after.Restarts != 1 || after.LastError != "" {
		t.Fatalf("after restart: %v", after)
	}
	if n := len(b.changes.snapshots()); n != 2 {
		t.Fatalf("OnChange called %d times, want 2 (start, restart)", n)
	}
	t.Logf("%d calls answered Unavailable during the gap", unavailable.Load())
}

func TestRestartsBackOffWhileThePluginKeepsCrashing(t *testing.T) {
	b := setup(t, map[string]map[string]string{"echo": {"SVC_TESTPLUGIN_CRASH_AFTER": "1"}})
	ctx := context.Background()
	for crash := 1; crash <= 3; crash++ {
		_, err := b.echo(ctx, "echo", "boom")
		if e, ok := apierr.As(err); !ok || e.HTTPStatus != 503 || !e.Transient {
			t.Fatalf("call to a crashing plugin = %v", err)
		}
		waitFor(t, 5*time.Second, fmt.Sprintf("restart %d", crash), func() bool {
			i := b.info(t, "echo")
			return i.Restarts == crash && i.State == StateServing && i.PID != 0
		})
	}
	m := b.h.lookup("echo")
	m.mu.Lock()
	backoff := m.backoff
	m.mu.Unlock()
	if backoff != 4*backoffMin {
		t.Fatalf("backoff after 3 crashes = %s, want %s", backoff, 4*backoffMin)
	}
}

func TestAPluginThatFailsToStartDoesNotStopTheOthers(t *testing.T) {
	b := setup(t, map[string]map[string]string{
		"good": nil,
		"bad":  {"SVC_TESTPLUGIN_UNHEALTHY": "database unreachable"},
	})
	if _, err := b.echo(context.Background(), "good", "x"); err != nil {
		t.Fatal(err)
	}
	bad := b.info(t, "bad")
	if bad.State != StateRestarting || !strings.Contains(bad.LastError, "database unreachable") {
		t.Fatalf("bad = %v", bad)
	}
	if err := b.h.Ready(); err == nil || !strings.Contains(err.Error(), "bad is restarting") {
		t.Fatalf("ready = %v", err)
	}
	_, err := b.echo(context.Background(), "bad", "x")
	if e, ok := apierr.As(err); !ok || e.HTTPStatus != 503 || e.Code != 2 || !strings.Contains(e.Message, "The bad plugin") {
		t.Fatalf("call to a plugin that never started = %v", err)
	}
	// Fixed on disk: the retry loop picks it up by itself.
	b.install(t, "bad", nil)
	waitFor(t, 5*time.Second, "the fixed plugin to serve", func() bool { return b.info(t, "bad").State == StateServing })
}

func TestPluginsAreRefusedWithAClearReason(t *testing.T) {
	b := setup(t, nil, func(o *Options) {
		o.Pins = map[string]string{"pinned": strings.Repeat("ab", 32)}
	})
	for _, tc := range []struct {
		rule    string
		name    string
		env     map[string]string
		is      error
		message []string
	}{
		{"a plugin speaking another protocol version is refused naming both versions", "v3",
			map[string]string{"SVC_TESTPLUGIN_PROTOCOL": "3"}, ErrProtocolMismatch,
			[]string{`plugin "v3" speaks plugin protocol version 3`, "this gateway speaks version 2"}},
		{"a plugin built on go-plugin (protocol version 1) is refused with what to do", "v1",
			map[string]string{"SVC_TESTPLUGIN_PROTOCOL": "1"}, ErrProtocolMismatch,
			[]string{`plugin "v1" speaks plugin protocol version 1`, "this gateway speaks version 2", "rebuild it with the current SDK"}},
		{"a binary whose checksum is not the pinned one is refused", "pinned",
			nil, ErrChecksumMismatch, []string{`plugin "pinned"`, "the pin is abab"}},
		{"a plugin printing to stdout before the handshake is reported", "chatty",
			map[string]string{"SVC_TESTPLUGIN_STDOUT": "hello from main()"}, ErrStdoutBeforeHandshake,
			[]string{`plugin "chatty" wrote to stdout before the handshake`, "hello from main()"}},
		{"an unhealthy plugin is refused with its reason", "sick",
			map[string]string{"SVC_TESTPLUGIN_UNHEALTHY": "no database"}, ErrUnhealthy, []string{"no database"}},
		{"a plugin describing itself under another name is refused", "misnamed",
			map[string]string{"SVC_TESTPLUGIN_NAME": "other"}, nil, []string{`describes itself as "other"`}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			b.install(t, tc.name, tc.env)
			_, err := b.h.Reload(context.Background(), tc.name)
			if err == nil {
				t.Fatal("loaded")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			for _, m := range tc.message {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not say %q", err, m)
				}
			}
			for _, i := range b.h.Plugins() {
				if i.Name == tc.name {
					t.Errorf("a refused new plugin is listed: %v", i)
				}
			}
		})
	}
}

func TestAFailedReloadKeepsTheOldProcessServing(t *testing.T) {
	b := setup(t, map[string]map[string]string{"echo": {"SVC_TESTPLUGIN_VERSION": "1"}})
	ctx := context.Background()
	old := b.info(t, "echo")
	for _, tc := range []struct {
		rule   string
		break_ func()
		reason string
	}{
		{"the new binary prints to stdout", func() {
			b.install(t, "echo", map[string]string{"SVC_TESTPLUGIN_STDOUT": "oops"})
		}, "wrote to stdout before the handshake"},
		{"the new binary is not healthy", func() {
			b.install(t, "echo", map[string]string{"SVC_TESTPLUGIN_UNHEALTHY": "migrations pending"})
		}, "migrations pending"},
		{"the gateway refuses the new routes", func() {
			b.install(t, "echo", map[string]string{"SVC_TESTPLUGIN_VERSION": "2"})
			b.changes.mu.Lock()
			b.changes.refuse = errors.New("node echo/{id} is bound twice")
			b.changes.mu.Unlock()
		}, "node echo/{id} is bound twice"},
		{"the new binary is not executable", func() {
			writeExecutable(t, b.dir+"/echo", "#!/bin/sh\nexit 1\n")
			_ = os.Chmod(b.dir+"/echo", 0o644)
		}, "not an executable file"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			tc.break_()
			info, err := b.h.Reload(ctx, "echo")
			if err == nil || !strings.Contains(err.Error(), tc.reason) || !strings.Contains(err.Error(), "keeps serving") {
				t.Fatalf("reload error = %v", err)
			}
			if info.PID != old.PID || info.State != StateServing || info.Version != "1" {
				t.Fatalf("after the failed reload: %v", info)
			}
			if res, err := b.echo(ctx, "echo", "still"); err != nil || res.GetPid() != int64(old.PID) {
				t.Fatalf("old process: %v, %v", res, err)
			}
		})
	}
	if i := b.info(t, "echo"); !strings.Contains(i.LastError, "not an executable file") {
		t.Fatalf("the operator does not see the last reason: %v", i)
	}
}

func TestReloadLoadsAPluginDroppedIntoTheFolder(t *testing.T) {
	b := setup(t, nil)
	if len(b.h.Plugins()) != 0 {
		t.Fatal("plugins in an empty folder")
	}
	b.install(t, "hello", nil)
	info, err := b.h.Reload(context.Background(), "hello")
	if err != nil || info.State != StateServing {
		t.Fatalf("reload = %v, %v", info, err)
	}
	if _, err := b.echo(context.Background(), "hello", "x"); err != nil {
		t.Fatal(err)
	}
}

func TestReloadAllReloadsEveryPlugin(t *testing.T) {
	b := setup(t, map[string]map[string]string{"a": nil, "b": nil})
	before := map[string]int{"a": b.info(t, "a").PID, "b": b.info(t, "b").PID}
	b.install(t, "c", nil)
	if err := b.h.ReloadAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, i := range b.h.Plugins() {
		if i.State != StateServing || i.PID == before[i.Name] {
			t.Errorf("%s after ReloadAll: %v", i.Name, i)
		}
	}
	if n := len(b.h.Plugins()); n != 3 {
		t.Fatalf("%d plugins, want 3", n)
	}
}

func TestStreamingCallsGoThroughInOrder(t *testing.T) {
	b := setup(t, map[string]map[string]string{"echo": nil})
	in, _ := proto.Marshal(&testpluginv1.CountRequest{N: 5, FailAfter: 4})
	var got []string
	err := b.h.InvokeStream(context.Background(), "echo", &pluginv1.InvokeRequest{Procedure: testsvc.ProcCount, Request: in},
		func(resp *pluginv1.InvokeResponse) error {
			if resp.GetError() != nil {
				got = append(got, fmt.Sprintf("error %d", wire.ErrorFromProto(resp.GetError()).Code))
				return nil
			}
			var c testpluginv1.CountResponse
			if err := proto.Unmarshal(resp.GetResponse(), &c); err != nil {
				return err
			}
			got = append(got, fmt.Sprint(c.GetI()))
			return nil
		})
	if err != nil || strings.Join(got, ",") != "1,2,3,4,error 100" {
		t.Fatalf("stream = %v, %v", got, err)
	}
	g := b.h.lookup("echo").acquire()
	defer g.release()
	if g.lane == nil || !g.lane.Streams() {
		t.Fatal("the stream did not take the fast lane")
	}
}

func TestAPluginKilledMidStreamEndsTheStreamWithUnavailable(t *testing.T) {
	b := setup(t, map[string]map[string]string{"echo": nil})
	pid := b.info(t, "echo").PID
	in, _ := proto.Marshal(&testpluginv1.CountRequest{N: 1 << 30}) // far more than the socket holds
	got := 0
	err := b.h.InvokeStream(context.Background(), "echo", &pluginv1.InvokeRequest{Procedure: testsvc.ProcCount, Request: in},
		func(*pluginv1.InvokeResponse) error {
			if got++; got == 1 {
				return syscall.Kill(pid, syscall.SIGKILL)
			}
			return nil
		})
	if e, ok := apierr.As(err); !ok || e.HTTPStatus != 503 || e.Code != 2 || !e.Transient {
		t.Fatalf("a stream whose plugin died = %v after %d messages", err, got)
	}
}

func TestAPluginCallsAnotherMethodThroughTheHost(t *testing.T) {
	var caller atomic.Value
	b := setup(t, map[string]map[string]string{"relay": nil, "echo": nil}, func(o *Options) {
		o.HostServer = &recordingHost{caller: &caller}
	})
	rh := b.h.opts.HostServer.(*recordingHost)
	rh.h = b.h
	in, _ := proto.Marshal(&testpluginv1.RelayRequest{Id: "1", Text: "through the host"})
	resp, err := b.h.Invoke(context.Background(), "relay", &pluginv1.InvokeRequest{Procedure: testsvc.ProcRelay, Request: in,
		Principal: &pluginv1.Principal{UserId: "7"}, TraceId: "trace-relay"})
	if err != nil || resp.GetError() != nil {
		t.Fatalf("relay = %v, %v", resp, err)
	}
	var out testpluginv1.RelayResponse
	if err := proto.Unmarshal(resp.GetResponse(), &out); err != nil {
		t.Fatal(err)
	}
	if out.GetEcho().GetText() != "through the host" || out.GetEcho().GetUserId() != "7" || out.GetEcho().GetTraceId() != "trace-relay" {
		t.Fatalf("relay = %v", &out)
	}
	if caller.Load() != "relay" {
		t.Fatalf("CallerPlugin = %v", caller.Load())
	}
}

// recordingHost routes Host.Call like the default host, to the echo plugin,
// recording who called.
type recordingHost struct {
	protocol.UnimplementedHost
	h      *Host
	caller *atomic.Value
}

func (r *recordingHost) Call(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	r.caller.Store(CallerPlugin(ctx))
	return r.h.Invoke(ctx, "echo", req)
}

func TestDefaultHostRoutesCallsByService(t *testing.T) {
	b := setup(t, map[string]map[string]string{"echo": nil})
	if p, ok := b.h.Route(testsvc.ProcEcho); !ok || p != "echo" {
		t.Fatalf("route = %q, %v", p, ok)
	}
	in, _ := proto.Marshal(&testpluginv1.RelayRequest{Text: "self"})
	resp, err := b.h.Invoke(context.Background(), "echo", &pluginv1.InvokeRequest{Procedure: testsvc.ProcRelay, Request: in})
	if err != nil || resp.GetError() != nil {
		t.Fatalf("relay through the default host = %v, %v", resp, err)
	}
}

func TestTheDeadlineReachesTheHandler(t *testing.T) {
	b := setup(t, map[string]map[string]string{"echo": nil})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	want, _ := ctx.Deadline()
	res, err := b.echo(ctx, "echo", "d")
	if err != nil || res.GetDeadlineUnixNano() != want.UnixNano() {
		t.Fatalf("deadline = %v (%v), want %d", res.GetDeadlineUnixNano(), err, want.UnixNano())
	}
	// A call past its deadline ends then, not when the handler would have
	// finished: the gateway gives up (504, transient), or the handler sees
	// its context end first and says so; which comes first is a race.
	short, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	start := time.Now()
	err = b.slow(short, "echo", 2000)
	if e, ok := apierr.As(err); (!ok || e.HTTPStatus != 504 || !e.Transient) && (err == nil || err.Error() != "slow call cancelled") {
		t.Fatalf("call past its deadline = %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("call past its deadline took %s", d)
	}
}

func TestCloseDrainsCallsInFlightThenStops(t *testing.T) {
	b := setup(t, map[string]map[string]string{"echo": nil})
	pid := b.info(t, "echo").PID
	done := make(chan error, 1)
	go func() { done <- b.slow(context.Background(), "echo", 300) }()
	waitFor(t, 2*time.Second, "the call to be in flight", func() bool {
		return b.h.lookup("echo").current.Load().inflight.Load() == 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := b.h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("call in flight at Close: %v", err)
	}
	if !processGone(pid) {
		t.Fatal("plugin process still running after Close")
	}
	if _, err := b.echo(context.Background(), "echo", "late"); err == nil {
		t.Fatal("call after Close succeeded")
	}
	if i := b.info(t, "echo"); i.State != StateStopped {
		t.Fatalf("state after Close = %s", i.State)
	}
}

func (b *bundle) slow(ctx context.Context, plugin string, ms int64) error {
	in, _ := proto.Marshal(&testpluginv1.SlowRequest{SleepMs: ms})
	resp, err := b.h.Invoke(ctx, plugin, &pluginv1.InvokeRequest{Procedure: testsvc.ProcSlow, Request: in})
	if err != nil {
		return err
	}
	if resp.GetError() != nil {
		return wire.ErrorFromProto(resp.GetError())
	}
	var out testpluginv1.SlowResponse
	if err := proto.Unmarshal(resp.GetResponse(), &out); err != nil {
		return err
	}
	if out.GetCancelled() {
		return errors.New("slow call cancelled")
	}
	return nil
}

func TestStateTransitions(t *testing.T) {
	t.Parallel()
	all := []State{StateStarting, StateServing, StateRestarting, StateStopped}
	events := []event{evServing, evStartFail, evCrashed, evStopped}
	want := map[State]map[event]State{
		StateStarting:   {evServing: StateServing, evStartFail: StateRestarting, evStopped: StateStopped},
		StateServing:    {evServing: StateServing, evStartFail: StateServing, evCrashed: StateRestarting, evStopped: StateStopped},
		StateRestarting: {evServing: StateServing, evStartFail: StateRestarting, evStopped: StateStopped},
		StateStopped:    {evStopped: StateStopped},
	}
	for _, s := range all {
		for _, e := range events {
			got, err := s.next(e)
			w, ok := want[s][e]
			switch {
			case ok && (err != nil || got != w):
				t.Errorf("%s + %q = %s, %v; want %s", s, e, got, err, w)
			case !ok && err == nil:
				t.Errorf("%s + %q = %s; want refused", s, e, got)
			}
		}
	}
}

func TestPluginLogLinesReachTheGatewayLogWithTheirLevelAndTraceID(t *testing.T) {
	rec := &recordHandler{}
	b := setup(t, map[string]map[string]string{"echo": nil}, func(o *Options) { o.Logger = slog.New(rec) })
	in, _ := proto.Marshal(&testpluginv1.FailRequest{Kind: "plain"})
	resp, err := b.h.Invoke(context.Background(), "echo", &pluginv1.InvokeRequest{Procedure: testsvc.ProcFail, Request: in, TraceId: "trace-log"})
	if err != nil || resp.GetError().GetGraph().GetCode() != 1 {
		t.Fatalf("fail = %v, %v", resp, err)
	}
	waitFor(t, 2*time.Second, "the plugin's log line", func() bool {
		r, ok := rec.find("call failed")
		return ok && r.Level == slog.LevelError && r.attrs["trace_id"] == "trace-log" && r.attrs["plugin"] == "echo" &&
			strings.Contains(fmt.Sprint(r.attrs["error"]), "secret")
	})
}

// recordHandler keeps log records for assertions.
type recordHandler struct {
	mu      sync.Mutex
	records []record
}

type record struct {
	Level slog.Level
	Msg   string
	attrs map[string]any
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	rec := record{Level: r.Level, Msg: r.Message, attrs: map[string]any{}}
	r.Attrs(func(a slog.Attr) bool { rec.attrs[a.Key] = a.Value.Any(); return true })
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, rec)
	return nil
}

func (h *recordHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &derivedHandler{root: h, attrs: attrs}
}

func (h *recordHandler) WithGroup(string) slog.Handler { return h }

func (h *recordHandler) find(msg string) (record, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.records {
		if r.Msg == msg {
			return r, true
		}
	}
	return record{}, false
}

// derivedHandler is a recordHandler with more attributes, recording into
// its root.
type derivedHandler struct {
	root  *recordHandler
	attrs []slog.Attr
}

func (d *derivedHandler) Enabled(context.Context, slog.Level) bool { return true }

func (d *derivedHandler) Handle(ctx context.Context, r slog.Record) error {
	r2 := r.Clone()
	r2.AddAttrs(d.attrs...)
	return d.root.Handle(ctx, r2)
}

func (d *derivedHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &derivedHandler{root: d.root, attrs: append(append([]slog.Attr(nil), d.attrs...), attrs...)}
}

func (d *derivedHandler) WithGroup(string) slog.Handler { return d }

func TestOnlyTheGatewayCanCallThePlugin(t *testing.T) {
	b := setup(t, map[string]map[string]string{"echo": nil})
	g := b.h.lookup("echo").current.Load()

	t.Run("the fast lane admits no other process, even of the same user", func(t *testing.T) {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=dial", "SVC_HOST_TEST_LANE="+g.laneSocket)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("helper: %v", err)
		}
		if !strings.HasPrefix(string(out), "refused:") {
			t.Fatalf("another process: %s", out)
		}
	})
}

// A binary still open for writing somewhere (a copy just finished, or a
// child forked meanwhile that has not exec'd yet) cannot be executed
// (ETXTBSY) for a moment: the start waits that moment out.
func TestAPluginWhoseBinaryIsBrieflyBusyStillStarts(t *testing.T) {
	b := setup(t, nil)
	b.install(t, "hello", nil)
	f, err := os.OpenFile(filepath.Join(b.dir, "hello"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	release := time.AfterFunc(30*time.Millisecond, func() { _ = f.Close() })
	defer release.Stop()
	info, err := b.h.Reload(context.Background(), "hello")
	if err != nil || info.State != StateServing {
		t.Fatalf("reload = %v, %v", info, err)
	}
}
