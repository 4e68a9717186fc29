package dispatch

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/host"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/observe"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
)

// HostServer is the Host service plugins call back: another method through
// the same route table and access checks as outside calls, as the
// principal the host resolved (the caller of the call the plugin serves,
// or the plugin itself; never one the plugin names), and Page, user and
// app facts from ids.
func (d *Dispatcher) HostServer(ids *identity.Service) protocol.HostService {
	return hostServer{d: d, ids: ids}
}

type hostServer struct {
	protocol.UnimplementedHost
	d   *Dispatcher
	ids *identity.Service
}

func (h hostServer) Call(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	ctx = observe.WithTraceID(ctx, req.GetTraceId())
	m, ok := h.d.Table().Method(req.GetProcedure())
	if !ok {
		return &pluginv1.InvokeResponse{Error: host.ErrorProto(apierr.UnknownPath(req.GetProcedure()))}, nil
	}
	if p := auth.FromProto(req.GetPrincipal()); p != nil {
		ctx = auth.WithPrincipal(ctx, p)
	}
	in := m.Input.New().Interface()
	if err := proto.Unmarshal(req.GetRequest(), in); err != nil {
		return &pluginv1.InvokeResponse{Error: host.ErrorProto(apierr.Invalid("", "The request is not a valid %s message.", m.Desc.Input().FullName()))}, nil
	}
	out, err := h.d.Call(ctx, m, in, req.GetRequest())
	if err != nil {
		return &pluginv1.InvokeResponse{Error: host.ErrorProto(err)}, nil
	}
	return &pluginv1.InvokeResponse{Response: out}, nil
}

// PageAccess answers a Page's facts for a user and an app. With a need, the
// gateway decides whether they have that least role, by the same rule as a
// method's declared page_role (auth.AuthorizePage), and answers its refusal
// for the plugin to return as is: plugins never compare roles themselves.
func (h hostServer) PageAccess(ctx context.Context, req *pluginv1.PageAccessRequest) (*pluginv1.PageAccessResponse, error) {
	if need := req.GetNeed(); need != pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED {
		p := &auth.Principal{UserID: req.GetUserId(), AppID: req.GetAppId()}
		facts, err := h.d.auth.AuthorizePage(ctx, p, need, req.GetPageId())
		if e, refused := apierr.As(err); refused && e.HTTPStatus < 500 {
			return &pluginv1.PageAccessResponse{Refusal: host.ErrorProto(e)}, nil
		}
		if err != nil {
			return nil, err
		}
		return facts, nil
	}
	f, err := h.ids.Pages.PageFacts(ctx, req.GetPageId(), req.GetUserId(), req.GetAppId())
	if err != nil {
		return nil, err
	}
	return f.Proto(), nil
}

// BusinessAccess answers whether a user has the least role a plugin's
// action needs on a business, or on the business the core records as
// holding an asset (any plugin's asset type), by the rule of a method's
// declared business_role (auth.AuthorizeBusiness), with its refusal for
// the plugin to return as is.
func (h hostServer) BusinessAccess(ctx context.Context, req *pluginv1.BusinessAccessRequest) (*pluginv1.BusinessAccessResponse, error) {
	if req.GetNeed() == pluginv1.BusinessRole_BUSINESS_ROLE_UNSPECIFIED {
		return nil, fmt.Errorf("BusinessAccess: the request names no role")
	}
	business := req.GetBusinessId()
	if typ := req.GetAssetType(); typ != "" {
		held, err := h.ids.Businesses.BusinessesOf(ctx, typ, []string{req.GetAssetId()})
		if err != nil {
			return nil, err
		}
		if business = held[req.GetAssetId()]; business == "" {
			return &pluginv1.BusinessAccessResponse{Refusal: host.ErrorProto(apierr.NotFound("Business holding " + typ + " " + req.GetAssetId()))}, nil
		}
	}
	p := &auth.Principal{UserID: req.GetUserId()}
	err := h.d.auth.AuthorizeBusiness(ctx, p, req.GetNeed(), business)
	if e, refused := apierr.As(err); refused && e.HTTPStatus < 500 {
		return &pluginv1.BusinessAccessResponse{Refusal: host.ErrorProto(e)}, nil
	}
	if err != nil {
		return nil, err
	}
	return &pluginv1.BusinessAccessResponse{}, nil
}

// UserInfo tells a plugin whether a user exists and the user's name. An id
// that names no user answers user_exists false.
func (h hostServer) UserInfo(ctx context.Context, req *pluginv1.UserInfoRequest) (*pluginv1.UserInfoResponse, error) {
	u, err := h.ids.Users.User(ctx, req.GetUserId())
	if errors.Is(err, identity.ErrNotFound) {
		return &pluginv1.UserInfoResponse{}, nil
	}
	if err != nil {
		return nil, err
	}
	return &pluginv1.UserInfoResponse{UserExists: true, Name: u.Name}, nil
}

// AppInfo describes an app to a plugin: name, mode, products and
// platformConfig. An id that names no app answers app_exists false.
func (h hostServer) AppInfo(ctx context.Context, req *pluginv1.AppInfoRequest) (*pluginv1.AppInfoResponse, error) {
	app, err := h.ids.Apps.App(ctx, req.GetAppId())
	if errors.Is(err, identity.ErrNotFound) {
		return &pluginv1.AppInfoResponse{}, nil
	}
	if err != nil {
		return nil, err
	}
	products, err := h.ids.Apps.AppProducts(ctx, app.ID)
	if err != nil {
		return nil, err
	}
	raw, err := h.ids.Apps.AppConfig(ctx, app.ID)
	if err != nil {
		return nil, err
	}
	cfg := &structpb.Struct{}
	if err := cfg.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("app %s: platformConfig: %w", app.ID, err)
	}
	return &pluginv1.AppInfoResponse{AppExists: true, Name: app.Name, Live: app.Live(), Products: products,
		PlatformConfig: cfg}, nil
}
