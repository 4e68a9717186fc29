//go:build linux

package main

import (
	"net"
	"syscall"
)

// alive tells whether a kept-alive connection is still open: a peek that
// does not wait finds nothing to read. An upstream that closed it (its
// idle timeout) has sent FIN, which the peek reads as end of stream; one
// that sent bytes nobody asked for is not to be trusted with a request.
func alive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	ok = false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		_ = n
		ok = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true // never wait for readability
	})
	return err == nil && ok
}
