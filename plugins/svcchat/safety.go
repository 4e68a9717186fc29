package main

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	chatv1 "github.com/svcplatform/svc/gen/svc/chat/v1"
	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/internal/pipetx"
	"github.com/svcplatform/svc/plugins/svcchat/internal/svcchatdb"
	"github.com/svcplatform/svc/sdk"
)

// Trust and safety (CONTRACT §16): a person blocks Pages and people and
// reports Pages, people and messages; staff dismiss a report or restrict
// the Page it concerns, and lift restrictions. svcchat keeps the blocks of
// Pages, the reports and the restrictions, which its sends and its inbox
// check; the blocks of people are the chat plugin's, which its direct
// messages check, reached through the host as the signed-in user.

// The chat plugin's methods this file calls through the host.
const (
	blockUserProcedure          = "/svc.chat.v1.ChatService/BlockUser"
	unblockUserProcedure        = "/svc.chat.v1.ChatService/UnblockUser"
	listUserBlocksProcedure     = "/svc.chat.v1.ChatService/ListUserBlocks"
	getReceivedMessageProcedure = "/svc.chat.v1.ChatService/GetReceivedMessage"
)

// blocksLimit bounds each kind of block one list answers.
const blocksLimit = 1000

// directMessagePrefix starts the ids of the chat plugin's direct messages
// ("dm_"); svcchat's own start with "m_".
const directMessagePrefix = "dm_"

// Report kinds: what a report names.
const (
	reportPage    = "page"
	reportUser    = "user"
	reportMessage = "message"
)

// subject is what a block or a report names: its kind and id.
type subject struct {
	kind, id string
}

// parseSubject reads which one of the optional ids a block or a report
// names: exactly one must be given, else the refusal names the first
// field that is wrong (the second given, or the first of names when none
// is). names are the fields' JSON names, in the request's order, with the
// kind each stands for; ids holds each field's value or nil.
func parseSubject(names [][2]string, ids []*string) (subject, error) {
	var got subject
	for i, id := range ids {
		if id == nil {
			continue
		}
		if got.kind != "" {
			return subject{}, sdk.Invalid(names[i][0], "Invalid parameter: give exactly one of %s.", fieldList(names))
		}
		got = subject{kind: names[i][1], id: *id}
	}
	if got.kind == "" {
		return subject{}, sdk.Invalid(names[0][0], "Invalid parameter: give exactly one of %s.", fieldList(names))
	}
	return got, nil
}

// fieldList is "a and b" or "a, b and c".
func fieldList(names [][2]string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n[0]
	}
	if len(out) == 1 {
		return out[0]
	}
	return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1]
}

// blockFields and reportFields are the ids a block and a report may name.
var (
	blockFields  = [][2]string{{"pageId", reportPage}, {"userId", reportUser}}
	reportFields = [][2]string{{"pageId", reportPage}, {"userId", reportUser}, {"messageId", reportMessage}}
)

// block is the signed-in user blocking a Page or a person.
func (s *service) block(ctx context.Context, call *sdk.Call, req *svcchatv1.BlockRequest) (*svcchatv1.BlockRecord, error) {
	sub, err := parseSubject(blockFields, []*string{req.PageId, req.UserId})
	if err != nil {
		return nil, err
	}
	if sub.kind == reportUser {
		var b chatv1.UserBlock
		if err := call.Host().Call(ctx, blockUserProcedure, &chatv1.BlockUserRequest{UserId: sub.id}, &b); err != nil {
			return nil, err
		}
		return &svcchatv1.BlockRecord{UserId: &b.UserId, CreatedAt: b.CreatedAt}, nil
	}
	page, err := call.Host().PageAccess(ctx, sdk.PageQuery{PageID: sub.id})
	if err != nil {
		return nil, err
	}
	if !page.Exists {
		return nil, sdk.NotFound("Page " + sub.id)
	}
	q := svcchatdb.New(s.pool)
	arg := svcchatdb.BlockPageParams{PageID: sub.id, UserID: call.Principal().UserID}
	at, err := q.BlockPage(ctx, arg)
	if errors.Is(err, pgx.ErrNoRows) {
		// The same block made at the same moment by another call, committed
		// after this statement's snapshot: it is there now.
		at, err = q.BlockPage(ctx, arg)
	}
	if err != nil {
		return nil, err
	}
	return &svcchatv1.BlockRecord{PageId: &sub.id, CreatedAt: rfc3339(at)}, nil
}

