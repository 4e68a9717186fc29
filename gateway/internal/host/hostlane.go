package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"

	"github.com/svcplatform/svc/internal/plugin/protocol"
	"github.com/svcplatform/svc/internal/tracing/otlp"
)

// hostLane serves the Host service to one plugin process over the fast
// lane's framing, on protocol.HostSocket in the process's private folder.
// Only the process itself may connect (pid, set once it has started).
type hostLane struct {
	path string
	ln   net.Listener
	pid  atomic.Int64
}

// listenHost opens the Host socket in dir for the process about to start,
// and serves hs on it until closed. uid, when not zero, is the plugin's own
// user (sandbox.UID), who must be able to connect.
func listenHost(dir string, uid int, hs protocol.HostService, log *slog.Logger) (*hostLane, error) {
	path := filepath.Join(dir, protocol.HostSocket)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if uid != 0 {
		err = os.Chown(path, uid, uid)
	}
	if err == nil {
		err = os.Chmod(path, 0o600)
	}
	if err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("restrict %s: %w", path, err)
	}
	hl := &hostLane{path: path, ln: ln}
	srv := &protocol.LaneServer{
		Handler: hostHandler(hs),
		Allow:   func(pid int) bool { return pid != 0 && int64(pid) == hl.pid.Load() },
		Logger:  log,
	}
	go func() {
		if err := srv.Serve(ln); err != nil {
			log.Warn("host socket stopped", "error", err)
		}
	}()
	return hl, nil
}

// close stops serving; calls in flight finish on their connections.
func (hl *hostLane) close() {
	if hl != nil {
		_ = hl.ln.Close()
	}
}

// statusCode is the Connect code of a Host service's failure: its own
// (protocol.ControlFault), or the gRPC status code it carries (Connect's
// codes repeat gRPC's).
func statusCode(err error) uint32 {
	var c interface{ ConnectCode() uint32 }
	if errors.As(err, &c) {
		return c.ConnectCode()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return uint32(codes.DeadlineExceeded)
	}
	return uint32(status.Code(err))
}

// hostHandler serves hs, and the plugin's spans (forwarded to the gateway's
// OTLP receiver).
func hostHandler(hs protocol.HostService) protocol.Handler {
	h := protocol.HostHandler(hs, statusCode)
	return func(ctx context.Context, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse {
		if req.GetProcedure() != protocol.ProcHostExportSpans {
			return h(ctx, req)
		}
		return protocol.ControlAnswer(&emptypb.Empty{}, otlp.Forward(ctx, req.GetRequest()))
	}
}
