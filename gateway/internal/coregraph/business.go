package coregraph

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/identity"
	corev1 "github.com/svcplatform/svc/gen/svc/core/v1"
	"github.com/svcplatform/svc/sdk"
)

// Business portfolios (CONTRACT §17): who may call each node is its access
// rule (business_role, checked in gateway/internal/auth); what a role may
// do with an asset is identity.Businesses.AddAsset's.

func (s *Service) registerBusinesses(p *sdk.Plugin) {
	m := corev1.File_svc_core_v1_graph_proto.Services().ByName("GraphService").Methods()
	sdk.Handle(p, m.ByName("CreateBusiness"), s.createBusiness)
	sdk.Handle(p, m.ByName("GetBusiness"), s.getBusiness)
	sdk.Handle(p, m.ByName("ListBusinessAssets"), s.listBusinessAssets)
	sdk.Handle(p, m.ByName("AddBusinessAsset"), s.addBusinessAsset)
	sdk.Handle(p, m.ByName("ListBusinessRoles"), s.listBusinessRoles)
	sdk.Handle(p, m.ByName("SetBusinessRole"), s.setBusinessRole)
	sdk.Handle(p, m.ByName("RequestBusinessVerification"), s.requestBusinessVerification)
	sdk.Handle(p, m.ByName("ListBusinessVerificationQueue"), s.listBusinessVerificationQueue)
	sdk.Handle(p, m.ByName("DecideBusinessVerification"), s.decideBusinessVerification)
}

// verifiedBusinessScopes are the scopes App Review takes only from an app
// of a verified business: CONTRACT §17's three, and the commerce plugin's
// catalog and order scopes (issue 33), as Meta asks Business Verification
// for advanced access to all of them.
var verifiedBusinessScopes = []string{"ads_management", "leads_retrieval", "extmsg_business_management",
	"catalog_management", "commerce_manage_orders"}

// businessNotVerified: App Review refuses a gated scope of an app that
// belongs to no verified business (CONTRACT §17).
func businessNotVerified(scope string) *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusForbidden, Code: 200, Subcode: 2069006, Type: sdk.TypeOAuth,
		Message: "Requesting " + scope + " needs the app to belong to a verified business: add the app to a business (business/<id>/assets) and have the business verified."}
}

// checkVerifiedBusiness refuses a review of the gated scopes for an app
// of no verified business.
func (s *Service) checkVerifiedBusiness(ctx context.Context, appID string, scopes []string) error {
	i := slices.IndexFunc(scopes, func(sc string) bool { return slices.Contains(verifiedBusinessScopes, sc) })
	if i < 0 {
		return nil
	}
	ok, err := s.id.Businesses.AppVerified(ctx, appID)
	if err != nil {
		return err
	}
	if !ok {
		return businessNotVerified(scopes[i])
	}
	return nil
}

func (s *Service) createBusiness(ctx context.Context, call *sdk.Call, req *corev1.CreateBusinessRequest) (*corev1.CreatedBusiness, error) {
	b, err := s.id.Businesses.Create(ctx, call.Principal().UserID, req.GetName())
	if errors.Is(err, identity.ErrInvalid) {
		return nil, sdk.Invalid("name", "Invalid parameter: %v", trimSentinel(err))
	}
	if err != nil {
		return nil, s.mapErr(err, "User")
	}
	return &corev1.CreatedBusiness{Id: b.ID}, nil
}

func (s *Service) getBusiness(ctx context.Context, _ *sdk.Call, req *corev1.GetBusinessRequest) (*corev1.Business, error) {
	b, err := s.id.Businesses.Get(ctx, req.GetBusinessId())
	if err != nil {
		return nil, s.mapErr(err, "Business "+req.GetBusinessId())
	}
	out := businessProto(b)
	if out.PartnerId, err = s.id.Partners.OfBusiness(ctx, b.ID); err != nil {
		return nil, s.mapErr(err, "Business "+req.GetBusinessId())
	}
	return out, nil
}

func businessProto(b identity.Business) *corev1.Business {
	return &corev1.Business{Id: b.ID, Name: b.Name, VerificationStatus: string(b.VerificationStatus),
		VerificationReason: b.VerificationReason}
}

func (s *Service) listBusinessAssets(ctx context.Context, _ *sdk.Call, req *corev1.ListBusinessAssetsRequest) (*corev1.ListBusinessAssetsResponse, error) {
	assets, err := s.id.Businesses.Assets(ctx, req.GetBusinessId())
	if err != nil {
		return nil, s.mapErr(err, "Business "+req.GetBusinessId())
	}
	res := &corev1.ListBusinessAssetsResponse{Data: make([]*corev1.BusinessAsset, len(assets))}
	for i, a := range assets {
		res.Data[i] = &corev1.BusinessAsset{Type: a.Type, Id: a.ID, Name: a.Name}
	}
	return res, nil
}

