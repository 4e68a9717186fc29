package coregraph

import (
	"context"
	"time"

	corev1 "github.com/svcplatform/svc/gen/svc/core/v1"
	"github.com/svcplatform/svc/sdk"
)

// A person's control over their data (CONTRACT §16). Each node reaches
// only the caller's own consents: the user comes from the principal, never
// from the request.

func (s *Service) registerDataRights(p *sdk.Plugin) {
	m := corev1.File_svc_core_v1_graph_proto.Services().ByName("GraphService").Methods()
	sdk.Handle(p, m.ByName("ListAuthorizedApps"), s.listAuthorizedApps)
	sdk.Handle(p, m.ByName("RemoveAuthorizedApp"), s.removeAuthorizedApp)
}

func (s *Service) listAuthorizedApps(ctx context.Context, call *sdk.Call, _ *corev1.ListAuthorizedAppsRequest) (*corev1.ListAuthorizedAppsResponse, error) {
	apps, err := s.id.Users.AuthorizedApps(ctx, call.Principal().UserID)
	if err != nil {
		return nil, s.mapErr(err, "User")
	}
	res := &corev1.ListAuthorizedAppsResponse{Data: make([]*corev1.AuthorizedApp, 0, len(apps))}
	for _, a := range apps {
		res.Data = append(res.Data, &corev1.AuthorizedApp{AppId: a.AppID, Name: a.Name, Scopes: nonNil(a.Scopes),
			GrantedTime: a.GrantedAt.UTC().Format(time.RFC3339)})
	}
	return res, nil
}

// removeAuthorizedApp revokes the caller's consent and tokens for the app;
// the authenticator forgets the tokens at once, so none is honoured again
// on this gateway (and on the others within the cache's 2 s).
func (s *Service) removeAuthorizedApp(ctx context.Context, call *sdk.Call, req *corev1.RemoveAuthorizedAppRequest) (*corev1.SuccessResponse, error) {
	revoked, err := s.id.Users.RemoveAuthorizedApp(ctx, call.Principal().UserID, req.GetAppId())
	if err != nil {
		return nil, s.mapErr(err, "Authorized app "+req.GetAppId())
	}
	s.forget(revoked...)
	return &corev1.SuccessResponse{Success: true}, nil
}
