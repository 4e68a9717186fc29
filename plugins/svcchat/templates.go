package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/plugins/internal/appnames"
	"github.com/svcplatform/svc/plugins/internal/msgtemplate"
	"github.com/svcplatform/svc/plugins/svcchat/internal/svcchatdb"
	"github.com/svcplatform/svc/sdk"
)

// appTemplates reads an app from the gateway and brings its stored
// templates in line with its platformConfig.svcchat.templates, then
// returns the app and the templates it may use: its own, then the
// platform defaults it does not override, by name.
func (s *service) appTemplates(ctx context.Context, call *sdk.Call, appID string) (*sdk.AppInfo, []Template, error) {
	app, err := call.Host().AppInfo(ctx, appID)
	if err != nil {
		return nil, nil, err
	}
	if !app.Exists {
		return nil, nil, sdk.NotFound("App " + appID)
	}
	rows, err := s.syncConfig(ctx, call, appID, app)
	if err != nil {
		return nil, nil, err
	}
	if app.Live && slices.ContainsFunc(rows, selfApproved) {
		if rows, err = s.reviewSelfApproved(ctx, appID); err != nil {
			return nil, nil, err
		}
	}
	out := make([]Template, 0, len(rows)+len(defaultTemplates))
	for _, r := range rows {
		out = append(out, templateFromRow(r))
	}
	for _, d := range defaultTemplates {
		if !slices.ContainsFunc(rows, func(r svcchatdb.SvcchatTemplate) bool { return r.Name == d.Name }) {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return app, out, nil
}

// selfApproved tells whether the app approved r itself, in development:
// approved with no staff decision.
func selfApproved(r svcchatdb.SvcchatTemplate) bool {
	return TemplateStatus(r.Status) == StatusApproved && !r.DecidedAt.Valid
}

// reviewSelfApproved sends the templates a live app approved itself in
// development to staff review (CONTRACT §15), through the lifecycle table
// (ActionGoLive), as submissions: each takes its place at the end of the
// staff queue. It returns the app's stored templates. Every read of a live
// app's templates runs it when there is any such template, so a send never
// finds one approved; AppWentLive runs it at once, for the queue.
func (s *service) reviewSelfApproved(ctx context.Context, appID string) ([]svcchatdb.SvcchatTemplate, error) {
	var rows []svcchatdb.SvcchatTemplate
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := svcchatdb.New(tx)
		mine, err := q.LockSelfApprovedTemplates(ctx, appID)
		if err != nil {
			return err
		}
		for _, r := range mine {
			next, err := NextTemplateStatus(TemplateStatus(r.Status), ActionGoLive, true)
			if err != nil {
				return err
			}
			if _, err := q.SetTemplateStatus(ctx, svcchatdb.SetTemplateStatusParams{AppID: r.AppID, Name: r.Name,
				Status: string(next), Submitted: true}); err != nil {
				return err
			}
		}
		rows, err = q.ListAppTemplates(ctx, appID)
		return err
	})
	return rows, err
}

// appWentLive is the gateway telling svcchat that an app went live: its
// self-approved templates go to review now (appTemplates), and it answers
// the app's templates.
func (s *service) appWentLive(ctx context.Context, call *sdk.Call, req *svcchatv1.AppWentLiveRequest) (*svcchatv1.ListTemplatesResponse, error) {
	return s.listTemplates(ctx, call, &svcchatv1.ListTemplatesRequest{AppId: req.GetAppId()})
}

// templateFor finds the template an app sends by name (132001 when none).
func (s *service) templateFor(ctx context.Context, call *sdk.Call, appID, name string) (Template, error) {
	_, all, err := s.appTemplates(ctx, call, appID)
	if err != nil {
		return Template{}, err
	}
	for _, t := range all {
		if t.Name == name {
			return t, nil
		}
	}
	return Template{}, errUnknownTemplate(name)
}

func templateFromRow(r svcchatdb.SvcchatTemplate) Template {
	return Template{Name: r.Name, Body: r.Body, Params: r.Params, Status: TemplateStatus(r.Status)}
}

