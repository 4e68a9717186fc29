package main

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	adsv1 "github.com/svcplatform/svc/gen/svc/ads/v1"
	"github.com/svcplatform/svc/internal/business"
	"github.com/svcplatform/svc/plugins/ads/internal/adsdb"
	"github.com/svcplatform/svc/sdk"
)

// maxAccountsPerBusiness bounds the sandbox ad accounts of one business.
const maxAccountsPerBusiness = 5

type service struct {
	pool *pgxpool.Pool
	// development provisions a business's sandbox ad account on first look.
	development bool
	// cpm is the sandbox price per thousand impressions; 0: SandboxCPM.
	cpm int64
	// clock tells the time; nil: time.Now.
	clock func() time.Time
}

func (s *service) register(p *sdk.Plugin) {
	m := adsv1.File_svc_ads_v1_ads_proto.Services().ByName("AdsService").Methods()
	sdk.Handle(p, m.ByName("ListMyAdAccounts"), s.listMyAdAccounts)
	sdk.OnUserLeft(p, s.userLeft)
	sdk.Handle(p, m.ByName("CreateAdAccount"), s.createAdAccount)
	sdk.Handle(p, m.ByName("GetAdAccount"), s.getAdAccount)
	sdk.Handle(p, m.ByName("ListLeadCampaigns"), s.listLeadCampaigns)
	sdk.Handle(p, m.ByName("CreateLeadCampaign"), s.createLeadCampaign)
	sdk.Handle(p, m.ByName("ListLeadgenForms"), s.listLeadgenForms)
	sdk.Handle(p, m.ByName("CreateLeadgenForm"), s.createLeadgenForm)
	sdk.Handle(p, m.ByName("GetLeadgenForm"), s.getLeadgenForm)
	sdk.Handle(p, m.ByName("SubmitLead"), s.submitLead)
	sdk.Handle(p, m.ByName("ListLeads"), s.listLeads)
	sdk.Handle(p, m.ByName("CreateCampaign"), s.createCampaign)
	sdk.Handle(p, m.ByName("ListCampaigns"), s.listCampaigns)
	sdk.Handle(p, m.ByName("UpdateCampaign"), s.updateCampaign)
	sdk.Handle(p, m.ByName("CreateAd"), s.createAd)
	sdk.Handle(p, m.ByName("ListAds"), s.listAds)
	sdk.Handle(p, m.ByName("UpdateAd"), s.updateAd)
	sdk.Handle(p, m.ByName("GetAdInsights"), s.getAdInsights)
	sdk.Handle(p, m.ByName("ServeSponsoredAd"), s.serveSponsoredAd)
	sdk.Handle(p, m.ByName("ClickAd"), s.clickAd)
	sdk.Handle(p, m.ByName("CreateCustomAudience"), s.createCustomAudience)
	sdk.Handle(p, m.ByName("AddCustomAudienceUsers"), s.addCustomAudienceUsers)
	sdk.Handle(p, m.ByName("GetCustomAudience"), s.getCustomAudience)
	sdk.Handle(p, m.ByName("SendConversionEvents"), s.sendConversionEvents)
}

// listMyAdAccounts lists the ad accounts of the caller's business, giving
// it its sandbox account first in development.
func (s *service) listMyAdAccounts(ctx context.Context, call *sdk.Call, req *adsv1.ListMyAdAccountsRequest) (*adsv1.ListAdAccountsResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	business := business.Of(call.Principal().UserID)
	if s.development {
		if err := s.provisionSandbox(ctx, call, business); err != nil {
			return nil, err
		}
	}
	q := adsdb.New(s.pool)
	var rows []adsdb.AdsAdAccount
	if w.Before != 0 {
		rows, err = q.BusinessAdAccountsBefore(ctx, adsdb.BusinessAdAccountsBeforeParams{BusinessID: business, Before: w.Before, Lim: w.Fetch()})
	} else {
		rows, err = q.BusinessAdAccountsAfter(ctx, adsdb.BusinessAdAccountsAfterParams{BusinessID: business, After: w.After, Lim: w.Fetch()})
	}
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(a adsdb.AdsAdAccount) int64 { return a.ID })
	res := &adsv1.ListAdAccountsResponse{Data: make([]*adsv1.AdAccount, len(rows))}
	paging.Set(res)
	for i, r := range rows {
		res.Data[i] = accountProto(r)
	}
	return res, nil
}

