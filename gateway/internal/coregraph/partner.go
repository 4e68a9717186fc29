package coregraph

import (
	"context"
	"errors"
	"net/http"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/identity"
	corev1 "github.com/svcplatform/svc/gen/svc/core/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/sdk"
)

// The partner program (CONTRACT §18, docs/PARTNERS.md): who may register
// is RegisterPartner's access rule (a business admin's session); who sees
// a partner's criteria, and who may report a smoke run for it, is the
// business's access rule (auth.Authenticator.AuthorizeBusiness) on the
// partner's business, which the request names only through the partner.

func (s *Service) registerPartners(p *sdk.Plugin) {
	m := corev1.File_svc_core_v1_graph_proto.Services().ByName("GraphService").Methods()
	sdk.Handle(p, m.ByName("RegisterPartner"), s.registerPartner)
	sdk.Handle(p, m.ByName("GetPartner"), s.getPartner)
	sdk.Handle(p, m.ByName("RecordPartnerSmokeRun"), s.recordPartnerSmokeRun)
}

// partnerExists: the business is a partner already (409; the parameter
// named is business_id).
func partnerExists(businessID string) *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusConflict, Code: 100, Type: sdk.TypeOAuth,
		Message: "Invalid parameter: business_id: business " + businessID + " is a partner already."}
}

func (s *Service) registerPartner(ctx context.Context, call *sdk.Call, req *corev1.RegisterPartnerRequest) (*corev1.RegisteredPartner, error) {
	p, err := s.id.Partners.Register(ctx, req.GetBusinessId(), call.Principal().UserID)
	if errors.Is(err, identity.ErrPartnerExists) {
		return nil, partnerExists(req.GetBusinessId())
	}
	if err != nil {
		return nil, s.mapErr(err, "Business "+req.GetBusinessId())
	}
	return &corev1.RegisteredPartner{Id: p.ID, Tier: string(p.Tier)}, nil
}

// getPartner assesses the partner now (tiers are recomputed on request)
// and answers it; the criteria only to the people of its business.
func (s *Service) getPartner(ctx context.Context, _ *sdk.Call, req *corev1.GetPartnerRequest) (*corev1.Partner, error) {
	p, err := s.id.Partners.Assess(ctx, req.GetPartnerId())
	if err != nil {
		return nil, s.mapErr(err, "Partner "+req.GetPartnerId())
	}
	out := &corev1.Partner{Id: p.ID, BusinessId: p.BusinessID, Tier: string(p.Tier), Criteria: []*corev1.PartnerCriterion{}}
	err = s.authorizeBusiness(ctx, auth.FromContext(ctx), pluginv1.BusinessRole_BUSINESS_ROLE_EMPLOYEE, p.BusinessID)
	var refused *apierr.Error
	switch {
	case errors.As(err, &refused) && refused.HTTPStatus == http.StatusForbidden:
		return out, nil // not of the business: the tier only
	case err != nil:
		return nil, err
	}
	for _, c := range p.Criteria {
		out.Criteria = append(out.Criteria, &corev1.PartnerCriterion{Name: c.Name, Met: c.Met, Value: c.Value})
	}
	return out, nil
}

// recordPartnerSmokeRun keeps a smoke run reported by `gateway smoke
// --report-partner`, with the user token its OAuth step obtained: the app
// of the token is the app the run checked, and must be the business's;
// the user must administer the business.
func (s *Service) recordPartnerSmokeRun(ctx context.Context, call *sdk.Call, req *corev1.RecordPartnerSmokeRunRequest) (*corev1.RecordedPartnerSmokeRun, error) {
	business, err := s.id.Partners.BusinessOf(ctx, req.GetPartnerId())
	if err != nil {
		return nil, s.mapErr(err, "Partner "+req.GetPartnerId())
	}
	if err := s.authorizeBusiness(ctx, auth.FromContext(ctx), pluginv1.BusinessRole_BUSINESS_ROLE_ADMIN, business); err != nil {
		return nil, err
	}
	pr := call.Principal()
	id, err := s.id.Partners.RecordSmokeRun(ctx, identity.SmokeRun{PartnerID: req.GetPartnerId(), AppID: pr.AppID, UserID: pr.UserID,
		Passed: int(req.GetPassed()), Failed: int(req.GetFailed()), Summary: req.GetSummary()})
	if errors.Is(err, identity.ErrAppNotInBusiness) {
		return nil, &sdk.Error{HTTPStatus: http.StatusForbidden, Code: 200, Subcode: 2069004, Type: sdk.TypeOAuth,
			Message: "The token's app " + pr.AppID + " does not belong to the partner's business: run the smoke check with an app of business " + business + "."}
	}
	if err != nil {
		return nil, s.mapErr(err, "Partner "+req.GetPartnerId())
	}
	return &corev1.RecordedPartnerSmokeRun{Id: id}, nil
}
