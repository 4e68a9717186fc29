package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	adsv1 "github.com/svcplatform/svc/gen/svc/ads/v1"
	"github.com/svcplatform/svc/plugins/ads/internal/adsdb"
	"github.com/svcplatform/svc/sdk"
)

// SandboxCPM is the sandbox's price: minor units of the account's
// currency per thousand impressions ($5.00 for USD). Spend is impressions
// at this price; a campaign is served while one more impression keeps its
// day's spend within its daily budget.
const SandboxCPM = 500

// now is the service's clock (UTC); tests set s.clock.
func (s *service) now() time.Time {
	if s.clock != nil {
		return s.clock().UTC()
	}
	return time.Now().UTC()
}

// day is the UTC day of t, the unit of daily counts and budgets.
func day(t time.Time) pgtype.Date {
	y, m, d := t.UTC().Date()
	return pgtype.Date{Time: time.Date(y, m, d, 0, 0, 0, 0, time.UTC), Valid: true}
}

func timestamptz(t time.Time) pgtype.Timestamptz { return pgtype.Timestamptz{Time: t, Valid: true} }

func (s *service) createCampaign(ctx context.Context, call *sdk.Call, req *adsv1.CreateCampaignRequest) (*adsv1.CreatedResponse, error) {
	if err := plainText("name", req.GetName()); err != nil {
		return nil, err
	}
	acct, err := s.ownedAccount(ctx, call, req.GetAdAccountId())
	if err != nil {
		return nil, err
	}
	status := req.GetStatus()
	if status == "" {
		status = statusPaused
	}
	row, err := adsdb.New(s.pool).InsertCampaign(ctx, adsdb.InsertCampaignParams{AdAccountID: acct.ID, Name: req.GetName(),
		Objective: req.GetObjective(), Status: status, DailyBudget: req.GetDailyBudget()})
	if err != nil {
		return nil, err
	}
	return &adsv1.CreatedResponse{Id: sdk.FormatID(row.ID)}, nil
}

func (s *service) listCampaigns(ctx context.Context, call *sdk.Call, req *adsv1.ListCampaignsRequest) (*adsv1.ListCampaignsResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	acct, err := s.ownedAccount(ctx, call, req.GetAdAccountId())
	if err != nil {
		return nil, err
	}
	q := adsdb.New(s.pool)
	var rows []adsdb.AdsCampaign
	if w.Before != 0 {
		rows, err = q.CampaignsBefore(ctx, adsdb.CampaignsBeforeParams{AdAccountID: acct.ID, Before: w.Before, Lim: w.Fetch()})
	} else {
		rows, err = q.CampaignsAfter(ctx, adsdb.CampaignsAfterParams{AdAccountID: acct.ID, After: w.After, Lim: w.Fetch()})
	}
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(c adsdb.AdsCampaign) int64 { return c.ID })
	res := &adsv1.ListCampaignsResponse{Data: make([]*adsv1.Campaign, len(rows))}
	paging.Set(res)
	for i, r := range rows {
		res.Data[i] = &adsv1.Campaign{Id: sdk.FormatID(r.ID), AdAccountId: sdk.FormatID(r.AdAccountID), Name: r.Name,
			Objective: r.Objective, Status: r.Status, DailyBudget: r.DailyBudget, CreatedTime: rfc3339(r.CreatedAt)}
	}
	return res, nil
}

// ownedCampaign reads a campaign of an ad account the caller may use
// (mayUse); any other, like one that does not exist, is not found.
func (s *service) ownedCampaign(ctx context.Context, call *sdk.Call, id string) (adsdb.GetCampaignRow, error) {
	notFound := sdk.NotFound("Campaign " + id)
	n, ok := sdk.ParseID(id)
	if !ok {
		return adsdb.GetCampaignRow{}, notFound
	}
	row, err := adsdb.New(s.pool).GetCampaign(ctx, n)
	if errors.Is(err, pgx.ErrNoRows) {
		return adsdb.GetCampaignRow{}, notFound
	}
	if err != nil {
		return row, err
	}
	if ok, err := mayUse(ctx, call, row.BusinessID, row.AdAccountID); err != nil || !ok {
		return adsdb.GetCampaignRow{}, errOr(err, notFound)
	}
	return row, nil
}

// ownedAd reads an ad of an ad account the caller may use, as
// ownedCampaign.
func (s *service) ownedAd(ctx context.Context, call *sdk.Call, id string) (adsdb.GetAdRow, error) {
	notFound := sdk.NotFound("Ad " + id)
	n, ok := sdk.ParseID(id)
	if !ok {
		return adsdb.GetAdRow{}, notFound
	}
	row, err := adsdb.New(s.pool).GetAd(ctx, n)
	if errors.Is(err, pgx.ErrNoRows) {
		return adsdb.GetAdRow{}, notFound
	}
	if err != nil {
		return row, err
	}
	if ok, err := mayUse(ctx, call, row.BusinessID, row.AdAccountID); err != nil || !ok {
		return adsdb.GetAdRow{}, errOr(err, notFound)
	}
	return row, nil
}

