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

	extmsgv1 "github.com/svcplatform/svc/gen/svc/extmsg/v1"
	"github.com/svcplatform/svc/plugins/extmsg/internal/extmsgdb"
	"github.com/svcplatform/svc/plugins/internal/appnames"
	"github.com/svcplatform/svc/plugins/internal/msgtemplate"
	"github.com/svcplatform/svc/sdk"
)

// StatusConnected is the status of an account after embedded signup.
const StatusConnected = "connected"

type service struct {
	pool *pgxpool.Pool
}

func (s *service) register(p *sdk.Plugin) {
	m := extmsgv1.File_svc_extmsg_v1_extmsg_proto.Services().ByName("ExtmsgService").Methods()
	sdk.Handle(p, m.ByName("EmbeddedSignup"), s.embeddedSignup)
	sdk.Handle(p, m.ByName("ListTemplates"), s.listTemplates)
	sdk.Handle(p, m.ByName("CreateTemplate"), s.createTemplate)
	sdk.Handle(p, m.ByName("ApproveTemplate"), s.approveTemplate)
	sdk.Handle(p, m.ByName("SubmitTemplate"), s.submitTemplate)
	sdk.Handle(p, m.ByName("ListTemplateQueue"), s.listTemplateQueue)
	sdk.Handle(p, m.ByName("DecideTemplate"), s.decideTemplate)
	sdk.Handle(p, m.ByName("SendMessage"), s.sendMessage)
	sdk.Handle(p, m.ByName("ListConversations"), s.listConversations)
	sdk.Handle(p, m.ByName("ListMessages"), s.listMessages)
	sdk.Handle(p, m.ByName("UserWrite"), s.userWrite)
	sdk.Handle(p, m.ByName("UserThreads"), s.userThreads)
	sdk.Handle(p, m.ByName("UserThread"), s.userThread)
	sdk.Handle(p, m.ByName("MarkThreadRead"), s.markThreadRead)
	sdk.OnUserLeft(p, s.userLeft)
}

