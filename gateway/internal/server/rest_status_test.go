package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/server"
	"github.com/svcplatform/svc/gateway/internal/version"
	platformv1 "github.com/svcplatform/svc/gen/svc/platform/v1"
	"github.com/svcplatform/svc/gen/svc/platform/v1/platformv1connect"
)

// acceptedInterceptor asks for 202 on every successful call, as the route
// table does for a method with rest_success_status: 202.
type acceptedInterceptor struct{ fail bool }

func (a acceptedInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if a.fail {
			return nil, connect.NewError(connect.CodeInvalidArgument, nil)
		}
		res, err := next(ctx, req)
		if err == nil {
			server.SetRESTSuccessStatus(ctx, http.StatusAccepted)
		}
		return res, err
	}
}

func (acceptedInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (acceptedInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

func acceptingServer(t *testing.T, fail bool) *server.Server {
	t.Helper()
	s := server.New(server.Options{Metrics: observe.NewMetrics(), Ready: func(context.Context) error { return nil }})
	opts := append(server.HandlerOptions(), connect.WithInterceptors(acceptedInterceptor{fail: fail}))
	_, h := platformv1connect.NewPlatformServiceHandler(version.Service{}, opts...)
	err := s.SetServices([]server.Service{{
		Schema:  platformv1.File_svc_platform_v1_platform_proto.Services().ByName("PlatformService"),
		Handler: h,
	}}, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAMethodAskingFor202AnswersRESTCallersWith202(t *testing.T) {
	t.Parallel()
	s := acceptingServer(t, false)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/platform/changelog", nil))
	if rec.Code != http.StatusAccepted || !strings.Contains(rec.Body.String(), `"data"`) {
		t.Fatalf("REST: %d %s", rec.Code, rec.Body)
	}
}

func TestConnectCallersOfSuchAMethodStillGet200(t *testing.T) {
	t.Parallel()
	s := acceptingServer(t, false)
	req := httptest.NewRequest("POST", "/svc.platform.v1.PlatformService/GetChangelog", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connect-Protocol-Version", "1")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("Connect: %d %s", rec.Code, rec.Body)
	}
}

func TestARefusalOfSuchAMethodKeepsItsErrorStatus(t *testing.T) {
	t.Parallel()
	s := acceptingServer(t, true)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/platform/changelog", nil))
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"fbtrace_id"`) {
		t.Fatalf("REST refusal: %d %s", rec.Code, rec.Body)
	}
}
