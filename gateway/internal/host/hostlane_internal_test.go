package host

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
)

// userInfoHost answers UserInfo for user "1" and refuses any other user.
type userInfoHost struct {
	protocol.UnimplementedHost
}

func (userInfoHost) UserInfo(_ context.Context, req *pluginv1.UserInfoRequest) (*pluginv1.UserInfoResponse, error) {
	if req.GetUserId() != "1" {
		return nil, status.Error(codes.PermissionDenied, "not that user")
	}
	return &pluginv1.UserInfoResponse{UserExists: true, Name: "Ada"}, nil
}

func TestHostSocketAdmitsOnlyItsPluginProcess(t *testing.T) {
	hl, err := listenHost(t.TempDir(), 0, userInfoHost{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer hl.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	hl.pid.Store(int64(os.Getpid() + 1)) // some other process is the plugin
	if c, err := protocol.DialLane(ctx, hl.path, 1, 0); err == nil {
		_ = c.Close()
		t.Fatal("a process other than the plugin reached the Host socket")
	}

	hl.pid.Store(int64(os.Getpid()))
	c, err := protocol.DialLane(ctx, hl.path, 1, 0)
	if err != nil {
		t.Fatalf("the plugin's own process was refused: %v", err)
	}
	defer func() { _ = c.Close() }()
	var res pluginv1.UserInfoResponse
	if err := protocol.CallControl(ctx, c, protocol.ProcHostUserInfo, &pluginv1.UserInfoRequest{UserId: "1"}, &res); err != nil || res.GetName() != "Ada" {
		t.Fatalf("UserInfo = %v, %v", &res, err)
	}
}

func TestHostSocketKeepsTheHostServersStatusCode(t *testing.T) {
	hl, err := listenHost(t.TempDir(), 0, userInfoHost{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer hl.close()
	hl.pid.Store(int64(os.Getpid()))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := protocol.DialLane(ctx, hl.path, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()

	var res pluginv1.UserInfoResponse
	err = protocol.CallControl(ctx, c, protocol.ProcHostUserInfo, &pluginv1.UserInfoRequest{UserId: "2"}, &res)
	var fault *protocol.ControlFault
	if !errors.As(err, &fault) || fault.Code != uint32(codes.PermissionDenied) {
		t.Fatalf("refused UserInfo = %v, want code %d", err, codes.PermissionDenied)
	}
	err = protocol.CallControl(ctx, c, protocol.ProcHostAppInfo, &pluginv1.AppInfoRequest{AppId: "1"}, new(pluginv1.AppInfoResponse))
	if !errors.As(err, &fault) || fault.Code != uint32(codes.Unimplemented) {
		t.Fatalf("unimplemented AppInfo = %v, want code %d", err, codes.Unimplemented)
	}
}
