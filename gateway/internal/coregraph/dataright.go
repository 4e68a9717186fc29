package coregraph

import (
	"context"
	"errors"
	"time"

	"github.com/svcplatform/svc/gateway/internal/identity"
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
	sdk.Handle(p, m.ByName("ChooseAuthorizedAppPages"), s.chooseAuthorizedAppPages)
	sdk.Handle(p, m.ByName("ListDataDeletionRequests"), s.listDataDeletionRequests)
	sdk.Handle(p, m.ByName("DeleteMe"), s.deleteMe)
}

func (s *Service) listAuthorizedApps(ctx context.Context, call *sdk.Call, _ *corev1.ListAuthorizedAppsRequest) (*corev1.ListAuthorizedAppsResponse, error) {
	apps, err := s.id.Users.AuthorizedApps(ctx, call.Principal().UserID)
	if err != nil {
		return nil, s.mapErr(err, "User")
	}
	res := &corev1.ListAuthorizedAppsResponse{Data: make([]*corev1.AuthorizedApp, 0, len(apps))}
	for _, a := range apps {
		out := &corev1.AuthorizedApp{AppId: a.AppID, Name: a.Name, Scopes: nonNil(a.Scopes),
			GrantedTime: a.GrantedAt.UTC().Format(time.RFC3339)}
		if a.Pages != nil {
			out.Pages = &corev1.PageChoice{PageIds: a.Pages}
		}
		res.Data = append(res.Data, out)
	}
	return res, nil
}

// chooseAuthorizedAppPages changes the Pages the caller chose for the app
// without revoking it; the authenticator forgets the caller's credentials,
// so their tokens follow the choice at once on this gateway (and on the
// others within the cache's 2 s).
func (s *Service) chooseAuthorizedAppPages(ctx context.Context, call *sdk.Call, req *corev1.ChooseAuthorizedAppPagesRequest) (*corev1.SuccessResponse, error) {
	user := call.Principal().UserID
	err := s.id.Users.ChoosePages(ctx, user, req.GetAppId(), req.GetPageIds())
	if errors.Is(err, identity.ErrInvalid) {
		return nil, sdk.Invalid("page_ids", "Invalid parameter: %v", trimSentinel(err))
	}
	if err != nil {
		return nil, s.mapErr(err, "Authorized app "+req.GetAppId())
	}
	s.userChanged(user)
	return &corev1.SuccessResponse{Success: true}, nil
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
	s.wakeDeletions()
	return &corev1.SuccessResponse{Success: true}, nil
}

func (s *Service) listDataDeletionRequests(ctx context.Context, call *sdk.Call, _ *corev1.ListDataDeletionRequestsRequest) (*corev1.ListDataDeletionRequestsResponse, error) {
	reqs, err := s.id.Users.DataDeletionRequests(ctx, call.Principal().UserID)
	if err != nil {
		return nil, s.mapErr(err, "User")
	}
	res := &corev1.ListDataDeletionRequestsResponse{Data: make([]*corev1.DataDeletionRequest, 0, len(reqs))}
	for _, r := range reqs {
		res.Data = append(res.Data, &corev1.DataDeletionRequest{AppId: r.AppID, Status: r.Status,
			ConfirmationCode: r.ConfirmationCode, Url: r.URL, RequestedTime: r.RequestedAt.UTC().Format(time.RFC3339)})
	}
	return res, nil
}

// setDeletionCallback sets an app's data deletion callback URL after the
// webhooks' address rules accept it; "" removes it.
func (s *Service) setDeletionCallback(ctx context.Context, app identity.App, raw string) error {
	if raw != "" {
		if s.deletions == nil {
			return sdk.Invalid("data_deletion_callback_url", "Invalid parameter: data_deletion_callback_url: callbacks are not served.")
		}
		if err := s.deletions.CheckDeletionCallbackURL(ctx, raw, app.Mode != identity.ModeLive); err != nil {
			return sdk.Invalid("data_deletion_callback_url", "Invalid parameter: %v.", err)
		}
	}
	if err := s.id.Apps.SetDataDeletionCallbackURL(ctx, app.ID, raw); err != nil {
		return s.mapErr(err, "App "+app.ID)
	}
	return nil
}

// wakeDeletions lets the sender call the apps at once rather than at its
// next poll.
func (s *Service) wakeDeletions() {
	if s.deletions != nil {
		s.deletions.WakeDeletions()
	}
}

// deleteMe is leaving: the caller's user goes in one transaction, the
// authenticator forgets their credentials and Pages at once, and the
// senders of the apps' callbacks and the plugins' jobs are woken.
func (s *Service) deleteMe(ctx context.Context, call *sdk.Call, _ *corev1.DeleteMeRequest) (*corev1.SuccessResponse, error) {
	var plugins []string
	if s.leavers != nil {
		plugins = s.leavers.UserLeftPlugins()
	}
	left, err := s.id.Users.Leave(ctx, call.Principal().UserID, plugins)
	if err != nil {
		return nil, s.mapErr(err, "User")
	}
	s.forget(left.Revoked...)
	for _, p := range left.UnpublishedPages {
		s.pageChanged(p)
	}
	if left.Deletions > 0 {
		s.wakeDeletions()
	}
	if s.leavers != nil && len(plugins) > 0 {
		s.leavers.WakeUserLeft()
	}
	return &corev1.SuccessResponse{Success: true}, nil
}