// syncConfig makes the app's stored config templates match its
// platformConfig: new entries are stored as drafts, changed ones are
// edited (back to draft, per the lifecycle), removed ones are deleted. It
// returns the app's stored templates. Nothing is written when nothing
// changed, which is the common case.
func (s *service) syncConfig(ctx context.Context, call *sdk.Call, appID string, app *sdk.AppInfo) ([]svcchatdb.SvcchatTemplate, error) {
	want, bad := configTemplates(app.PlatformConfig)
	for name, reason := range bad {
		call.Logger().Warn("platformConfig template ignored", "app_id", appID, "template", name, "reason", reason)
	}
	rows, err := svcchatdb.New(s.pool).ListAppTemplates(ctx, appID)
	if err != nil {
		return nil, err
	}
	if !configDiffers(rows, want) {
		return rows, nil
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// One sync of an app at a time; a second one finds the work done.
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('svcchat.templates:' || $1, 0))", appID); err != nil {
			return err
		}
		q := svcchatdb.New(tx)
		if rows, err = q.ListAppTemplates(ctx, appID); err != nil {
			return err
		}
		for _, t := range want {
			i := slices.IndexFunc(rows, func(r svcchatdb.SvcchatTemplate) bool { return r.Name == t.Name })
			if i < 0 {
				if _, err := q.InsertTemplate(ctx, svcchatdb.InsertTemplateParams{AppID: appID, Name: t.Name, Body: t.Body,
					Params: t.Params, Status: string(StatusDraft), Source: "config"}); err != nil {
					return err
				}
				continue
			}
			if r := rows[i]; r.Source != "config" || r.Body != t.Body || !slices.Equal(r.Params, t.Params) {
				if _, err := editTemplate(ctx, q, r, t.Body, t.Params, "config"); err != nil {
					return err
				}
			}
		}
		for _, r := range rows {
			if r.Source == "config" && !slices.ContainsFunc(want, func(t Template) bool { return t.Name == r.Name }) {
				if err := q.DeleteConfigTemplate(ctx, svcchatdb.DeleteConfigTemplateParams{AppID: appID, Name: r.Name}); err != nil {
					return err
				}
			}
		}
		rows, err = q.ListAppTemplates(ctx, appID)
		return err
	})
	return rows, err
}

// configDiffers tells whether the stored templates differ from the config.
func configDiffers(rows []svcchatdb.SvcchatTemplate, want []Template) bool {
	for _, t := range want {
		i := slices.IndexFunc(rows, func(r svcchatdb.SvcchatTemplate) bool { return r.Name == t.Name })
		if i < 0 || rows[i].Source != "config" || rows[i].Body != t.Body || !slices.Equal(rows[i].Params, t.Params) {
			return true
		}
	}
	for _, r := range rows {
		if r.Source == "config" && !slices.ContainsFunc(want, func(t Template) bool { return t.Name == r.Name }) {
			return true
		}
	}
	return false
}

// editTemplate gives a stored template a new definition; the lifecycle
// decides its status (draft).
func editTemplate(ctx context.Context, q *svcchatdb.Queries, r svcchatdb.SvcchatTemplate, body string, params []string, source string) (svcchatdb.SvcchatTemplate, error) {
	next, err := NextTemplateStatus(TemplateStatus(r.Status), ActionEdit, false)
	if err != nil {
		return r, err
	}
	return q.EditTemplate(ctx, svcchatdb.EditTemplateParams{AppID: r.AppID, Name: r.Name, Body: body, Params: params,
		Status: string(next), Source: source})
}

func templateProto(t Template, rejection string) *svcchatv1.Template {
	params := t.Params
	if params == nil {
		params = []string{}
	}
	return &svcchatv1.Template{Name: t.Name, Body: t.Body, Params: params, Status: string(t.Status), RejectionReason: rejection}
}

