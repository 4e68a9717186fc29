package main

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	lensesv1 "github.com/svcplatform/svc/gen/svc/lenses/v1"
	"github.com/svcplatform/svc/plugins/lenses/internal/lensesdb"
	"github.com/svcplatform/svc/sdk"
)

// product is the app product that makes lenses.
const product = "lenses"

type service struct {
	pool *pgxpool.Pool
}

// listLenses is the chat app's carousel: approved lenses only.
func (s *service) listLenses(ctx context.Context, _ *sdk.Call, _ *lensesv1.ListLensesRequest) (*lensesv1.ListLensesResponse, error) {
	rows, err := lensesdb.New(s.pool).ListApprovedLenses(ctx)
	if err != nil {
		return nil, err
	}
	res := &lensesv1.ListLensesResponse{Data: make([]*lensesv1.CarouselLens, len(rows))}
	for i, r := range rows {
		res.Data[i] = &lensesv1.CarouselLens{Id: sdk.FormatID(r.ID), Name: r.Name, IconUrl: r.IconUrl}
	}
	return res, nil
}

// listAppLenses lists an app's lenses; the gateway checked the caller's
// standing on the app.
func (s *service) listAppLenses(ctx context.Context, _ *sdk.Call, req *lensesv1.ListAppLensesRequest) (*lensesv1.ListAppLensesResponse, error) {
	rows, err := lensesdb.New(s.pool).ListAppLenses(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	res := &lensesv1.ListAppLensesResponse{Data: make([]*lensesv1.Lens, len(rows))}
	for i, r := range rows {
		res.Data[i] = lensProto(r)
	}
	return res, nil
}

// createLens makes a draft for an app with the lenses product.
func (s *service) createLens(ctx context.Context, call *sdk.Call, req *lensesv1.CreateLensRequest) (*lensesv1.Lens, error) {
	if err := checkLens(req.GetName(), req.GetIconUrl()); err != nil {
		return nil, err
	}
	if err := s.checkProduct(ctx, call, req.GetAppId()); err != nil {
		return nil, err
	}
	row, err := lensesdb.New(s.pool).CreateLens(ctx, lensesdb.CreateLensParams{AppID: req.GetAppId(),
		Name: req.GetName(), IconUrl: req.GetIconUrl()})
	if err != nil {
		return nil, err
	}
	return lensProto(row), nil
}

// updateLens applies the partner's step to a lens of the app.
func (s *service) updateLens(ctx context.Context, call *sdk.Call, req *lensesv1.UpdateLensRequest) (*lensesv1.Lens, error) {
	action := Action(req.GetAction())
	if action == Edit {
		if err := checkLens(req.GetName(), req.GetIconUrl()); err != nil {
			return nil, err
		}
	}
	if err := s.checkProduct(ctx, call, req.GetAppId()); err != nil {
		return nil, err
	}
	return s.step(ctx, req.GetLensId(), req.GetAppId(), func(cur lensesdb.LensesLense) (lensesdb.SetLensParams, error) {
		to, err := next(Status(cur.Status), action)
		if err != nil {
			return lensesdb.SetLensParams{}, err
		}
		set := lensesdb.SetLensParams{ID: cur.ID, Name: cur.Name, IconUrl: cur.IconUrl, Status: string(to)}
		if action == Edit {
			set.Name, set.IconUrl = req.GetName(), req.GetIconUrl()
		}
		return set, nil
	})
}

// listLensQueue lists the lenses in review, oldest first, for staff.
func (s *service) listLensQueue(ctx context.Context, call *sdk.Call, req *lensesv1.ListLensQueueRequest) (*lensesv1.ListLensQueueResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	q := lensesdb.New(s.pool)
	var rows []lensesdb.LensesLense
	switch {
	case w.After != 0:
		rows, err = q.LensQueueAfter(ctx, lensesdb.LensQueueAfterParams{Cursor: w.After, Lim: w.Fetch()})
	case w.Before != 0:
		rows, err = q.LensQueueBefore(ctx, lensesdb.LensQueueBeforeParams{Cursor: w.Before, Lim: w.Fetch()})
	default:
		rows, err = q.LensQueueFirst(ctx, w.Fetch())
	}
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(l lensesdb.LensesLense) int64 { return l.ID })
	res := &lensesv1.ListLensQueueResponse{Data: make([]*lensesv1.QueuedLens, len(rows))}
	paging.Set(res)
	names := map[string]string{}
	for i, r := range rows {
		name, ok := names[r.AppID]
		if !ok {
			app, err := call.Host().AppInfo(ctx, r.AppID)
			if err != nil {
				return nil, err
			}
			name, names[r.AppID] = app.Name, app.Name
		}
		res.Data[i] = &lensesv1.QueuedLens{Id: sdk.FormatID(r.ID), AppId: r.AppID, AppName: name, Name: r.Name,
			IconUrl: r.IconUrl, SubmittedAt: rfc3339(r.SubmittedAt)}
	}
	return res, nil
}

