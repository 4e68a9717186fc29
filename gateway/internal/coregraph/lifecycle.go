package coregraph

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/webhook"
	corev1 "github.com/svcplatform/svc/gen/svc/core/v1"
	"github.com/svcplatform/svc/sdk"
)

// The app lifecycle nodes (CONTRACT §4, "App lifecycle through the Graph").
// Who may call each was decided by the gateway from the method's access
// option before the call got here; these handlers apply the rules that
// need identity's data (the last Admin, review states, the overlap).

func (s *Service) registerLifecycle(p *sdk.Plugin) {
	m := corev1.File_svc_core_v1_graph_proto.Services().ByName("GraphService").Methods()
	sdk.Handle(p, m.ByName("ListRedirectUris"), s.listRedirectURIs)
	sdk.Handle(p, m.ByName("AddRedirectUri"), s.addRedirectURI)
	sdk.Handle(p, m.ByName("DeleteRedirectUri"), s.deleteRedirectURI)
	sdk.Handle(p, m.ByName("ListAppRoles"), s.listAppRoles)
	sdk.Handle(p, m.ByName("SetAppRole"), s.setAppRole)
	sdk.Handle(p, m.ByName("DeleteAppRole"), s.deleteAppRole)
	sdk.Handle(p, m.ByName("ListTestUsers"), s.listTestUsers)
	sdk.Handle(p, m.ByName("CreateTestUser"), s.createTestUser)
	sdk.Handle(p, m.ByName("DeleteTestUser"), s.deleteTestUser)
	sdk.Handle(p, m.ByName("RotateAppKey"), s.rotateAppKey)
	sdk.Handle(p, m.ByName("GetAppReview"), s.getAppReview)
	sdk.Handle(p, m.ByName("SubmitAppReview"), s.submitAppReview)
	sdk.Handle(p, m.ByName("ListAppReviewQueue"), s.listAppReviewQueue)
	sdk.Handle(p, m.ByName("DecideAppReview"), s.decideAppReview)
}

func (s *Service) listRedirectURIs(ctx context.Context, _ *sdk.Call, req *corev1.ListRedirectUrisRequest) (*corev1.ListRedirectUrisResponse, error) {
	uris, err := s.id.Apps.RedirectURIs(ctx, req.GetAppId())
	if err != nil {
		return nil, s.mapErr(err, "App "+req.GetAppId())
	}
	res := &corev1.ListRedirectUrisResponse{Data: []*corev1.RedirectUri{}}
	for _, u := range uris {
		res.Data = append(res.Data, &corev1.RedirectUri{Uri: u})
	}
	return res, nil
}

func (s *Service) addRedirectURI(ctx context.Context, _ *sdk.Call, req *corev1.AddRedirectUriRequest) (*corev1.SuccessResponse, error) {
	err := s.id.Apps.RegisterRedirectURI(ctx, req.GetAppId(), req.GetUri())
	if errors.Is(err, identity.ErrInvalid) {
		return nil, sdk.Invalid("uri", "Invalid parameter: uri: %v", trimSentinel(err))
	}
	if err != nil {
		return nil, s.mapErr(err, "App "+req.GetAppId())
	}
	return &corev1.SuccessResponse{Success: true}, nil
}

func (s *Service) deleteRedirectURI(ctx context.Context, _ *sdk.Call, req *corev1.DeleteRedirectUriRequest) (*corev1.SuccessResponse, error) {
	if _, err := s.app(ctx, req.GetAppId()); err != nil {
		return nil, err
	}
	if err := s.id.Apps.RemoveRedirectURI(ctx, req.GetAppId(), req.GetUri()); err != nil {
		return nil, s.mapErr(err, "Redirect URI "+req.GetUri())
	}
	return &corev1.SuccessResponse{Success: true}, nil
}

func (s *Service) listAppRoles(ctx context.Context, _ *sdk.Call, req *corev1.ListAppRolesRequest) (*corev1.ListAppRolesResponse, error) {
	team, err := s.id.Apps.Team(ctx, req.GetAppId())
	if err != nil {
		return nil, s.mapErr(err, "App "+req.GetAppId())
	}
	res := &corev1.ListAppRolesResponse{Data: []*corev1.AppRoleEntry{}}
	for _, m := range team {
		res.Data = append(res.Data, &corev1.AppRoleEntry{UserId: m.UserID, Role: string(m.Role)})
	}
	return res, nil
}