// embeddedSignup connects an account of the business the request names to
// the app. The gateway has checked that the caller is an admin of the
// business (business_role) and may grant to the app (a user token of that
// app, or the user's session).
func (s *service) embeddedSignup(ctx context.Context, call *sdk.Call, req *extmsgv1.EmbeddedSignupRequest) (*extmsgv1.EmbeddedSignupResponse, error) {
	name := strings.TrimSpace(req.GetDisplayName())
	if name == "" || strings.ContainsRune(name, 0) {
		return nil, sdk.Invalid("displayName", "Invalid parameter: displayName must be text of 1 to 256 characters.")
	}
	app, err := call.Host().AppInfo(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	if !app.Exists {
		return nil, sdk.NotFound("App " + req.GetAppId())
	}
	row, err := extmsgdb.New(s.pool).UpsertAccount(ctx, extmsgdb.UpsertAccountParams{BusinessID: req.GetBusinessId(),
		AppID: req.GetAppId(), DisplayName: name})
	if err != nil {
		return nil, err
	}
	return &extmsgv1.EmbeddedSignupResponse{AccountId: sdk.FormatID(row.ID), Status: row.Status, PhoneNumber: row.PhoneNumber}, nil
}

// account reads a messaging account the caller may act on: one of a
// business on which the caller has a role, as the gateway decides (Host
// BusinessAccess), and for a user token one connected to the token's app.
func (s *service) account(ctx context.Context, call *sdk.Call, id string) (extmsgdb.ExtmsgAccount, error) {
	n, ok := sdk.ParseID(id)
	if !ok {
		return extmsgdb.ExtmsgAccount{}, accountNotFound(id)
	}
	row, err := extmsgdb.New(s.pool).GetAccount(ctx, n)
	p := call.Principal()
	if errors.Is(err, pgx.ErrNoRows) {
		return row, accountNotFound(id)
	}
	if err != nil {
		return row, err
	}
	err = call.Host().BusinessAccess(ctx, sdk.BusinessQuery{BusinessID: row.BusinessID, UserID: p.UserID,
		Need: sdk.BusinessRoleEmployee})
	if errors.Is(err, sdk.ErrBusinessRefused) {
		return row, accountNotFound(id)
	}
	if err != nil {
		return row, err
	}
	if p.Kind != sdk.TokenKindSession && p.AppID != row.AppID {
		return row, sdk.Errorf(http.StatusForbidden, 10, 0, "Messaging account %s is connected to another app; use a token of that app.", id)
	}
	return row, nil
}

func (s *service) listTemplates(ctx context.Context, call *sdk.Call, req *extmsgv1.ListTemplatesRequest) (*extmsgv1.ListTemplatesResponse, error) {
	acct, err := s.account(ctx, call, req.GetAccountId())
	if err != nil {
		return nil, err
	}
	rows, err := extmsgdb.New(s.pool).ListAccountTemplates(ctx, acct.ID)
	if err != nil {
		return nil, err
	}
	res := &extmsgv1.ListTemplatesResponse{Data: make([]*extmsgv1.Template, len(rows))}
	for i, r := range rows {
		res.Data[i] = templateProto(r)
	}
	return res, nil
}

// createTemplate creates a draft, or edits the account's template of that
// name (back to draft; the same definition again changes nothing).
func (s *service) createTemplate(ctx context.Context, call *sdk.Call, req *extmsgv1.CreateTemplateRequest) (*extmsgv1.Template, error) {
	if !msgtemplate.ValidName(req.GetName()) {
		return nil, sdk.Invalid("name", "Invalid parameter: name must be 1 to %d lower-case letters, digits and _.", msgtemplate.MaxName)
	}
	params := req.GetParams()
	if params == nil {
		params = []string{}
	}
	if field, err := msgtemplate.CheckDefinition(req.GetBody(), params); err != nil {
		return nil, sdk.Invalid(field, "Invalid parameter: %s: %v.", field, err)
	}
	acct, err := s.account(ctx, call, req.GetAccountId())
	if err != nil {
		return nil, err
	}
	var row extmsgdb.ExtmsgTemplate
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := extmsgdb.New(tx)
		cur, err := q.LockTemplate(ctx, extmsgdb.LockTemplateParams{AccountID: acct.ID, Name: req.GetName()})
		if errors.Is(err, pgx.ErrNoRows) {
			row, err = q.InsertTemplate(ctx, extmsgdb.InsertTemplateParams{AccountID: acct.ID, Name: req.GetName(),
				Body: req.GetBody(), Params: params, Status: string(msgtemplate.Draft)})
			if errors.Is(err, pgx.ErrNoRows) {
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
		next, err := msgtemplate.Next(msgtemplate.Status(cur.Status), msgtemplate.Edit, false)
		if err != nil {
			return errLifecycle(msgtemplate.Explain(msgtemplate.Status(cur.Status), msgtemplate.Edit, false))
		}
		row, err = q.EditTemplate(ctx, extmsgdb.EditTemplateParams{AccountID: acct.ID, Name: cur.Name, Body: req.GetBody(),
			Params: params, Status: string(next)})
		return err
	})
	if err != nil {
		return nil, err
	}
	return templateProto(row), nil
}

func (s *service) approveTemplate(ctx context.Context, call *sdk.Call, req *extmsgv1.TemplateActionRequest) (*extmsgv1.Template, error) {
	return s.templateStep(ctx, call, req, msgtemplate.Approve)
}

func (s *service) submitTemplate(ctx context.Context, call *sdk.Call, req *extmsgv1.TemplateActionRequest) (*extmsgv1.Template, error) {
	return s.templateStep(ctx, call, req, msgtemplate.Submit)
}

// templateStep takes an app's step (approve, submit) on a template, as the
// lifecycle allows for the mode of the account's app.
func (s *service) templateStep(ctx context.Context, call *sdk.Call, req *extmsgv1.TemplateActionRequest, action msgtemplate.Action) (*extmsgv1.Template, error) {
	acct, err := s.account(ctx, call, req.GetAccountId())
	if err != nil {
		return nil, err
	}
	app, err := call.Host().AppInfo(ctx, acct.AppID)
	if err != nil {
		return nil, err
	}
	var row extmsgdb.ExtmsgTemplate
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := extmsgdb.New(tx)
		cur, err := q.LockTemplate(ctx, extmsgdb.LockTemplateParams{AccountID: acct.ID, Name: req.GetName()})
		if errors.Is(err, pgx.ErrNoRows) {
			return errUnknownTemplate(req.GetName())
		}
		if err != nil {
			return err
		}
		from := msgtemplate.Status(cur.Status)
		next, err := msgtemplate.Next(from, action, app.Live)
		if err != nil {
			return errLifecycle(msgtemplate.Explain(from, action, app.Live))
		}
		row, err = q.SetTemplateStatus(ctx, extmsgdb.SetTemplateStatusParams{AccountID: acct.ID, Name: cur.Name,
			Status: string(next), Submitted: action == msgtemplate.Submit})
		return err
	})
	if err != nil {
		return nil, err
	}
	return templateProto(row), nil
}