// provisionSandbox gives a business with no ad account its sandbox account
// (development only).
func (s *service) provisionSandbox(ctx context.Context, call *sdk.Call, business string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := adsdb.New(tx)
		if err := q.LockBusiness(ctx, business); err != nil {
			return err
		}
		n, err := q.CountBusinessAdAccounts(ctx, business)
		if err != nil || n > 0 {
			return err
		}
		name := "Sandbox ad account"
		if u, err := call.Host().UserInfo(ctx, call.Principal().UserID); err == nil && u.Name != "" {
			name = u.Name + "'s sandbox ad account"
		}
		_, err = q.InsertAdAccount(ctx, adsdb.InsertAdAccountParams{BusinessID: business, Name: name})
		return err
	})
}

// createAdAccount creates a sandbox ad account in the caller's business.
func (s *service) createAdAccount(ctx context.Context, call *sdk.Call, req *adsv1.CreateAdAccountRequest) (*adsv1.CreatedResponse, error) {
	if err := plainText("name", req.GetName()); err != nil {
		return nil, err
	}
	business := business.Of(call.Principal().UserID)
	var row adsdb.AdsAdAccount
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := adsdb.New(tx)
		if err := q.LockBusiness(ctx, business); err != nil {
			return err
		}
		n, err := q.CountBusinessAdAccounts(ctx, business)
		if err != nil {
			return err
		}
		if n >= maxAccountsPerBusiness {
			return sdk.Invalid("name", "Invalid parameter: business %s already has %d sandbox ad accounts, the most it may have.", business, n)
		}
		row, err = q.InsertAdAccount(ctx, adsdb.InsertAdAccountParams{BusinessID: business, Name: req.GetName()})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &adsv1.CreatedResponse{Id: sdk.FormatID(row.ID)}, nil
}

func (s *service) getAdAccount(ctx context.Context, call *sdk.Call, req *adsv1.GetAdAccountRequest) (*adsv1.AdAccount, error) {
	row, err := s.ownedAccount(ctx, call, req.GetAdAccountId())
	if err != nil {
		return nil, err
	}
	return accountProto(row), nil
}

// ownedAccount reads an ad account the caller may use (mayUse); any other
// account, like one that does not exist, is not found.
func (s *service) ownedAccount(ctx context.Context, call *sdk.Call, id string) (adsdb.AdsAdAccount, error) {
	n, ok := sdk.ParseID(id)
	if !ok {
		return adsdb.AdsAdAccount{}, accountNotFound(id)
	}
	row, err := adsdb.New(s.pool).GetAdAccount(ctx, n)
	if errors.Is(err, pgx.ErrNoRows) {
		return adsdb.AdsAdAccount{}, accountNotFound(id)
	}
	if err != nil {
		return row, err
	}
	ok, err = mayUse(ctx, call, row.BusinessID, row.ID)
	if err != nil {
		return adsdb.AdsAdAccount{}, err
	}
	if !ok {
		return adsdb.AdsAdAccount{}, accountNotFound(id)
	}
	return row, nil
}

// errOr is err, or refusal when err is nil.
func errOr(err error, refusal *sdk.Error) error {
	if err != nil {
		return err
	}
	return refusal
}

// mayUse reports whether the caller may use the ad account id kept under
// holder: the person who made it, or an admin of the business the core
// records as holding it (business/<id>/assets), as the gateway decides
// (Host BusinessAccess on the AD_ACCOUNT asset).
func mayUse(ctx context.Context, call *sdk.Call, holder string, id int64) (bool, error) {
	if holder == business.Of(call.Principal().UserID) {
		return true, nil
	}
	err := call.Host().BusinessAccess(ctx, sdk.BusinessQuery{AssetType: "AD_ACCOUNT", AssetID: sdk.FormatID(id),
		UserID: call.Principal().UserID, Need: sdk.BusinessRoleAdmin})
	if errors.Is(err, sdk.ErrBusinessRefused) {
		return false, nil
	}
	return err == nil, err
}

