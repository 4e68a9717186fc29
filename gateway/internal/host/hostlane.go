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
	"time"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
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
func listenHost(dir string, uid int, hs pluginv1.HostServer, log *slog.Logger) (*hostLane, error) {
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

// hostHandler answers the Host calls of protocol.ProcHost… with hs. A
// failure travels as an Error carrying the gRPC status code hs gave (which
// Connect's codes repeat), as it did over gRPC.
func hostHandler(hs pluginv1.HostServer) protocol.Handler {
	return func(ctx context.Context, req *pluginv1.InvokeRequest) *pluginv1.InvokeResponse {
		if d := req.GetDeadlineUnixNano(); d != 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, time.Unix(0, d))
			defer cancel()
		}
		switch req.GetProcedure() {
		case protocol.ProcHostCall:
			return hostAnswer(ctx, req, new(pluginv1.InvokeRequest), hs.Call)
		case protocol.ProcHostPageAccess:
			return hostAnswer(ctx, req, new(pluginv1.PageAccessRequest), hs.PageAccess)
		case protocol.ProcHostBusinessAccess:
			return hostAnswer(ctx, req, new(pluginv1.BusinessAccessRequest), hs.BusinessAccess)
		case protocol.ProcHostAppInfo:
			return hostAnswer(ctx, req, new(pluginv1.AppInfoRequest), hs.AppInfo)
		case protocol.ProcHostUserInfo:
			return hostAnswer(ctx, req, new(pluginv1.UserInfoRequest), hs.UserInfo)
		}
		return &pluginv1.InvokeResponse{Error: &pluginv1.Error{ConnectCode: 12, // unimplemented
			Message: fmt.Sprintf("the Host service has no call %q", req.GetProcedure())}}
	}
}

func hostAnswer[Req, Res proto.Message](ctx context.Context, req *pluginv1.InvokeRequest, in Req, call func(context.Context, Req) (Res, error)) *pluginv1.InvokeResponse {
	if err := proto.Unmarshal(req.GetRequest(), in); err != nil {
		return &pluginv1.InvokeResponse{Error: &pluginv1.Error{ConnectCode: 3, Message: "decode host request: " + err.Error()}}
	}
	res, err := call(ctx, in)
	if err != nil {
		code := uint32(status.Code(err))
		if errors.Is(err, context.DeadlineExceeded) {
			code = 4
		}
		return &pluginv1.InvokeResponse{Error: &pluginv1.Error{ConnectCode: code, Message: err.Error()}}
	}
	return protocol.ControlAnswer(res, nil)
}
