package main

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	wearablesv1 "github.com/svcplatform/svc/gen/svc/wearables/v1"
	"github.com/svcplatform/svc/plugins/wearables/internal/wearablesdb"
	"github.com/svcplatform/svc/sdk"
)

// The wearables portal (the console's Wearables tab of an app) reads an
// app's cards and the devices they reached. The gateway checked the
// caller's standing on the app; only the app's own cards are read.

func (s *service) listAppCards(ctx context.Context, _ *sdk.Call, req *wearablesv1.ListAppCardsRequest) (*wearablesv1.ListAppCardsResponse, error) {
	rows, err := wearablesdb.New(s.pool).AppCards(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	now := time.Now()
	res := &wearablesv1.ListAppCardsResponse{Data: make([]*wearablesv1.AppCard, len(rows))}
	for i, r := range rows {
		status := r.Status
		if status == string(Queued) && r.ExpiresAt.Valid && !r.ExpiresAt.Time.After(now) {
			status = string(Expired) // lapsed; the sweep has not marked it yet
		}
		c := &wearablesv1.AppCard{Id: strconv.FormatInt(r.ID, 10), UserId: r.UserID, Title: r.Title, Status: status,
			CreatedAt: rfc3339(r.CreatedAt), DeliveredAt: rfc3339(r.DeliveredAt), ConfirmedAt: rfc3339(r.ConfirmedAt)}
		if r.DeviceID != nil {
			c.DeviceId = strconv.FormatInt(*r.DeviceID, 10)
		}
		if r.ActionID != nil {
			c.ActionId = *r.ActionID
		}
		for _, a := range decodeActions(r.Actions) {
			c.Actions = append(c.Actions, &wearablesv1.CardAction{Id: a.ID, Label: a.Label})
		}
		res.Data[i] = c
	}
	return res, nil
}

func (s *service) listAppDevices(ctx context.Context, _ *sdk.Call, req *wearablesv1.ListAppDevicesRequest) (*wearablesv1.ListAppDevicesResponse, error) {
	rows, err := wearablesdb.New(s.pool).AppDevices(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	res := &wearablesv1.ListAppDevicesResponse{Data: make([]*wearablesv1.AppDevice, len(rows))}
	for i, r := range rows {
		res.Data[i] = &wearablesv1.AppDevice{Id: strconv.FormatInt(r.ID, 10), UserId: r.UserID, Simulated: r.Simulated,
			PairedAt: rfc3339(r.PairedAt), ReplacedAt: rfc3339(r.ReplacedAt), Cards: r.Cards}
	}
	return res, nil
}

func rfc3339(t pgtype.Timestamptz) string {
	if !t.Valid {
		return ""
	}
	return t.Time.UTC().Format(time.RFC3339)
}