func (s *service) listLeadCampaigns(ctx context.Context, call *sdk.Call, req *adsv1.ListLeadCampaignsRequest) (*adsv1.ListLeadCampaignsResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	acct, err := s.ownedAccount(ctx, call, req.GetAdAccountId())
	if err != nil {
		return nil, err
	}
	q := adsdb.New(s.pool)
	var rows []adsdb.AdsLeadCampaign
	if w.Before != 0 {
		rows, err = q.LeadCampaignsBefore(ctx, adsdb.LeadCampaignsBeforeParams{AdAccountID: acct.ID, Before: w.Before, Lim: w.Fetch()})
	} else {
		rows, err = q.LeadCampaignsAfter(ctx, adsdb.LeadCampaignsAfterParams{AdAccountID: acct.ID, After: w.After, Lim: w.Fetch()})
	}
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(c adsdb.AdsLeadCampaign) int64 { return c.ID })
	res := &adsv1.ListLeadCampaignsResponse{Data: make([]*adsv1.LeadCampaign, len(rows))}
	paging.Set(res)
	for i, r := range rows {
		res.Data[i] = &adsv1.LeadCampaign{Id: sdk.FormatID(r.ID), AdAccountId: sdk.FormatID(r.AdAccountID), Name: r.Name,
			Objective: "OUTCOME_LEADS", Status: r.Status, LeadgenFormId: optionalID(r.LeadgenFormID), CreatedTime: rfc3339(r.CreatedAt)}
	}
	return res, nil
}

// createLeadCampaign creates a lead campaign, PAUSED unless asked ACTIVE.
func (s *service) createLeadCampaign(ctx context.Context, call *sdk.Call, req *adsv1.CreateLeadCampaignRequest) (*adsv1.CreatedResponse, error) {
	if err := plainText("name", req.GetName()); err != nil {
		return nil, err
	}
	acct, err := s.ownedAccount(ctx, call, req.GetAdAccountId())
	if err != nil {
		return nil, err
	}
	status := req.GetStatus()
	if status == "" {
		status = "PAUSED"
	}
	var form *int64
	if f := req.GetLeadgenFormId(); f != "" {
		id, ok := sdk.ParseID(f)
		exists := false
		if ok {
			if exists, err = adsdb.New(s.pool).FormOfAccountExists(ctx, adsdb.FormOfAccountExistsParams{AdAccountID: acct.ID, ID: id}); err != nil {
				return nil, err
			}
		}
		if !exists {
			e := sdk.NotFound("Lead form " + f + " of ad account " + req.GetAdAccountId())
			e.Field = "leadgen_form_id"
			return nil, e
		}
		form = &id
	}
	row, err := adsdb.New(s.pool).InsertLeadCampaign(ctx, adsdb.InsertLeadCampaignParams{AdAccountID: acct.ID, Name: req.GetName(), Status: status, LeadgenFormID: form})
	if err != nil {
		return nil, err
	}
	return &adsv1.CreatedResponse{Id: sdk.FormatID(row.ID)}, nil
}

func accountProto(r adsdb.AdsAdAccount) *adsv1.AdAccount {
	return &adsv1.AdAccount{Id: sdk.FormatID(r.ID), Name: r.Name, BusinessId: r.BusinessID, Currency: r.Currency,
		IsSandbox: r.IsSandbox, CreatedTime: rfc3339(r.CreatedAt)}
}

func accountNotFound(id string) error { return sdk.NotFound("Ad account " + id) }

// plainText refuses text with a NUL character, which PostgreSQL cannot
// store; the gateway has checked lengths.
func plainText(field, s string) error {
	if strings.ContainsRune(s, 0) {
		return sdk.Invalid(field, "Invalid parameter: %s must not contain the NUL character.", field)
	}
	return nil
}

func optionalID(id *int64) string {
	if id == nil {
		return ""
	}
	return sdk.FormatID(*id)
}

func rfc3339(t pgtype.Timestamptz) string { return t.Time.UTC().Format(time.RFC3339) }
