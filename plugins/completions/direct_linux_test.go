//go:build linux

package main

import (
	"context"
	"io"
	"syscall"
	"testing"
)

func TestAConnectionTheUpstreamClosedWhileIdleIsNotUsedAgain(t *testing.T) {
	url, conns := rawUpstream(t, func(_, _ int) string {
		// Keep-alive is offered, but the server closes right after, as one
		// whose idle timeout is short does.
		return okAnswer + closeAfter
	})
	d := newDirectClient()
	defer d.closeIdle()
	tg := target(t, url)
	for range 3 {
		res, err := d.do(context.Background(), tg, nil, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.ReadAll(res.Body)
		_ = res.Body.Close()
		// The server's close (after it answered) reaches us before the
		// next request is due only when it is scheduled first: let it.
		waitClosedByPeer(t, d, tg.addr)
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections for 3 requests to a server closing each after one answer", n)
	}
}

// waitClosedByPeer waits until the kept-alive connection to addr reads as
// closed by its peer (alive is false).
func waitClosedByPeer(t *testing.T, d *directClient, addr string) {
	t.Helper()
	d.mu.Lock()
	list := d.idle[addr]
	d.mu.Unlock()
	if len(list) != 1 {
		t.Fatalf("%d kept-alive connections, want 1", len(list))
	}
	c := list[0].c
	// Wait (on the poller, reading nothing) until the FIN arrives.
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	_ = rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return err != syscall.EAGAIN
	})
	if alive(c) {
		t.Fatal("a connection closed by its peer reads as alive")
	}
}