// addBusinessAsset puts an asset of the caller's in the business. An ad
// account is the ads plugin's: the caller holds it when the plugin lists
// it among the caller's assets (the same call, with the caller's own
// access checks, that me/assigned_assets makes).
func (s *Service) addBusinessAsset(ctx context.Context, call *sdk.Call, req *corev1.AddBusinessAssetRequest) (*corev1.SuccessResponse, error) {
	held := false
	if req.GetType() == "AD_ACCOUNT" {
		assets, err := s.pluginAssets(ctx, auth.FromContext(ctx))
		if err != nil {
			return nil, err
		}
		held = slices.ContainsFunc(assets, func(a *corev1.AssignedAsset) bool {
			return a.GetType() == "AD_ACCOUNT" && a.GetId() == req.GetId()
		})
	}
	err := s.id.Businesses.AddAsset(ctx, req.GetBusinessId(), call.Principal().UserID, req.GetType(), req.GetId(), held)
	switch {
	case errors.Is(err, identity.ErrNotAssetAdmin):
		return nil, apierrAssetNotYours(req.GetType(), req.GetId())
	case errors.Is(err, identity.ErrAssetTaken):
		return nil, sdk.Invalid("id", "Invalid parameter: id: %s %s belongs to a business already; an asset belongs to at most one business.",
			req.GetType(), req.GetId())
	case err != nil:
		return nil, s.mapErr(err, "Business "+req.GetBusinessId())
	}
	return &corev1.SuccessResponse{Success: true}, nil
}

// apierrAssetNotYours: the caller does not own or administer the asset
// (or it does not exist: the two read alike, so that a business admin
// cannot probe others' assets). The role on the asset is too low, the
// Page's refusal (403, code 200, 2069003).
func apierrAssetNotYours(typ, id string) error {
	return &sdk.Error{HTTPStatus: http.StatusForbidden, Code: 200, Subcode: 2069003, Type: sdk.TypeOAuth,
		Message: "To add " + typ + " " + id + " to a business you must own or administer it."}
}

func (s *Service) listBusinessRoles(ctx context.Context, _ *sdk.Call, req *corev1.ListBusinessRolesRequest) (*corev1.ListBusinessRolesResponse, error) {
	people, err := s.id.Businesses.People(ctx, req.GetBusinessId())
	if err != nil {
		return nil, s.mapErr(err, "Business "+req.GetBusinessId())
	}
	res := &corev1.ListBusinessRolesResponse{Data: make([]*corev1.BusinessRoleEntry, len(people))}
	for i, p := range people {
		res.Data[i] = &corev1.BusinessRoleEntry{UserId: p.UserID, Name: p.Name, Role: string(p.Role)}
	}
	return res, nil
}

func (s *Service) setBusinessRole(ctx context.Context, _ *sdk.Call, req *corev1.SetBusinessRoleRequest) (*corev1.SuccessResponse, error) {
	err := s.id.Businesses.SetRole(ctx, req.GetBusinessId(), req.GetUserId(), identity.BusinessRole(req.GetRole()))
	if errors.Is(err, identity.ErrLastAdmin) {
		return nil, sdk.Invalid("role", "Invalid parameter: role: the last admin of the business cannot become an employee.")
	}
	if err != nil {
		return nil, s.mapErr(err, "User "+req.GetUserId())
	}
	return &corev1.SuccessResponse{Success: true}, nil
}

func (s *Service) requestBusinessVerification(ctx context.Context, call *sdk.Call, req *corev1.RequestBusinessVerificationRequest) (*corev1.Business, error) {
	vr := identity.VerificationRequest{LegalName: req.GetLegalName(), Country: req.GetCountry()}
	for _, d := range req.GetDocuments() {
		vr.Documents = append(vr.Documents, identity.VerificationDocument{Kind: d.GetKind(), SHA256: d.GetSha256()})
	}
	b, err := s.id.Businesses.RequestVerification(ctx, req.GetBusinessId(), call.Principal().UserID, vr)
	switch {
	case errors.Is(err, identity.ErrInvalid):
		msg := trimSentinel(err)
		field, _, _ := strings.Cut(msg, ":")
		return nil, sdk.Invalid(field, "Invalid parameter: %s", msg)
	case errors.Is(err, identity.ErrVerificationState):
		return nil, sdk.Invalid("", "Invalid request: %s: only an unverified or rejected business asks for verification.",
			strings.TrimSuffix(err.Error(), ": "+identity.ErrVerificationState.Error()))
	case err != nil:
		return nil, s.mapErr(err, "Business "+req.GetBusinessId())
	}
	return businessProto(b), nil
}

