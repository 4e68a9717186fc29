package host

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/internal/testplugin/testsvc"
)

// BenchmarkHop measures what one plugin hop adds to a call: the same Echo
// handler called in-process (decode, handler, encode, as the SDK runs it),
// and through the host to a plugin process over the fast lane. It reports
// CPU per call of both processes together (cpu-µs/op) and latency
// percentiles, for sequential calls and for 8 concurrent callers.
//
//	go test -run '^$' -bench BenchmarkHop -benchtime 3s ./gateway/internal/host/
func BenchmarkHop(b *testing.B) {
	for _, tc := range []struct {
		name string
		self bool
	}{
		{name: "in-process", self: true},
		{name: "fast-lane"},
	} {
		for _, callers := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/callers=%d", tc.name, callers), func(b *testing.B) {
				call, childPID := benchTarget(b, tc.self)
				benchCalls(b, callers, childPID, call)
			})
		}
	}
}

// benchTarget returns one Echo call, in-process or through a host, and the
// pid of the plugin process whose CPU counts too (0 in-process).
func benchTarget(b *testing.B, self bool) (func(context.Context) error, int) {
	in, _ := proto.Marshal(&testpluginv1.EchoRequest{Id: "1234567890", Text: "a sixty-byte JSON body is what the reference measured"})
	decode := func(resp *pluginv1.InvokeResponse) error {
		if resp.GetError() != nil {
			return wire.ErrorFromProto(resp.GetError())
		}
		var out testpluginv1.EchoResponse
		return proto.Unmarshal(resp.GetResponse(), &out)
	}
	principal := &pluginv1.Principal{TokenKind: pluginv1.TokenKind_TOKEN_KIND_USER, UserId: "42", Scopes: []string{"pages:read"}}
	if self {
		p := testsvc.New(testsvc.Config{Version: "bench"})
		return func(ctx context.Context) error {
			return decode(wire.Invoke(ctx, p, &pluginv1.InvokeRequest{Procedure: testsvc.ProcEcho, Request: in, Principal: principal, TraceId: "bench"}))
		}, 0
	}
	bin, err := testpluginBinary()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, "testplugin")); err != nil {
		b.Fatal(err)
	}
	h := New(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err := h.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close(context.Background()) })
	info := h.Plugins()[0]
	if info.State != StateServing {
		b.Fatalf("plugin not serving: %v", info)
	}
	return func(ctx context.Context) error {
		resp, err := h.Invoke(ctx, "testplugin", &pluginv1.InvokeRequest{Procedure: testsvc.ProcEcho, Request: in, Principal: principal, TraceId: "bench"})
		if err != nil {
			return err
		}
		return decode(resp)
	}, info.PID
}

// benchCalls runs b.N calls over callers goroutines and reports CPU per call
// and latency percentiles.
func benchCalls(b *testing.B, callers, childPID int, call func(context.Context) error) {
	ctx := context.Background()
	for range 1000 { // warm up connections, pools and the plugin's heap
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([][]time.Duration, callers)
	for i := range lat {
		lat[i] = make([]time.Duration, 0, b.N/callers+1)
	}
	selfBefore, childBefore := selfCPU(), childCPU(b, childPID)
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := range callers {
		n := b.N / callers
		if g < b.N%callers {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				start := time.Now()
				if err := call(ctx); err != nil {
					b.Error(err)
					return
				}
				lat[g] = append(lat[g], time.Since(start))
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	cpu := (selfCPU() - selfBefore) + (childCPU(b, childPID) - childBefore)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	if len(all) == 0 {
		return
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	b.ReportMetric(us(cpu)/float64(b.N), "cpu-µs/op")
	b.ReportMetric(us(all[len(all)/2]), "p50-µs")
	b.ReportMetric(us(all[len(all)*99/100]), "p99-µs")
}

// selfCPU is this process's user and system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childCPU is the user and system CPU time of process pid, all threads, from
// /proc/<pid>/stat (in clock ticks of 10 ms; the benchmark runs long enough
// for that to be fine).
func childCPU(b *testing.B, pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// Fields after the command name start at field 3 (state): utime is
	// field 14, stime field 15.
	utime, _ := strconv.ParseInt(fields[14-3], 10, 64)
	stime, _ := strconv.ParseInt(fields[15-3], 10, 64)
	const ticksPerSecond = 100 // sysconf(_SC_CLK_TCK) on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}

// BenchmarkReload measures a hot swap as an operator triggers it: exec the
// new process, handshake (with AutoMTLS), Describe, Health, fast lane,
// OnChange and the switch; the old process drains and stops in the
// background.
//
//	go test -run '^$' -bench BenchmarkReload ./gateway/internal/host/
func BenchmarkReload(b *testing.B) {
	bin, err := testpluginBinary()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, "testplugin")); err != nil {
		b.Fatal(err)
	}
	h := New(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	ctx := context.Background()
	if err := h.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = h.Close(ctx) }()
	b.ResetTimer()
	for range b.N {
		if _, err := h.Reload(ctx, "testplugin"); err != nil {
			b.Fatal(err)
		}
	}
}