// decideLens records staff's decision on a lens in review.
func (s *service) decideLens(ctx context.Context, _ *sdk.Call, req *lensesv1.DecideLensRequest) (*lensesv1.Lens, error) {
	action := Action(req.GetDecision())
	reason := strings.TrimSpace(req.GetReason())
	if action == Reject && reason == "" {
		return nil, sdk.Invalid("reason", "Invalid parameter: reason is required to reject a lens.")
	}
	return s.step(ctx, req.GetId(), "", func(cur lensesdb.LensesLense) (lensesdb.SetLensParams, error) {
		to, err := next(Status(cur.Status), action)
		if err != nil {
			return lensesdb.SetLensParams{}, err
		}
		set := lensesdb.SetLensParams{ID: cur.ID, Name: cur.Name, IconUrl: cur.IconUrl, Status: string(to)}
		if action == Reject {
			set.RejectionReason = reason
		}
		return set, nil
	})
}

// step locks the lens id (of appID, unless appID is empty: staff) and
// writes what apply makes of it, in one transaction. A lens of another
// app does not exist for the caller.
func (s *service) step(ctx context.Context, id, appID string, apply func(lensesdb.LensesLense) (lensesdb.SetLensParams, error)) (*lensesv1.Lens, error) {
	n, ok := sdk.ParseID(id)
	if !ok {
		return nil, sdk.NotFound("Lens " + id)
	}
	var row lensesdb.LensesLense
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := lensesdb.New(tx)
		cur, err := q.LockLens(ctx, n)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && appID != "" && cur.AppID != appID) {
			return sdk.NotFound("Lens " + id)
		}
		if err != nil {
			return err
		}
		set, err := apply(cur)
		if err != nil {
			return err
		}
		row, err = q.SetLens(ctx, set)
		return err
	})
	if err != nil {
		return nil, err
	}
	return lensProto(row), nil
}

// checkProduct refuses an app without the lenses product, as a Page
// link without a product is refused (403, code 10, subcode 2018303).
func (s *service) checkProduct(ctx context.Context, call *sdk.Call, appID string) error {
	app, err := call.Host().AppInfo(ctx, appID)
	if err != nil {
		return err
	}
	if !app.Exists {
		return sdk.NotFound("App " + appID)
	}
	if !slices.Contains(app.Products, product) {
		return &sdk.Error{HTTPStatus: http.StatusForbidden, Code: 10, Subcode: 2018303, Type: sdk.TypeOAuth,
			Message: "The app does not have the lenses product; add it to the app to make lenses."}
	}
	return nil
}

// iconTypes are the image types an icon may be.
var iconTypes = []string{"png", "jpeg", "gif", "webp", "svg+xml"}

// checkLens checks a lens's name and icon. The icon is a data: URL of an
// image, so that it shows wherever a lens does with no file server and no
// third-party fetch (the chat app's and the console's pages load images
// from themselves and data: URLs only), and never a script URL.
func checkLens(name, icon string) error {
	if strings.TrimSpace(name) == "" {
		return sdk.Invalid("name", "Invalid parameter: name must not be blank.")
	}
	rest, ok := strings.CutPrefix(icon, "data:image/")
	kind, _, _ := strings.Cut(rest, ",")
	kind, _, _ = strings.Cut(kind, ";")
	if !ok || !slices.Contains(iconTypes, kind) || !strings.Contains(rest, ",") {
		return sdk.Invalid("icon_url", "Invalid parameter: icon_url must be a data: URL of a PNG, JPEG, GIF, WebP or SVG image.")
	}
	return nil
}

func lensProto(r lensesdb.LensesLense) *lensesv1.Lens {
	return &lensesv1.Lens{Id: sdk.FormatID(r.ID), AppId: r.AppID, Name: r.Name, IconUrl: r.IconUrl, Status: r.Status,
		RejectionReason: r.RejectionReason, SubmittedAt: rfc3339(r.SubmittedAt), DecidedAt: rfc3339(r.DecidedAt)}
}

func rfc3339(t pgtype.Timestamptz) string {
	if !t.Valid {
		return ""
	}
	return t.Time.UTC().Format(time.RFC3339)
}