// unblock ends one of the signed-in user's blocks; one that does not exist
// changes nothing.
func (s *service) unblock(ctx context.Context, call *sdk.Call, req *svcchatv1.BlockRequest) (*svcchatv1.UnblockResponse, error) {
	sub, err := parseSubject(blockFields, []*string{req.PageId, req.UserId})
	if err != nil {
		return nil, err
	}
	if sub.kind == reportUser {
		var res chatv1.UnblockUserResponse
		if err := call.Host().Call(ctx, unblockUserProcedure, &chatv1.BlockUserRequest{UserId: sub.id}, &res); err != nil {
			return nil, err
		}
		return &svcchatv1.UnblockResponse{Success: true}, nil
	}
	err = svcchatdb.New(s.pool).UnblockPage(ctx, svcchatdb.UnblockPageParams{PageID: sub.id, UserID: call.Principal().UserID})
	if err != nil {
		return nil, err
	}
	return &svcchatv1.UnblockResponse{Success: true}, nil
}

// listBlocks lists the signed-in user's blocks of Pages (here) and people
// (the chat plugin's), newest first.
func (s *service) listBlocks(ctx context.Context, call *sdk.Call, _ *svcchatv1.ListBlocksRequest) (*svcchatv1.ListBlocksResponse, error) {
	rows, err := svcchatdb.New(s.pool).ListPageBlocks(ctx, svcchatdb.ListPageBlocksParams{UserID: call.Principal().UserID, Lim: blocksLimit})
	if err != nil {
		return nil, err
	}
	var people chatv1.ListUserBlocksResponse
	if err := call.Host().Call(ctx, listUserBlocksProcedure, &chatv1.ListUserBlocksRequest{}, &people); err != nil {
		return nil, err
	}
	out := &svcchatv1.ListBlocksResponse{Data: make([]*svcchatv1.BlockRecord, 0, len(rows)+len(people.GetData()))}
	for _, r := range rows {
		out.Data = append(out.Data, &svcchatv1.BlockRecord{PageId: &r.PageID, CreatedAt: rfc3339(r.CreatedAt)})
	}
	for _, b := range people.GetData() {
		out.Data = append(out.Data, &svcchatv1.BlockRecord{UserId: &b.UserId, CreatedAt: b.GetCreatedAt()})
	}
	// RFC 3339 UTC at one precision sorts as text.
	slices.SortStableFunc(out.Data, func(a, b *svcchatv1.BlockRecord) int { return cmp.Compare(b.GetCreatedAt(), a.GetCreatedAt()) })
	return out, nil
}

// sendRefusal is what refuses any send of the Page to the user, whatever
// its kind, from SendBarrier's answer: the Page's restriction first (it
// tells nothing about the user), then the user's block.
func sendRefusal(b svcchatdb.SendBarrierRow) error {
	switch {
	case b.Restricted:
		return errRestricted()
	case b.Blocked:
		return errBlocked()
	}
	return nil
}

// queueBarrier queues SendBarrier for pageID and userID on b, into st.
func (st *sendState) queueBarrier(ctx context.Context, b *pgx.Batch, pageID, userID string) {
	pipetx.QueueRow(b, func(db pipetx.DBTX) {
		svcchatdb.New(db).SendBarrier(ctx, svcchatdb.SendBarrierParams{PageID: pageID, UserID: userID})
	}, &st.barrier, nil)
}