// listTemplateQueue lists the templates waiting for review, oldest
// submission first.
func (s *service) listTemplateQueue(ctx context.Context, call *sdk.Call, req *extmsgv1.ListTemplateQueueRequest) (*extmsgv1.ListTemplateQueueResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	q := extmsgdb.New(s.pool)
	var rows []extmsgdb.QueueAfterRow
	if w.Before != 0 {
		var before []extmsgdb.QueueBeforeRow
		before, err = q.QueueBefore(ctx, extmsgdb.QueueBeforeParams{Before: &w.Before, Lim: w.Fetch()})
		for _, r := range before {
			rows = append(rows, extmsgdb.QueueAfterRow(r))
		}
	} else {
		rows, err = q.QueueAfter(ctx, extmsgdb.QueueAfterParams{After: &w.After, Lim: w.Fetch()})
	}
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(r extmsgdb.QueueAfterRow) int64 { return *r.Submission })
	res := &extmsgv1.ListTemplateQueueResponse{Data: make([]*extmsgv1.QueuedTemplate, len(rows))}
	paging.Set(res)
	names := appnames.New(call)
	for i, r := range rows {
		name, err := names.Of(ctx, r.AppID)
		if err != nil {
			return nil, err
		}
		res.Data[i] = &extmsgv1.QueuedTemplate{Id: sdk.FormatID(r.ID), AccountId: sdk.FormatID(r.AccountID), BusinessId: r.BusinessID,
			AppId: r.AppID, AppName: name, Name: r.Name, Body: r.Body, Params: r.Params, Status: r.Status, SubmittedAt: rfc3339(r.SubmittedAt)}
	}
	return res, nil
}

// decideTemplate records a staff decision on a template under review.
func (s *service) decideTemplate(ctx context.Context, call *sdk.Call, req *extmsgv1.DecideTemplateRequest) (*extmsgv1.DecideTemplateResponse, error) {
	var action msgtemplate.Action
	switch req.GetDecision() {
	case "approve":
		action = msgtemplate.StaffApprove
	case "reject":
		action = msgtemplate.StaffReject
		if strings.TrimSpace(req.GetReason()) == "" {
			return nil, sdk.Invalid("reason", "Invalid parameter: reason is required to reject a template.")
		}
	default:
		return nil, sdk.Invalid("decision", "Invalid parameter: decision must be approve or reject.")
	}
	if strings.ContainsRune(req.GetReason(), 0) {
		return nil, sdk.Invalid("reason", "Invalid parameter: reason must not contain the NUL character.")
	}
	id, ok := sdk.ParseID(req.GetId())
	if !ok {
		return nil, templateNotFound(req.GetId())
	}
	var row extmsgdb.ExtmsgTemplate
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := extmsgdb.New(tx)
		cur, err := q.LockTemplateByID(ctx, id)
		if errors.Is(err, pgx.ErrNoRows) {
			return templateNotFound(req.GetId())
		}
		if err != nil {
			return err
		}
		from := msgtemplate.Status(cur.Status)
		// Staff rows hold in either mode; live is what a queue implies.
		next, err := msgtemplate.Next(from, action, true)
		if err != nil {
			return errLifecycle(msgtemplate.Explain(from, action, true))
		}
		reason := ""
		if action == msgtemplate.StaffReject {
			reason = req.GetReason()
		}
		staff := call.Principal().UserID
		row, err = q.DecideTemplate(ctx, extmsgdb.DecideTemplateParams{AccountID: cur.AccountID, Name: cur.Name, Status: string(next),
			RejectionReason: reason, DecidedBy: &staff})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &extmsgv1.DecideTemplateResponse{Template: &extmsgv1.DecidedTemplate{Id: sdk.FormatID(row.ID), AccountId: sdk.FormatID(row.AccountID),
		Name: row.Name, Status: row.Status, RejectionReason: row.RejectionReason, DecidedAt: rfc3339(row.DecidedAt)}}, nil
}

func templateProto(r extmsgdb.ExtmsgTemplate) *extmsgv1.Template {
	params := r.Params
	if params == nil {
		params = []string{}
	}
	return &extmsgv1.Template{Id: sdk.FormatID(r.ID), AccountId: sdk.FormatID(r.AccountID), Name: r.Name, Body: r.Body, Params: params,
		Status: r.Status, RejectionReason: r.RejectionReason}
}

// errLifecycle: a template step the lifecycle does not allow now (CONTRACT
// §3, 2018305, as svcchat answers it).
func errLifecycle(msg string) *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusConflict, Code: 10, Subcode: 2018305, Type: sdk.TypeMessaging, Message: msg}
}

// errUnknownTemplate: CONTRACT §3 "template does not exist", 132001.
func errUnknownTemplate(name string) *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusNotFound, Code: 132001, Type: sdk.TypeMessaging,
		Message: "Template " + name + " does not exist for this account.", Field: "name"}
}

func accountNotFound(id string) error  { return sdk.NotFound("Messaging account " + id) }
func templateNotFound(id string) error { return sdk.NotFound("Template " + id) }

func rfc3339(t pgtype.Timestamptz) string {
	if !t.Valid {
		return ""
	}
	return t.Time.UTC().Format(time.RFC3339)
}
