package plugintest

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/sdk"
)

// Host is the gateway as the plugin under test sees it: what the plugin
// asks through sdk.HostClient, in the SDK's own types. A test that needs
// facts implements the methods it needs and embeds NoHost for the others,
// then passes it to Start with WithHost.
type Host interface {
	// PageAccess answers sdk.HostClient.PageAccess. A query with a Need
	// that the test's gateway refuses answers the refusal as an *sdk.Error
	// (e.g. PageRefusal), which the plugin receives as the gateway's.
	PageAccess(ctx context.Context, q sdk.PageQuery) (*sdk.PageAccess, error)
	// BusinessAccess answers sdk.HostClient.BusinessAccess: nil, or the
	// test's gateway's refusal as an *sdk.Error (e.g. BusinessRefusal).
	BusinessAccess(ctx context.Context, q sdk.BusinessQuery) error
	// AppInfo answers sdk.HostClient.AppInfo.
	AppInfo(ctx context.Context, appID string) (*sdk.AppInfo, error)
	// UserInfo answers sdk.HostClient.UserInfo.
	UserInfo(ctx context.Context, userID string) (*sdk.UserInfo, error)
	// Call answers sdk.HostClient.Call, another plugin's method: the
	// response message, protobuf-encoded, or an error (an *sdk.Error is
	// the other plugin's refusal, which the caller receives as such).
	Call(ctx context.Context, c HostCall) ([]byte, error)
}

// HostCall is a call the plugin under test makes through the host.
type HostCall struct {
	// Procedure is the method called, e.g.
	// "/svc.completions.v1.CompletionsService/Complete".
	Procedure string
	// Request is the request message, protobuf-encoded.
	Request []byte
	// Caller is whom the call acts as: the caller of the call the plugin
	// was serving when it made it, or, outside any call, the plugin itself
	// (Kind sdk.TokenKindPlugin), as the gateway decides.
	Caller sdk.Principal
	// TraceID is the trace of the call the plugin was serving.
	TraceID string
}

// ErrNotImplemented is what NoHost answers: the test's host does not know.
var ErrNotImplemented = errors.New("plugintest: the test's host does not implement this")

// NoHost answers every Host method with ErrNotImplemented; embed it in a
// test's host to implement only what the test needs.
type NoHost struct{}

// PageAccess answers ErrNotImplemented.
func (NoHost) PageAccess(context.Context, sdk.PageQuery) (*sdk.PageAccess, error) {
	return nil, ErrNotImplemented
}

// BusinessAccess answers ErrNotImplemented.
func (NoHost) BusinessAccess(context.Context, sdk.BusinessQuery) error {
	return ErrNotImplemented
}

// AppInfo answers ErrNotImplemented.
func (NoHost) AppInfo(context.Context, string) (*sdk.AppInfo, error) { return nil, ErrNotImplemented }

// UserInfo answers ErrNotImplemented.
func (NoHost) UserInfo(context.Context, string) (*sdk.UserInfo, error) { return nil, ErrNotImplemented }

// Call answers ErrNotImplemented.
func (NoHost) Call(context.Context, HostCall) ([]byte, error) { return nil, ErrNotImplemented }

// OnePage is a Host for tests of a plugin that asks the gateway about a
// Page: it answers as the gateway would for one published Page, PageID, on
// which the users in Admins have the admin role and to which the apps in
// LinkedApps are linked; any other Page does not exist. A query's Need is
// met by an admin up to PageRoleAdmin and by a linked app for
// PageRoleLinked, and refused otherwise with PageRefusal (404 for another
// Page). Its other methods answer ErrNotImplemented.
type OnePage struct {
	NoHost
	PageID     string
	Admins     []string
	LinkedApps []string
}

// PageAccess answers the caller's standing on the Page.
func (h OnePage) PageAccess(_ context.Context, q sdk.PageQuery) (*sdk.PageAccess, error) {
	res := &sdk.PageAccess{Exists: q.PageID == h.PageID}
	if !res.Exists {
		if q.Need != sdk.PageRoleNone {
			return nil, sdk.NotFound("Page " + q.PageID)
		}
		return res, nil
	}
	res.Published = true
	res.AppLinked = slices.Contains(h.LinkedApps, q.AppID)
	admin := slices.Contains(h.Admins, q.UserID)
	switch q.Need {
	case sdk.PageRoleNone:
	case sdk.PageRoleLinked:
		if !admin && !res.AppLinked {
			return nil, PageRefusal()
		}
	case sdk.PageRoleEditor, sdk.PageRoleAdmin:
		if !admin {
			return nil, PageRefusal()
		}
	default:
		return nil, PageRefusal()
	}
	return res, nil
}

// PageRefusal is the gateway's refusal of a PageQuery's Need for a role
// too low (CONTRACT §3: 403, code 200, subcode 2069003), for a test's
// Host to answer.
func PageRefusal() *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusForbidden, Code: 200, Subcode: 2069003, Type: sdk.TypeOAuth,
		Message: "The user's role on the Page does not allow this."}
}

// BusinessRefusal is the gateway's refusal of a business role the caller
// does not hold (CONTRACT §3: 403, code 200, subcode 2069003), for a
// test's Host to answer.
func BusinessRefusal() *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusForbidden, Code: 200, Subcode: 2069003, Type: sdk.TypeOAuth,
		Message: "The user must have a role on the business (admin or employee)."}
}