// refuseMove refuses a status change the transition table does not hold.
func refuseMove(what, from, to string) error {
	return sdk.Invalid("status", "Invalid parameter: %s is %s and cannot become %s.", what, from, to)
}

func (s *service) updateCampaign(ctx context.Context, call *sdk.Call, req *adsv1.UpdateStatusRequest) (*adsv1.SuccessResponse, error) {
	c, err := s.ownedCampaign(ctx, call, req.GetId())
	if err != nil {
		return nil, err
	}
	if !canMove(c.Status, req.GetStatus()) {
		return nil, refuseMove("campaign "+req.GetId(), c.Status, req.GetStatus())
	}
	if err := adsdb.New(s.pool).SetCampaignStatus(ctx, adsdb.SetCampaignStatusParams{AdAccountID: c.AdAccountID, ID: c.ID, Status: req.GetStatus()}); err != nil {
		return nil, err
	}
	return &adsv1.SuccessResponse{Success: true}, nil
}

func (s *service) updateAd(ctx context.Context, call *sdk.Call, req *adsv1.UpdateStatusRequest) (*adsv1.SuccessResponse, error) {
	a, err := s.ownedAd(ctx, call, req.GetId())
	if err != nil {
		return nil, err
	}
	if !canMove(a.Status, req.GetStatus()) {
		return nil, refuseMove("ad "+req.GetId(), a.Status, req.GetStatus())
	}
	if err := adsdb.New(s.pool).SetAdStatus(ctx, adsdb.SetAdStatusParams{AdAccountID: a.AdAccountID, ID: a.ID, Status: req.GetStatus()}); err != nil {
		return nil, err
	}
	return &adsv1.SuccessResponse{Success: true}, nil
}

// checkLinkURL accepts an absolute http(s) URL without credentials.
func checkLinkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return sdk.Invalid("creative.link_url", "Invalid parameter: creative.link_url must be an absolute http or https URL without a user name or password.")
	}
	return nil
}