// listTemplates lists the templates an app may send, a page at a time as
// every list is (CONTRACT §2): the platform's defaults first, then the
// app's templates in row id order, which is the order they were created
// (a submission renews the id: it moves the template last). The list is
// merged in memory (defaults, platformConfig's and the API's); a
// template's cursor is its row id, or its place among the defaults (1, 2,
// …, below every row id, which start at 3000000001), so cursors hold while
// templates are added.
func (s *service) listTemplates(ctx context.Context, call *sdk.Call, req *svcchatv1.ListTemplatesRequest) (*svcchatv1.ListTemplatesResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	_, all, err := s.appTemplates(ctx, call, req.GetAppId())
	if err != nil {
		return nil, err
	}
	rows, err := svcchatdb.New(s.pool).ListAppTemplates(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	type keyed struct {
		key int64
		t   *svcchatv1.Template
	}
	list := make([]keyed, 0, len(all))
	for _, t := range all {
		if t.Platform {
			at := slices.IndexFunc(defaultTemplates, func(d Template) bool { return d.Name == t.Name })
			list = append(list, keyed{int64(at) + 1, templateProto(t, "")})
			continue
		}
		i := slices.IndexFunc(rows, func(r svcchatdb.SvcchatTemplate) bool { return r.Name == t.Name })
		if i < 0 {
			return nil, fmt.Errorf("template %s of app %s has no row", t.Name, req.GetAppId())
		}
		list = append(list, keyed{rows[i].ID, templateProto(t, rows[i].RejectionReason)})
	}
	slices.SortFunc(list, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
	// The rows a query would fetch for w: up to Fetch after the cursor, or
	// before it nearest first.
	var fetched []keyed
	switch {
	case w.Before != 0:
		for i := len(list) - 1; i >= 0 && len(fetched) < int(w.Fetch()); i-- {
			if list[i].key < w.Before {
				fetched = append(fetched, list[i])
			}
		}
	default:
		for _, k := range list {
			if k.key > w.After && len(fetched) < int(w.Fetch()) {
				fetched = append(fetched, k)
			}
		}
	}
	page, paging := sdk.Page(w, fetched, func(k keyed) int64 { return k.key })
	res := &svcchatv1.ListTemplatesResponse{Data: make([]*svcchatv1.Template, len(page))}
	paging.Set(res)
	for i, k := range page {
		res.Data[i] = k.t
	}
	return res, nil
}

// createTemplate creates a draft, or edits the app's template of that name
// (back to draft; the same definition again changes nothing).
func (s *service) createTemplate(ctx context.Context, call *sdk.Call, req *svcchatv1.CreateTemplateRequest) (*svcchatv1.Template, error) {
	params := req.GetParams()
	if params == nil {
		params = []string{}
	}
	if field, err := checkDefinition(req.GetBody(), params); err != nil {
		return nil, sdk.Invalid(field, "Invalid parameter: %s: %v.", field, err)
	}
	app, _, err := s.appTemplates(ctx, call, req.GetAppId())
	if err != nil {
		return nil, err
	}
	if declared, _ := configTemplates(app.PlatformConfig); slices.ContainsFunc(declared, func(t Template) bool { return t.Name == req.GetName() }) {
		return nil, sdk.Invalid("name", "Invalid parameter: name: template %s is declared in the app's platformConfig.svcchat.templates; change it there.", req.GetName())
	}
	var row svcchatdb.SvcchatTemplate
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := svcchatdb.New(tx)
		cur, err := q.LockAppTemplate(ctx, svcchatdb.LockAppTemplateParams{AppID: req.GetAppId(), Name: req.GetName()})
		if errors.Is(err, pgx.ErrNoRows) {
			row, err = q.InsertTemplate(ctx, svcchatdb.InsertTemplateParams{AppID: req.GetAppId(), Name: req.GetName(),
				Body: req.GetBody(), Params: params, Status: string(StatusDraft), Source: "api"})
			if isUniqueViolation(err) {
				return errLifecycle("Template " + req.GetName() + " is being created by another request; retry.")
			}
			return err
		}
		if err != nil {
			return err
		}
		if cur.Body == req.GetBody() && slices.Equal(cur.Params, params) {
			row = cur
			return nil
		}
		row, err = editTemplate(ctx, q, cur, req.GetBody(), params, "api")
		return err
	})
	if err != nil {
		return nil, err
	}
	return templateProto(templateFromRow(row), row.RejectionReason), nil
}

// approveTemplate: a development-mode app approves its own draft.
func (s *service) approveTemplate(ctx context.Context, call *sdk.Call, req *svcchatv1.TemplateActionRequest) (*svcchatv1.Template, error) {
	return s.templateStep(ctx, call, req, ActionApprove)
}

// submitTemplate: a live app submits its draft to staff review.
func (s *service) submitTemplate(ctx context.Context, call *sdk.Call, req *svcchatv1.TemplateActionRequest) (*svcchatv1.Template, error) {
	return s.templateStep(ctx, call, req, ActionSubmit)
}

