package protocol

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// epollTargets is the set of descriptors registered in this process's
// epoll instances (from /proc/self/fdinfo).
func epollTargets(t *testing.T) map[int]bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	targets := map[int]bool{}
	for _, e := range fds {
		if link, _ := os.Readlink("/proc/self/fd/" + e.Name()); link != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "tfd:" {
				n, _ := strconv.Atoi(f[1])
				targets[n] = true
			}
		}
	}
	return targets
}

// TestThePluginsSideOfALaneConnectionIsInBlockingModeAndNotPolled checks
// what blockingIO is for: the socket it returns reads with plain blocking
// system calls (O_NONBLOCK cleared), and is not in the network poller's
// epoll set, which would wake an idle thread at each call's arrival.
func TestThePluginsSideOfALaneConnectionIsInBlockingModeAndNotPolled(t *testing.T) {
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "lane.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	served, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	f, err := blockingIO(served)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	var ferr syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		r, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		flags, ferr = int(r), e
	}); err != nil || ferr != 0 {
		t.Fatalf("fcntl: %v %v", err, ferr)
	}
	if flags&syscall.O_NONBLOCK != 0 {
		t.Fatalf("the lane's socket has O_NONBLOCK (flags %#o): its reads go through the network poller", flags)
	}
	if polled := epollTargets(t); polled[int(f.Fd())] {
		t.Fatalf("the lane's socket (fd %d) is in the network poller's epoll set", f.Fd())
	}
	if _, err := client.Write([]byte("call")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if n, err := f.Read(buf); err != nil || string(buf[:n]) != "call" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
}

// blockingSockets is the set of this process's sockets in blocking mode.
func blockingSockets(t *testing.T) map[string]bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	set := map[string]bool{}
	for _, e := range fds {
		link, _ := os.Readlink("/proc/self/fd/" + e.Name())
		if !strings.HasPrefix(link, "socket:") {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "flags:" {
				if flags, err := strconv.ParseInt(f[1], 8, 64); err == nil && flags&syscall.O_NONBLOCK == 0 {
					set[link] = true
				}
			}
		}
	}
	return set
}

// added counts the members of now not in before.
func added(before, now map[string]bool) int {
	n := 0
	for k := range now {
		if !before[k] {
			n++
		}
	}
	return n
}

// TestALaneReadsOneConnectionBlockingAndCallsTakeItFirst checks the lane's
// split: the plugin reads the first connection it accepts in blocking mode
// (the next one once that one closes) and the others on the poller, and
// the gateway takes that connection for a call whenever it is idle, so
// calls one at a time go over it and concurrent ones spread on the others.
func TestALaneReadsOneConnectionBlockingAndCallsTakeItFirst(t *testing.T) {
	path := filepath.Join(t.TempDir(), FastLaneSocket)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv := &LaneServer{Handler: func(context.Context, *pluginv1.InvokeRequest) *pluginv1.InvokeResponse {
		return &pluginv1.InvokeResponse{}
	}, Allow: func(int) bool { return true }}
	go func() { _ = srv.Serve(ln) }()
	before := blockingSockets(t)
	lane, err := DialLane(context.Background(), path, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lane.Close()
	if n := added(before, blockingSockets(t)); n != 1 {
		t.Fatalf("%d of the lane's 3 connections are read blocking, want 1", n)
	}
	ctx := context.Background()
	first, err := lane.get(ctx)
	if err != nil || first != lane.first {
		t.Fatalf("an idle lane's call took %p, not its first connection %p (%v)", first, lane.first, err)
	}
	other, err := lane.get(ctx)
	if err != nil || other == first {
		t.Fatalf("a second call in flight took %p (%v)", other, err)
	}
	lane.put(first)
	lane.put(other) // the most recently used
	if again, err := lane.get(ctx); err != nil || again != first {
		t.Fatalf("the next call took %p, not the idle first connection %p (%v)", again, first, err)
	}
	lane.discard(first)
	waitFor(t, func() bool { return !srv.blockingTaken.Load() })
	// The two idle connections are polled ones; the next one dialled is the
	// new first, and the plugin reads it blocking.
	for range 2 {
		c, err := lane.get(ctx)
		if err != nil || c == lane.first {
			t.Fatalf("an idle polled connection = %p (%v), first %p", c, err, lane.first)
		}
		defer lane.put(c)
	}
	dialled, err := lane.get(ctx)
	if err != nil || dialled != lane.first {
		t.Fatalf("the connection dialled after the first closed = %p (%v), first %p", dialled, err, lane.first)
	}
	defer lane.put(dialled)
	waitFor(t, func() bool { return srv.blockingTaken.Load() })
	if n := added(before, blockingSockets(t)); n != 1 {
		t.Fatalf("%d of the lane's connections are read blocking after the first closed, want 1", n)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for start := time.Now(); !ok(); time.Sleep(time.Millisecond) {
		if time.Since(start) > 2*time.Second {
			t.Fatal("condition not met in 2 s")
		}
	}
}
