package protocol

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
)

// blockingIO returns c's socket as a file in blocking mode, for the plugin's
// side of the fast-lane connection it reads blocking (see
// LaneServer.serveConn). A blocking read sleeps in the kernel and wakes
// when the call arrives: one system call, where Go's network poller costs a
// failed read, an epoll wait, a goroutine switch and a second read. The
// price is an OS thread waiting on it.
//
// The descriptor is a duplicate made blocking before os.NewFile sees it, so
// the network poller never registers it. (c.File() does not do: its
// duplicate shares c's O_NONBLOCK, so the file ran on the poller like c;
// and a file made blocking afterwards, by Fd, stays registered with epoll,
// which then wakes an idle thread of the plugin at every call's arrival
// for nothing.)
//
// c is closed; the file is the connection from now on.
func blockingIO(c net.Conn) (*os.File, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, errors.New("not a unix socket")
	}
	defer uc.Close()
	rc, err := uc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("fast lane: %w", err)
	}
	fd := -1
	var dupErr error
	if err := rc.Control(func(s uintptr) {
		syscall.ForkLock.RLock() // as os does: no exec between Dup and CloseOnExec
		if fd, dupErr = syscall.Dup(int(s)); dupErr == nil {
			syscall.CloseOnExec(fd)
		}
		syscall.ForkLock.RUnlock()
	}); err != nil || dupErr != nil {
		return nil, fmt.Errorf("fast lane: dup: %w", errors.Join(err, dupErr))
	}
	_ = uc.Close() // before O_NONBLOCK goes: the flag is shared with uc's descriptor
	if err := syscall.SetNonblock(fd, false); err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("fast lane: %w", err)
	}
	return os.NewFile(uintptr(fd), "lane"), nil
}
