package protocol

import (
	"errors"
	"fmt"
	"net"
	"os"
)

// blockingIO returns c's socket as a file in blocking mode, for the plugin's
// side of a fast-lane connection, which waits for one call at a time. A
// blocking read sleeps in the kernel and wakes when the call arrives: one
// system call, where Go's network poller costs a failed read, an epoll wait,
// a goroutine switch and a second read. In BenchmarkHop it cut the CPU of a
// hop by about a quarter (both processes together). The price is an OS
// thread per connection in the plugin, which the runtime provides.
//
// c is closed; the file is the connection from now on.
func blockingIO(c net.Conn) (*os.File, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, errors.New("not a unix socket")
	}
	f, err := uc.File() // a duplicate, switched to blocking mode
	_ = uc.Close()
	if err != nil {
		return nil, fmt.Errorf("fast lane: %w", err)
	}
	return f, nil
}
