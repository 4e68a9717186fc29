//go:build !linux

package protocol

import (
	"fmt"
	"net"
	"runtime"
)

// peerPID is only implemented on Linux; elsewhere the fast lane refuses every
// connection and the gateway falls back to gRPC.
func peerPID(net.Conn) (int, error) {
	return 0, fmt.Errorf("peer credentials are not supported on %s", runtime.GOOS)
}