func (s *Service) setAppRole(ctx context.Context, _ *sdk.Call, req *corev1.SetAppRoleRequest) (*corev1.SuccessResponse, error) {
	err := s.id.Apps.SetTeamRole(ctx, req.GetAppId(), req.GetUserId(), identity.TeamRole(req.GetRole()))
	if err != nil {
		return nil, s.teamErr(ctx, err, req.GetAppId(), req.GetUserId())
	}
	return &corev1.SuccessResponse{Success: true}, nil
}

func (s *Service) deleteAppRole(ctx context.Context, _ *sdk.Call, req *corev1.DeleteAppRoleRequest) (*corev1.SuccessResponse, error) {
	if err := s.id.Apps.RemoveTeamMember(ctx, req.GetAppId(), req.GetUserId()); err != nil {
		return nil, s.teamErr(ctx, err, req.GetAppId(), req.GetUserId())
	}
	return &corev1.SuccessResponse{Success: true}, nil
}

// teamErr answers a refused team change: the last Admin (400 naming
// user_id), or the user or membership that does not exist.
func (s *Service) teamErr(ctx context.Context, err error, appID, userID string) error {
	switch {
	case errors.Is(err, identity.ErrLastAdmin):
		return sdk.Invalid("user_id", "Invalid parameter: user_id: user %s is the app's last Admin; make another team member Admin first.", userID)
	case errors.Is(err, identity.ErrNotFound):
		if _, aerr := s.app(ctx, appID); aerr != nil {
			return aerr
		}
		return sdk.NotFound("Team member " + userID)
	}
	return s.mapErr(err, "App "+appID)
}

func (s *Service) listTestUsers(ctx context.Context, _ *sdk.Call, req *corev1.ListTestUsersRequest) (*corev1.ListTestUsersResponse, error) {
	users, err := s.id.Apps.TestUsers(ctx, req.GetAppId())
	if err != nil {
		return nil, s.mapErr(err, "App "+req.GetAppId())
	}
	res := &corev1.ListTestUsersResponse{Data: []*corev1.TestUser{}}
	for _, u := range users {
		res.Data = append(res.Data, &corev1.TestUser{Id: u.ID, Username: u.Username, Name: u.Name})
	}
	return res, nil
}

func (s *Service) createTestUser(ctx context.Context, _ *sdk.Call, req *corev1.CreateTestUserRequest) (*corev1.CreatedTestUser, error) {
	u, err := s.id.Apps.CreateTestUser(ctx, req.GetAppId())
	if err != nil {
		return nil, s.mapErr(err, "App "+req.GetAppId())
	}
	return &corev1.CreatedTestUser{Id: u.ID, Username: u.Username, Password: u.Password}, nil
}

func (s *Service) deleteTestUser(ctx context.Context, _ *sdk.Call, req *corev1.DeleteTestUserRequest) (*corev1.SuccessResponse, error) {
	if _, err := s.app(ctx, req.GetAppId()); err != nil {
		return nil, err
	}
	if err := s.id.Apps.RemoveTestUser(ctx, req.GetAppId(), req.GetUserId()); err != nil {
		return nil, s.mapErr(err, "Test User "+req.GetUserId())
	}
	return &corev1.SuccessResponse{Success: true}, nil
}

func (s *Service) rotateAppKey(ctx context.Context, _ *sdk.Call, req *corev1.RotateAppKeyRequest) (*corev1.RotatedKey, error) {
	var (
		r   identity.Rotated
		err error
	)
	switch req.GetKind() {
	case "api_key":
		r, err = s.id.Apps.RotateAppKey(ctx, req.GetAppId())
	case "client_secret":
		r, err = s.id.Apps.RotateClientSecret(ctx, req.GetAppId())
	default: // protovalidate refused it already
		return nil, sdk.Invalid("kind", "Invalid parameter: kind must be api_key or client_secret.")
	}
	if err != nil {
		return nil, s.mapErr(err, "App "+req.GetAppId())
	}
	s.forget(r.Expired...) // cached entries learn their new expiry at once
	out := &corev1.RotatedKey{Kind: req.GetKind(), Value: r.Value}
	if req.GetKind() == "client_secret" {
		// The same secret as Standard Webhooks libraries take it.
		out.WebhookSecret = ptr(webhook.StandardKey(r.Value))
	}
	if !r.PreviousExpiresAt.IsZero() {
		out.PreviousExpiresAt = ptr(r.PreviousExpiresAt.UTC().Format(time.RFC3339))
	}
	return out, nil
}

func (s *Service) getAppReview(ctx context.Context, _ *sdk.Call, req *corev1.GetAppReviewRequest) (*corev1.AppReview, error) {
	rs, err := s.id.Review.Reviews(ctx, req.GetAppId())
	if err != nil {
		return nil, s.mapErr(err, "App "+req.GetAppId())
	}
	return reviewProto(rs), nil
}