// report is the signed-in user reporting a Page, a person or a message
// they received to staff.
func (s *service) report(ctx context.Context, call *sdk.Call, req *svcchatv1.ReportRequest) (*svcchatv1.ReportReceipt, error) {
	sub, err := parseSubject(reportFields, []*string{req.PageId, req.UserId, req.MessageId})
	if err != nil {
		return nil, err
	}
	reporter := call.Principal().UserID
	arg := svcchatdb.InsertReportParams{ReporterUserID: reporter, Kind: sub.kind, SubjectID: sub.id, Reason: req.GetReason()}
	switch sub.kind {
	case reportPage:
		page, err := call.Host().PageAccess(ctx, sdk.PageQuery{PageID: sub.id})
		if err != nil {
			return nil, err
		}
		if !page.Exists {
			return nil, sdk.NotFound("Page " + sub.id)
		}
		arg.PageID = sub.id
	case reportUser:
		if sub.id == reporter {
			return nil, sdk.Invalid("userId", "Invalid parameter: userId must be another user.")
		}
		u, err := call.Host().UserInfo(ctx, sub.id)
		if err != nil {
			return nil, err
		}
		if !u.Exists {
			return nil, sdk.NotFound("User " + sub.id)
		}
		arg.UserID = sub.id
	default: // a message the reporter received
		if strings.HasPrefix(sub.id, directMessagePrefix) {
			var m chatv1.DirectMessage
			if err := call.Host().Call(ctx, getReceivedMessageProcedure, &chatv1.GetReceivedMessageRequest{MessageId: sub.id}, &m); err != nil {
				return nil, err
			}
			arg.UserID, arg.MessageText = m.GetSenderUserId(), m.GetText()
			break
		}
		m, err := svcchatdb.New(s.pool).ReceivedPageMessage(ctx, svcchatdb.ReceivedPageMessageParams{UserID: reporter, ID: sub.id})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, sdk.NotFound("Message " + sub.id)
		}
		if err != nil {
			return nil, err
		}
		arg.PageID, arg.MessageText = m.PageID, m.Text
	}
	q := svcchatdb.New(s.pool)
	for range 2 {
		row, err := q.InsertReport(ctx, arg)
		if errors.Is(err, pgx.ErrNoRows) {
			// The reporter has one open of this subject: answer it (unless
			// staff decided it just now; then insert again).
			row, err = q.OpenReport(ctx, svcchatdb.OpenReportParams{ReporterUserID: reporter, Kind: sub.kind, SubjectID: sub.id})
			if errors.Is(err, pgx.ErrNoRows) {
				continue
			}
		}
		if err != nil {
			return nil, err
		}
		return &svcchatv1.ReportReceipt{Id: sdk.FormatID(row.ID), Status: row.Status, CreatedAt: rfc3339(row.CreatedAt)}, nil
	}
	return nil, sdk.Unavailable("The report queue") // decided twice while being written: try again
}

// listReports lists the open reports, oldest first.
func (s *service) listReports(ctx context.Context, _ *sdk.Call, req *svcchatv1.ListReportsRequest) (*svcchatv1.ListReportsResponse, error) {
	w, err := sdk.ParseForwardWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	rows, err := svcchatdb.New(s.pool).OpenReportsAfter(ctx, svcchatdb.OpenReportsAfterParams{Cursor: w.After, Lim: w.Fetch()})
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(r svcchatdb.SvcchatReport) int64 { return r.ID })
	res := &svcchatv1.ListReportsResponse{Data: make([]*svcchatv1.UserReport, len(rows))}
	paging.Set(res)
	for i, r := range rows {
		res.Data[i] = reportProto(r)
	}
	return res, nil
}