func (s *service) createAd(ctx context.Context, call *sdk.Call, req *adsv1.CreateAdRequest) (*adsv1.CreatedResponse, error) {
	cr := req.GetCreative()
	for _, f := range [][2]string{{"name", req.GetName()}, {"creative.title", cr.GetTitle()}, {"creative.body", cr.GetBody()}} {
		if err := plainText(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	if err := checkLinkURL(cr.GetLinkUrl()); err != nil {
		return nil, err
	}
	if p := cr.GetPageId(); p != "" {
		if _, ok := sdk.ParseID(p); !ok {
			return nil, sdk.Invalid("creative.page_id", "Invalid parameter: creative.page_id must be a Page id.")
		}
	}
	c, err := s.ownedCampaign(ctx, call, req.GetCampaignId())
	if err != nil {
		return nil, err
	}
	if c.Status == statusDeleted || c.Status == statusArchived {
		return nil, sdk.Invalid("campaign_id", "Invalid parameter: campaign %s is %s; it takes no new ads.", req.GetCampaignId(), c.Status)
	}
	var audience *int64
	if a := req.GetAudienceId(); a != "" {
		id, ok := sdk.ParseID(a)
		exists := false
		if ok {
			if exists, err = adsdb.New(s.pool).AudienceOfAccountExists(ctx, adsdb.AudienceOfAccountExistsParams{AdAccountID: c.AdAccountID, ID: id}); err != nil {
				return nil, err
			}
		}
		if !exists {
			e := sdk.NotFound("Custom audience " + a + " of the campaign's ad account")
			e.Field = "audience_id"
			return nil, e
		}
		audience = &id
	}
	status := req.GetStatus()
	if status == "" {
		status = statusActive
	}
	row, err := adsdb.New(s.pool).InsertAd(ctx, adsdb.InsertAdParams{AdAccountID: c.AdAccountID, CampaignID: c.ID, Name: req.GetName(),
		Status: status, Title: cr.GetTitle(), Body: cr.GetBody(), LinkUrl: cr.GetLinkUrl(), PageID: cr.GetPageId(), AudienceID: audience})
	if err != nil {
		return nil, err
	}
	return &adsv1.CreatedResponse{Id: sdk.FormatID(row.ID)}, nil
}

func (s *service) listAds(ctx context.Context, call *sdk.Call, req *adsv1.ListAdsRequest) (*adsv1.ListAdsResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	c, err := s.ownedCampaign(ctx, call, req.GetCampaignId())
	if err != nil {
		return nil, err
	}
	q := adsdb.New(s.pool)
	var rows []adsdb.AdsAd
	if w.Before != 0 {
		rows, err = q.AdsBefore(ctx, adsdb.AdsBeforeParams{AdAccountID: c.AdAccountID, CampaignID: c.ID, Before: w.Before, Lim: w.Fetch()})
	} else {
		rows, err = q.AdsAfter(ctx, adsdb.AdsAfterParams{AdAccountID: c.AdAccountID, CampaignID: c.ID, After: w.After, Lim: w.Fetch()})
	}
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(a adsdb.AdsAd) int64 { return a.ID })
	res := &adsv1.ListAdsResponse{Data: make([]*adsv1.Ad, len(rows))}
	paging.Set(res)
	for i, r := range rows {
		res.Data[i] = &adsv1.Ad{Id: sdk.FormatID(r.ID), CampaignId: sdk.FormatID(r.CampaignID), Name: r.Name, Status: r.Status,
			Creative:   &adsv1.AdCreative{Title: r.Title, Body: r.Body, LinkUrl: r.LinkUrl, PageId: r.PageID},
			AudienceId: optionalID(r.AudienceID), CreatedTime: rfc3339(r.CreatedAt)}
	}
	return res, nil
}

// serveSponsoredAd picks the signed-in person's sponsored item and counts
// the impression (the ServeAd query says how it picks).
func (s *service) serveSponsoredAd(ctx context.Context, call *sdk.Call, _ *adsv1.ServeSponsoredAdRequest) (*adsv1.SponsoredAd, error) {
	row, err := adsdb.New(s.pool).ServeAd(ctx, adsdb.ServeAdParams{Day: day(s.now()), UserHash: userHash(call.Principal().UserID), Cpm: s.price()})
	if errors.Is(err, pgx.ErrNoRows) {
		return &adsv1.SponsoredAd{}, nil
	}
	if err != nil {
		return nil, err
	}
	return &adsv1.SponsoredAd{AdId: sdk.FormatID(row.ID), Title: row.Title, Body: row.Body, LinkUrl: row.LinkUrl, PageId: row.PageID}, nil
}

// price is the sandbox price per thousand impressions.
func (s *service) price() int64 {
	if s.cpm > 0 {
		return s.cpm
	}
	return SandboxCPM
}

// clickAd counts the signed-in person's click on an ad that could be
// served to them: not deleted, and they are in its audience (if any).
func (s *service) clickAd(ctx context.Context, call *sdk.Call, req *adsv1.ClickAdRequest) (*adsv1.SuccessResponse, error) {
	notFound := sdk.NotFound("Ad " + req.GetAdId())
	id, ok := sdk.ParseID(req.GetAdId())
	if !ok {
		return nil, notFound
	}
	q := adsdb.New(s.pool)
	ad, err := q.GetAd(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && ad.Status == statusDeleted {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	who := userHash(call.Principal().UserID)
	if ad.AudienceID != nil {
		in, err := q.InAudience(ctx, adsdb.InAudienceParams{AdAccountID: ad.AdAccountID, AudienceID: *ad.AudienceID, UserHash: who})
		if err != nil {
			return nil, err
		}
		if !in {
			return nil, notFound
		}
	}
	now := s.now()
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := adsdb.New(tx)
		if err := q.CountClick(ctx, adsdb.CountClickParams{AdAccountID: ad.AdAccountID, AdID: ad.ID, Day: day(now), CampaignID: ad.CampaignID}); err != nil {
			return err
		}
		return q.InsertClick(ctx, adsdb.InsertClickParams{AdAccountID: ad.AdAccountID, AdID: ad.ID, UserHash: who, ClickedAt: timestamptz(now)})
	})
	if err != nil {
		return nil, err
	}
	return &adsv1.SuccessResponse{Success: true}, nil
}

func (s *service) getAdInsights(ctx context.Context, call *sdk.Call, req *adsv1.GetAdInsightsRequest) (*adsv1.AdInsightsResponse, error) {
	ad, err := s.ownedAd(ctx, call, req.GetAdId())
	if err != nil {
		return nil, err
	}
	q := adsdb.New(s.pool)
	t, err := q.AdTotals(ctx, adsdb.AdTotalsParams{AdAccountID: ad.AdAccountID, AdID: ad.ID})
	if err != nil {
		return nil, err
	}
	return &adsv1.AdInsightsResponse{Data: []*adsv1.AdInsights{insights(sdk.FormatID(ad.ID), t.Impressions, t.Clicks, t.Conversions, s.price())}}, nil
}

// insights renders an ad's counts as Meta's insights do (decimal strings):
// ctr is clicks per hundred impressions, spend the impressions at cpm in
// major units (two decimals, the currencies of sandbox accounts).
func insights(adID string, impressions, clicks, conversions, cpm int64) *adsv1.AdInsights {
	ctr := 0.0
	if impressions > 0 {
		ctr = float64(clicks) * 100 / float64(impressions)
	}
	return &adsv1.AdInsights{AdId: adID, Impressions: strconv.FormatInt(impressions, 10), Clicks: strconv.FormatInt(clicks, 10),
		Ctr: strconv.FormatFloat(ctr, 'f', -1, 64), Spend: fmt.Sprintf("%.2f", float64(impressions*cpm)/1000/100),
		Conversions: strconv.FormatInt(conversions, 10)}
}