func (s *Service) submitAppReview(ctx context.Context, _ *sdk.Call, req *corev1.SubmitAppReviewRequest) (*corev1.AppReview, error) {
	if err := s.checkVerifiedBusiness(ctx, req.GetAppId(), req.GetScopes()); err != nil {
		return nil, err
	}
	rs, err := s.id.Review.SubmitReview(ctx, req.GetAppId(), identity.ReviewSubmission{Scopes: req.GetScopes(),
		UseCase: req.GetUseCase(), PrivacyPolicyURL: req.GetPrivacyPolicyUrl()})
	if errors.Is(err, identity.ErrInvalid) {
		field := "use_case"
		if strings.HasPrefix(err.Error(), "scope ") {
			field = "scopes"
		}
		return nil, sdk.Invalid(field, "Invalid parameter: %v", trimSentinel(err))
	}
	if err != nil {
		return nil, s.mapErr(err, "App "+req.GetAppId())
	}
	return reviewProto(rs), nil
}

func reviewProto(rs []identity.ScopeReview) *corev1.AppReview {
	out := &corev1.AppReview{Data: []*corev1.ScopeReview{}}
	for _, r := range rs {
		out.Data = append(out.Data, &corev1.ScopeReview{Scope: r.Scope, Status: string(r.Status), Reason: r.Reason})
	}
	return out
}

// reviewQueueDefault is the queue's page size when no limit is given.
const reviewQueueDefault = 25

func (s *Service) listAppReviewQueue(ctx context.Context, call *sdk.Call, req *corev1.ListAppReviewQueueRequest) (*corev1.ListAppReviewQueueResponse, error) {
	limit := int(req.GetLimit())
	if limit == 0 {
		limit = reviewQueueDefault
	}
	q, err := s.id.Review.ReviewQueue(ctx, call.Principal().UserID, limit)
	if err != nil {
		return nil, s.mapErr(err, "User")
	}
	res := &corev1.ListAppReviewQueueResponse{Data: []*corev1.QueuedScopeReview{}}
	for _, r := range q {
		res.Data = append(res.Data, &corev1.QueuedScopeReview{AppId: r.AppID, AppName: r.AppName, Scope: r.Scope,
			UseCase: r.UseCase, PrivacyPolicyUrl: r.PrivacyPolicyURL, SubmittedAt: r.SubmittedAt.UTC().Format(time.RFC3339)})
	}
	return res, nil
}

func (s *Service) decideAppReview(ctx context.Context, call *sdk.Call, req *corev1.DecideAppReviewRequest) (*corev1.DecideAppReviewResponse, error) {
	staff := call.Principal().UserID
	var (
		r   identity.ScopeReview
		err error
	)
	if req.GetDecision() == "reject" {
		if req.GetReason() == "" {
			return nil, sdk.Invalid("reason", "Invalid parameter: reason is required to reject.")
		}
		r, err = s.id.Review.RejectScope(ctx, staff, req.GetAppId(), req.GetScope(), req.GetReason())
	} else {
		r, err = s.id.Review.ApproveScope(ctx, staff, req.GetAppId(), req.GetScope())
	}
	if errors.Is(err, identity.ErrNotPending) {
		return nil, &sdk.Error{HTTPStatus: http.StatusConflict, Code: 10, Subcode: 2018305, Type: sdk.TypeOAuth,
			Message: "The review of " + req.GetScope() + " for app " + req.GetAppId() + " is not pending: it was decided already."}
	}
	if err != nil {
		return nil, s.mapErr(err, "Review of "+req.GetScope()+" for app "+req.GetAppId())
	}
	return &corev1.DecideAppReviewResponse{Review: &corev1.DecidedScopeReview{AppId: r.AppID, Scope: r.Scope,
		Status: string(r.Status), Reason: r.Reason, DecidedAt: r.DecidedAt.UTC().Format(time.RFC3339)}}, nil
}

// trimSentinel is err's message without identity's sentinel suffix, for
// the caller.
func trimSentinel(err error) string {
	msg := err.Error()
	for _, suffix := range []string{": " + identity.ErrInvalid.Error(), ": " + identity.ErrReviewRequired.Error(),
		": " + identity.ErrLimitReached.Error()} {
		if len(msg) > len(suffix) && msg[len(msg)-len(suffix):] == suffix {
			return msg[:len(msg)-len(suffix)]
		}
	}
	return msg
}