// reportProto is a report as staff see it.
func reportProto(r svcchatdb.SvcchatReport) *svcchatv1.UserReport {
	out := &svcchatv1.UserReport{Id: sdk.FormatID(r.ID), Kind: r.Kind, Reason: r.Reason, ReporterUserId: r.ReporterUserID,
		Status: r.Status, CreatedAt: rfc3339(r.CreatedAt), PageId: nonEmpty(r.PageID), UserId: nonEmpty(r.UserID)}
	if r.Kind == reportMessage {
		out.MessageId, out.MessageText = &r.SubjectID, &r.MessageText
	}
	if r.DecidedAt.Valid {
		at := rfc3339(r.DecidedAt)
		out.DecidedAt = &at
	}
	return out
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// decideReport records a staff decision on an open report; restrict
// restricts the Page the report concerns.
func (s *service) decideReport(ctx context.Context, call *sdk.Call, req *svcchatv1.DecideReportRequest) (*svcchatv1.DecideReportResponse, error) {
	notFound := sdk.NotFound("Report " + req.GetId())
	id, ok := sdk.ParseID(req.GetId())
	if !ok {
		return nil, notFound
	}
	decision, staff := ReportDecision(req.GetDecision()), call.Principal().UserID
	res := &svcchatv1.DecideReportResponse{}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := svcchatdb.New(tx)
		cur, err := q.LockReport(ctx, id)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound
		}
		if err != nil {
			return err
		}
		next, err := NextReportStatus(ReportStatus(cur.Status), decision, cur.PageID != "")
		switch {
		case errors.Is(err, errNothingToRestrict):
			return sdk.Invalid("decision", "Invalid parameter: decision restrict needs a report of a Page or of a Page's message; this one is of a %s.", cur.Kind)
		case err != nil:
			return errLifecycle("The report is " + cur.Status + ", not open; there is nothing to decide.")
		}
		if next == ReportRestricted {
			if res.Restriction, err = restrictPage(ctx, q, cur, staff); err != nil {
				return err
			}
		}
		row, err := q.DecideReport(ctx, svcchatdb.DecideReportParams{ID: id, Status: string(next), DecidedBy: staff})
		res.Report = reportProto(row)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// restrictPage applies a restrict decision on report r to its Page, under
// the restriction row's lock: a Page already restricted keeps the
// restriction it has.
func restrictPage(ctx context.Context, q *svcchatdb.Queries, r svcchatdb.SvcchatReport, staff string) (*svcchatv1.PageRestriction, error) {
	state, row, err := lockRestriction(ctx, q, r.PageID)
	if err != nil {
		return nil, err
	}
	if _, err := NextRestriction(state, ActionRestrict); err != nil {
		return nil, err // no row refuses a restrict; unreachable
	}
	if state == Unrestricted {
		if row, err = q.Restrict(ctx, svcchatdb.RestrictParams{PageID: r.PageID, ReportID: r.ID, RestrictedBy: staff}); err != nil {
			return nil, err
		}
	}
	return restrictionProto(row), nil
}

// lockRestriction locks a Page's restriction row, if any, and tells its
// state.
func lockRestriction(ctx context.Context, q *svcchatdb.Queries, pageID string) (RestrictionState, svcchatdb.SvcchatPageRestriction, error) {
	row, err := q.LockRestriction(ctx, pageID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Unrestricted, row, nil
	}
	if err != nil {
		return Unrestricted, row, err
	}
	return Restricted, row, nil
}

func restrictionProto(r svcchatdb.SvcchatPageRestriction) *svcchatv1.PageRestriction {
	return &svcchatv1.PageRestriction{PageId: r.PageID, ReportId: sdk.FormatID(r.ReportID), RestrictedBy: r.RestrictedBy,
		RestrictedAt: rfc3339(r.RestrictedAt)}
}

// listRestrictions lists the restricted Pages, oldest restriction first.
func (s *service) listRestrictions(ctx context.Context, _ *sdk.Call, req *svcchatv1.ListRestrictionsRequest) (*svcchatv1.ListRestrictionsResponse, error) {
	w, err := sdk.ParseForwardWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	rows, err := svcchatdb.New(s.pool).RestrictionsAfter(ctx, svcchatdb.RestrictionsAfterParams{Cursor: w.After, Lim: w.Fetch()})
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(r svcchatdb.SvcchatPageRestriction) int64 { return r.ID })
	res := &svcchatv1.ListRestrictionsResponse{Data: make([]*svcchatv1.PageRestriction, len(rows))}
	paging.Set(res)
	for i, r := range rows {
		res.Data[i] = restrictionProto(r)
	}
	return res, nil
}

// liftRestriction is staff lifting a Page's restriction.
func (s *service) liftRestriction(ctx context.Context, _ *sdk.Call, req *svcchatv1.LiftRestrictionRequest) (*svcchatv1.LiftRestrictionResponse, error) {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := svcchatdb.New(tx)
		state, _, err := lockRestriction(ctx, q, req.GetPageId())
		if err != nil {
			return err
		}
		if _, err := NextRestriction(state, ActionLift); err != nil {
			return errLifecycle("Page " + req.GetPageId() + " is not restricted; there is nothing to lift.")
		}
		_, err = q.LiftRestriction(ctx, req.GetPageId())
		return err
	})
	if err != nil {
		return nil, err
	}
	return &svcchatv1.LiftRestrictionResponse{Success: true}, nil
}