func (s *service) templateStep(ctx context.Context, call *sdk.Call, req *svcchatv1.TemplateActionRequest, action TemplateAction) (*svcchatv1.Template, error) {
	app, all, err := s.appTemplates(ctx, call, req.GetAppId())
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(all, func(t Template) bool { return t.Name == req.GetName() })
	if i < 0 {
		return nil, errUnknownTemplate(req.GetName())
	}
	if all[i].Platform {
		return nil, errLifecycle("Template " + req.GetName() + " is a platform template, approved for every app.")
	}
	var row svcchatdb.SvcchatTemplate
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := svcchatdb.New(tx)
		cur, err := q.LockAppTemplate(ctx, svcchatdb.LockAppTemplateParams{AppID: req.GetAppId(), Name: req.GetName()})
		if errors.Is(err, pgx.ErrNoRows) {
			return errUnknownTemplate(req.GetName())
		}
		if err != nil {
			return err
		}
		next, err := NextTemplateStatus(TemplateStatus(cur.Status), action, app.Live)
		if err != nil {
			return errLifecycle(lifecycleMessage(TemplateStatus(cur.Status), action, app.Live))
		}
		row, err = q.SetTemplateStatus(ctx, svcchatdb.SetTemplateStatusParams{AppID: cur.AppID, Name: cur.Name,
			Status: string(next), Submitted: action == ActionSubmit})
		return err
	})
	if err != nil {
		return nil, err
	}
	return templateProto(templateFromRow(row), row.RejectionReason), nil
}

// lifecycleMessage explains a refused lifecycle step to the developer.
func lifecycleMessage(from TemplateStatus, action TemplateAction, live bool) string {
	return msgtemplate.Explain(from, action, live)
}

// listTemplateQueue lists the templates waiting for review, oldest
// submission first.
func (s *service) listTemplateQueue(ctx context.Context, call *sdk.Call, req *svcchatv1.ListTemplateQueueRequest) (*svcchatv1.ListTemplateQueueResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	q := svcchatdb.New(s.pool)
	var rows []svcchatdb.SvcchatTemplate
	switch {
	case w.After != 0:
		rows, err = q.TemplateQueueAfter(ctx, svcchatdb.TemplateQueueAfterParams{Cursor: w.After, Lim: w.Fetch()})
	case w.Before != 0:
		rows, err = q.TemplateQueueBefore(ctx, svcchatdb.TemplateQueueBeforeParams{Cursor: w.Before, Lim: w.Fetch()})
	default:
		rows, err = q.TemplateQueueFirst(ctx, w.Fetch())
	}
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(t svcchatdb.SvcchatTemplate) int64 { return t.ID })
	res := &svcchatv1.ListTemplateQueueResponse{Data: make([]*svcchatv1.QueuedTemplate, len(rows))}
	paging.Set(res)
	names := appnames.New(call)
	for i, r := range rows {
		name, err := names.Of(ctx, r.AppID)
		if err != nil {
			return nil, err
		}
		res.Data[i] = &svcchatv1.QueuedTemplate{Id: sdk.FormatID(r.ID), AppId: r.AppID, AppName: name, Name: r.Name,
			Body: r.Body, Params: r.Params, Status: r.Status, SubmittedAt: rfc3339(r.SubmittedAt)}
	}
	return res, nil
}

// decideTemplate records a staff decision on a template under review.
func (s *service) decideTemplate(ctx context.Context, call *sdk.Call, req *svcchatv1.DecideTemplateRequest) (*svcchatv1.DecideTemplateResponse, error) {
	action := ActionStaffApprove
	if req.GetDecision() == "reject" {
		action = ActionStaffReject
		if req.GetReason() == "" {
			return nil, sdk.Invalid("reason", "Invalid parameter: reason is required to reject a template.")
		}
	}
	id, ok := sdk.ParseID(req.GetId())
	if !ok {
		return nil, sdk.NotFound("Template " + req.GetId())
	}
	var row svcchatdb.SvcchatTemplate
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := svcchatdb.New(tx)
		cur, err := q.LockTemplateByID(ctx, id)
		if errors.Is(err, pgx.ErrNoRows) {
			return sdk.NotFound("Template " + req.GetId())
		}
		if err != nil {
			return err
		}
		next, err := NextTemplateStatus(TemplateStatus(cur.Status), action, true)
		if err != nil {
			return errLifecycle("The template is " + cur.Status + ", not pending_review; there is nothing to decide.")
		}
		reason := ""
		if action == ActionStaffReject {
			reason = req.GetReason()
		}
		row, err = q.DecideTemplate(ctx, svcchatdb.DecideTemplateParams{AppID: cur.AppID, Name: cur.Name, Status: string(next),
			RejectionReason: reason, DecidedBy: call.Principal().UserID})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &svcchatv1.DecideTemplateResponse{Template: &svcchatv1.DecidedTemplate{Id: sdk.FormatID(row.ID), AppId: row.AppID,
		Name: row.Name, Status: row.Status, RejectionReason: row.RejectionReason, DecidedAt: rfc3339(row.DecidedAt)}}, nil
}

// isUniqueViolation tells whether err is PostgreSQL's unique_violation.
func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