func (s *Service) listBusinessVerificationQueue(ctx context.Context, _ *sdk.Call, req *corev1.ListBusinessVerificationQueueRequest) (*corev1.ListBusinessVerificationQueueResponse, error) {
	limit := int(req.GetLimit())
	if limit == 0 {
		limit = reviewQueueDefault
	}
	q, err := s.id.Businesses.VerificationQueue(ctx, limit)
	if err != nil {
		return nil, err
	}
	res := &corev1.ListBusinessVerificationQueueResponse{Data: make([]*corev1.QueuedBusinessVerification, len(q))}
	for i, v := range q {
		out := &corev1.QueuedBusinessVerification{BusinessId: v.BusinessID, BusinessName: v.BusinessName,
			LegalName: v.LegalName, Country: v.Country, RequestedTime: v.RequestedAt.UTC().Format(time.RFC3339)}
		for _, d := range v.Documents {
			out.Documents = append(out.Documents, &corev1.VerificationDocument{Kind: d.Kind, Sha256: d.SHA256})
		}
		res.Data[i] = out
	}
	return res, nil
}

func (s *Service) decideBusinessVerification(ctx context.Context, call *sdk.Call, req *corev1.DecideBusinessVerificationRequest) (*corev1.Business, error) {
	if req.GetDecision() == "reject" && strings.TrimSpace(req.GetReason()) == "" {
		return nil, sdk.Invalid("reason", "Invalid parameter: reason is required to reject.")
	}
	b, err := s.id.Businesses.DecideVerification(ctx, call.Principal().UserID, req.GetBusinessId(),
		identity.VerificationEvent(req.GetDecision()), req.GetReason())
	if errors.Is(err, identity.ErrVerificationState) {
		return nil, &sdk.Error{HTTPStatus: http.StatusConflict, Code: 10, Subcode: 2018305, Type: sdk.TypeOAuth,
			Message: "The verification of business " + req.GetBusinessId() + " is not pending."}
	}
	if err != nil {
		return nil, s.mapErr(err, "Business "+req.GetBusinessId())
	}
	return businessProto(b), nil
}

// listMyBusinessPortfolios lists the businesses the caller has a role on,
// with the Pages each holds; a user token's list names only the Pages the
// person chose for its app (granular consent).
func (s *Service) listMyBusinessPortfolios(ctx context.Context, call *sdk.Call, req *corev1.ListMyBusinessPortfoliosRequest) (*corev1.ListMyBusinessPortfoliosResponse, error) {
	w, err := sdk.ParseForwardWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	list, err := s.id.Businesses.OfUser(ctx, call.Principal().UserID, w.After, int(w.Fetch()))
	if err != nil {
		return nil, s.mapErr(err, "User")
	}
	list, paging := sdk.Page(w, list, func(b identity.UserBusiness) int64 { return idKey(b.ID) })
	res := &corev1.ListMyBusinessPortfoliosResponse{Data: make([]*corev1.BusinessPortfolio, 0, len(list))}
	paging.Set(res)
	chosen := pageChoice(ctx)
	for _, b := range list {
		assets, err := s.id.Businesses.Assets(ctx, b.ID)
		if err != nil {
			return nil, err
		}
		bp := &corev1.BusinessPortfolio{Id: b.ID, Name: b.Name, VerificationStatus: string(b.VerificationStatus),
			Role: string(b.Role), PageIds: []string{}}
		for _, a := range assets {
			if a.Type == "PAGE" && chosen.Allows(a.ID) {
				bp.PageIds = append(bp.PageIds, a.ID)
			}
		}
		res.Data = append(res.Data, bp)
	}
	return res, nil
}

// setAssetBusinesses fills in the business holding each asset, from the
// core's record (plugins do not know it).
func (s *Service) setAssetBusinesses(ctx context.Context, assets []*corev1.AssignedAsset) error {
	byType := map[string][]string{}
	for _, a := range assets {
		byType[a.GetType()] = append(byType[a.GetType()], a.GetId())
	}
	for typ, ids := range byType {
		held, err := s.id.Businesses.BusinessesOf(ctx, typ, ids)
		if err != nil {
			return err
		}
		for _, a := range assets {
			if a.GetType() == typ {
				a.BusinessId = held[a.GetId()]
			}
		}
	}
	return nil
}