// hostServer serves a Host as the gateway's Host service: the conversion to
// and from the wire happens here, so tests see SDK types only.
type hostServer struct {
	protocol.UnimplementedHost
	h  Host
	tp func() *Plugin // the plugin under test, once started
}

func (s *hostServer) PageAccess(ctx context.Context, req *pluginv1.PageAccessRequest) (*pluginv1.PageAccessResponse, error) {
	a, err := s.h.PageAccess(ctx, sdk.PageQuery{PageID: req.GetPageId(), UserID: req.GetUserId(), AppID: req.GetAppId(),
		Need: sdk.PageRole(req.GetNeed())})
	if e, ok := errors.AsType[*sdk.Error](err); ok && req.GetNeed() != pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED {
		return &pluginv1.PageAccessResponse{Refusal: wire.ErrorToProto(e)}, nil
	}
	if err != nil {
		return nil, hostStatus(err)
	}
	return &pluginv1.PageAccessResponse{PageExists: a.Exists, PageName: a.Name,
		AppLinked: a.AppLinked, AppProducts: a.AppProducts, Published: a.Published, ChatSurfacing: a.ChatSurfacing,
		InboxAutomation: a.InboxAutomation, AssistantLabel: a.AssistantLabel, InboxMergeLinked: a.InboxMergeLinked,
		HandoverTimeout: int32(a.HandoverTimeout.Seconds())}, nil
}

func (s *hostServer) BusinessAccess(ctx context.Context, req *pluginv1.BusinessAccessRequest) (*pluginv1.BusinessAccessResponse, error) {
	err := s.h.BusinessAccess(ctx, sdk.BusinessQuery{BusinessID: req.GetBusinessId(), UserID: req.GetUserId(),
		Need: sdk.BusinessRole(req.GetNeed()), AssetType: req.GetAssetType(), AssetID: req.GetAssetId()})
	if e, ok := errors.AsType[*sdk.Error](err); ok {
		return &pluginv1.BusinessAccessResponse{Refusal: wire.ErrorToProto(e)}, nil
	}
	if err != nil {
		return nil, hostStatus(err)
	}
	return &pluginv1.BusinessAccessResponse{}, nil
}

func (s *hostServer) AppInfo(ctx context.Context, req *pluginv1.AppInfoRequest) (*pluginv1.AppInfoResponse, error) {
	a, err := s.h.AppInfo(ctx, req.GetAppId())
	if err != nil {
		return nil, hostStatus(err)
	}
	res := &pluginv1.AppInfoResponse{AppExists: a.Exists, Name: a.Name, Live: a.Live, Products: a.Products}
	if a.PlatformConfig != nil {
		if res.PlatformConfig, err = structpb.NewStruct(a.PlatformConfig); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "plugintest: the test's platform config is not JSON: %v", err)
		}
	}
	return res, nil
}

func (s *hostServer) UserInfo(ctx context.Context, req *pluginv1.UserInfoRequest) (*pluginv1.UserInfoResponse, error) {
	u, err := s.h.UserInfo(ctx, req.GetUserId())
	if err != nil {
		return nil, hostStatus(err)
	}
	return &pluginv1.UserInfoResponse{UserExists: u.Exists, Name: u.Name}, nil
}

func (s *hostServer) Call(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	tp := s.tp()
	if tp == nil {
		return nil, status.Error(codes.Unavailable, "plugintest: the plugin under test is not started yet")
	}
	caller := tp.principal(req.GetDelegation())
	out, err := s.h.Call(ctx, HostCall{Procedure: req.GetProcedure(), Request: req.GetRequest(),
		Caller: wire.PrincipalFromProto(caller), TraceID: req.GetTraceId()})
	if e, ok := errors.AsType[*sdk.Error](err); ok {
		return &pluginv1.InvokeResponse{Error: wire.ErrorToProto(e)}, nil
	}
	if err != nil {
		return nil, hostStatus(err)
	}
	return &pluginv1.InvokeResponse{Response: out}, nil
}

// hostCode is the Connect code of a hostServer's failure (a gRPC status's
// code: Connect's codes repeat gRPC's).
func hostCode(err error) uint32 { return uint32(status.Code(err)) }

// hostStatus is a test host's failure as the gateway's Host service would
// report it.
func hostStatus(err error) error {
	if errors.Is(err, ErrNotImplemented) {
		return status.Error(codes.Unimplemented, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

// selfHost is the default test host: Call reaches the plugin under test
// itself, as the caller the gateway would give it.
type selfHost struct {
	NoHost
	tp func() *Plugin
}

func (h selfHost) Call(ctx context.Context, c HostCall) ([]byte, error) {
	tp := h.tp()
	req := &pluginv1.InvokeRequest{Procedure: c.Procedure, Request: c.Request, Principal: wire.PrincipalToProto(c.Caller), TraceId: c.TraceID}
	if d, ok := ctx.Deadline(); ok {
		req.DeadlineUnixNano = d.UnixNano()
	}
	defer tp.delegate(req)() // the nested call has a handle of its own, as the gateway gives it
	resp, err := tp.invoke(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp.GetError() != nil {
		return nil, wire.ErrorFromProto(resp.GetError())
	}
	return resp.GetResponse(), nil
}
