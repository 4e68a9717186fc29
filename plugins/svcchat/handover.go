package main

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/plugins/svcchat/internal/svcchatdb"
	"github.com/svcplatform/svc/sdk"
)

// controlOf reads the control columns of a conversation row.
func controlOf(c svcchatdb.SvcchatConversation) Control {
	return Control{Holder: Holder(c.Holder), AppID: c.HolderAppID, Previous: Holder(c.PreviousHolder)}
}

// applyControl runs the control state machine on conv, whose row tx holds
// locked: it stores the new control in conv and in the row, keeps the
// handover expiry (CONTRACT §14) and, when the table says so, emits
// svcchat.handover and records it in the conversation's history. appID is
// the acting app written in the event ("" for a Page manager or the
// expiry).
//
// The expiry: a take or pass with expires_in arms it, remembering the
// control before the action; a message from the holder (an app's send, a
// manager's reply while page_human holds) restarts it; any other change of
// control disarms it.
func applyControl(ctx context.Context, tx svcchatdb.DBTX, conv *svcchatdb.SvcchatConversation, req ControlRequest, appID string) (Control, error) {
	cur := controlOf(*conv)
	next, emit, err := NextControl(cur, req)
	if err != nil {
		return cur, err
	}
	q := svcchatdb.New(tx)
	if next != cur {
		conv.Holder, conv.HolderAppID, conv.PreviousHolder = string(next.Holder), next.AppID, string(next.Previous)
		if err := q.SetControl(ctx, svcchatdb.SetControlParams{PageID: conv.PageID, ID: conv.ID,
			Holder: conv.Holder, HolderAppID: conv.HolderAppID, PreviousHolder: conv.PreviousHolder}); err != nil {
			return cur, err
		}
	}
	expiry := svcchatdb.SetControlExpiryParams{PageID: conv.PageID, ID: conv.ID,
		ExpireHolder: conv.ExpireHolder, ExpireAppID: conv.ExpireAppID, ExpirePrevious: conv.ExpirePrevious}
	change := true
	switch {
	case expiryMaker(req.Action) && req.ExpiresIn > 0:
		at := pgtype.Timestamptz{Time: time.Now().Add(time.Duration(req.ExpiresIn) * time.Second), Valid: true}
		in := int32(req.ExpiresIn)
		expiry.ControlExpiresAt, expiry.ControlExpiresIn = at, &in
		expiry.ExpireHolder, expiry.ExpireAppID, expiry.ExpirePrevious = string(cur.Holder), cur.AppID, string(cur.Previous)
	case !conv.ControlExpiresAt.Valid:
		change = false // nothing armed, nothing to arm
	case next != cur || req.Action == ActionExpire:
		expiry.ExpireHolder, expiry.ExpireAppID, expiry.ExpirePrevious = "", "", ""
	case (req.Action == ActionAppSend || req.Action == ActionHumanReply) && conv.ControlExpiresIn != nil:
		at := pgtype.Timestamptz{Time: time.Now().Add(time.Duration(*conv.ControlExpiresIn) * time.Second), Valid: true}
		expiry.ControlExpiresAt, expiry.ControlExpiresIn = at, conv.ControlExpiresIn
	default:
		change = false
	}
	if change {
		if err := q.SetControlExpiry(ctx, expiry); err != nil {
			return cur, err
		}
		conv.ControlExpiresIn = expiry.ControlExpiresIn
		conv.ExpireHolder, conv.ExpireAppID, conv.ExpirePrevious = expiry.ExpireHolder, expiry.ExpireAppID, expiry.ExpirePrevious
		conv.ControlExpiresAt = expiry.ControlExpiresAt
	}
	if !emit {
		return next, nil
	}
	data := &handoverData{
		ConversationID: sdk.FormatID(conv.ID), PageID: conv.PageID, Action: string(req.Action),
		PreviousHolder: cur.String(), NewHolder: next.String(), AppID: appID,
	}
	var expiresAt pgtype.Timestamptz
	if conv.ControlExpiresAt.Valid && expiryMaker(req.Action) && req.ExpiresIn > 0 {
		data.ExpiresAt, expiresAt = rfc3339(conv.ControlExpiresAt), conv.ControlExpiresAt
	}
	seq, err := emitConv(ctx, tx, conv, convEvent{EventHandover, data})
	if err != nil {
		return next, err
	}
	return next, q.InsertHandover(ctx, svcchatdb.InsertHandoverParams{PageID: conv.PageID, ConversationID: conv.ID, Seq: seq,
		Action: string(req.Action), PreviousHolder: cur.String(), NewHolder: next.String(), AppID: appID, ExpiresAt: expiresAt})
}

// controlProto is a conversation's control as reads and handovers answer
// it, with expires_at while an expiry is armed.
func controlProto(c svcchatdb.SvcchatConversation) *svcchatv1.Control {
	out := &svcchatv1.Control{Holder: c.Holder, AppId: c.HolderAppID}
	if c.ControlExpiresAt.Valid {
		at := rfc3339(c.ControlExpiresAt)
		out.ExpiresAt = &at
	}
	return out
}

// handover is the Graph handover node.
func (s *service) handover(ctx context.Context, call *sdk.Call, req *svcchatv1.HandoverRequest) (*svcchatv1.HandoverResponse, error) {
	creq, err := parseHandover(req.GetAction(), req.ReturnTo, req.TargetAppId, req.ExpiresIn)
	if err != nil {
		return nil, err
	}
	creq.ActorApp = call.Principal().AppID
	if expiryMaker(creq.Action) && req.ExpiresIn == nil {
		// The Page's handover_timeout, when set, is the default.
		page, err := call.Host().PageAccess(ctx, sdk.PageQuery{PageID: req.GetPageId()})
		if err != nil {
			return nil, err
		}
		creq.ExpiresIn = int64(page.HandoverTimeout.Seconds())
	}
	if creq.TargetApp != "" {
		if err := checkTargetApp(ctx, call, req.GetPageId(), creq.TargetApp); err != nil {
			return nil, err
		}
	}
	cid, ok := sdk.ParseID(req.GetConversationId())
	if !ok {
		return nil, sdk.NotFound("Conversation " + req.GetConversationId())
	}
	var conv svcchatdb.SvcchatConversation
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		conv, err = svcchatdb.New(tx).LockConversation(ctx, svcchatdb.LockConversationParams{PageID: req.GetPageId(), ID: cid})
		if errors.Is(err, pgx.ErrNoRows) {
			return sdk.NotFound("Conversation " + req.GetConversationId())
		}
		if err != nil {
			return err
		}
		_, err = applyControl(ctx, tx, &conv, creq, creq.ActorApp)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &svcchatv1.HandoverResponse{Success: true, Control: controlProto(conv)}, nil
}

// checkTargetApp refuses a pass to an app that does not exist (404) or
// cannot answer on the Page: not linked, or without svcchat (400 naming
// targetAppId).
func checkTargetApp(ctx context.Context, call *sdk.Call, pageID, appID string) error {
	app, err := call.Host().AppInfo(ctx, appID)
	if err != nil {
		return err
	}
	if !app.Exists {
		return sdk.NotFound("App " + appID)
	}
	page, err := call.Host().PageAccess(ctx, sdk.PageQuery{PageID: pageID, AppID: appID})
	if err != nil {
		return err
	}
	if !page.AppLinked || !slices.Contains(page.AppProducts, "svcchat") {
		return sdk.Invalid("targetAppId", "Invalid parameter: targetAppId names an app that is not linked to this Page with svcchat enabled.")
	}
	return nil
}

// managedConversation finds a conversation named by a mobile body and asks
// the gateway whether the signed-in user has the least role need on its
// Page: the gateway cannot read that Page from the request, so the plugin
// names the role and the gateway decides, answering its own refusal
// (CONTRACT §3, 2069003), which is returned as is.
func managedConversation(ctx context.Context, s *service, call *sdk.Call, id string, need sdk.PageRole) (svcchatdb.SvcchatConversation, *sdk.PageAccess, error) {
	cid, ok := sdk.ParseID(id)
	if !ok {
		return svcchatdb.SvcchatConversation{}, nil, sdk.NotFound("Conversation " + id)
	}
	conv, err := svcchatdb.New(s.pool).GetConversationByID(ctx, cid)
	if errors.Is(err, pgx.ErrNoRows) {
		return conv, nil, sdk.NotFound("Conversation " + id)
	}
	if err != nil {
		return conv, nil, err
	}
	page, err := call.Host().PageAccess(ctx, sdk.PageQuery{PageID: conv.PageID, UserID: call.Principal().UserID, Need: need})
	if err != nil {
		return conv, nil, err
	}
	return conv, page, nil
}

// mobileHandover is the Page owner setting the holder from the Page inbox.
func (s *service) mobileHandover(ctx context.Context, call *sdk.Call, req *svcchatv1.MobileHandoverRequest) (*svcchatv1.MobileHandoverResponse, error) {
	found, _, err := managedConversation(ctx, s, call, req.GetConversationId(), sdk.PageRoleOwner)
	if err != nil {
		return nil, err
	}
	var next Control
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		conv, err := svcchatdb.New(tx).LockConversation(ctx, svcchatdb.LockConversationParams{PageID: found.PageID, ID: found.ID})
		if err != nil {
			return err
		}
		next, err = applyControl(ctx, tx, &conv, ControlRequest{Action: ActionSetMode, To: Holder(req.GetMode())}, "")
		return err
	})
	if err != nil {
		return nil, err
	}
	return &svcchatv1.MobileHandoverResponse{ConversationId: sdk.FormatID(found.ID), ControlHolder: next.String()}, nil
}

// reply is a Page manager answering as a human from the Page inbox.
func (s *service) reply(ctx context.Context, call *sdk.Call, req *svcchatv1.ReplyRequest) (*svcchatv1.ReplyResponse, error) {
	found, page, err := managedConversation(ctx, s, call, req.GetConversationId(), sdk.PageRoleEditor)
	if err != nil {
		return nil, err
	}
	if !page.Published || !page.ChatSurfacing {
		return nil, errPageUnavailable()
	}
	manager := call.Principal().UserID
	var res svcchatv1.ReplyResponse
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := svcchatdb.New(tx)
		conv, err := q.LockConversation(ctx, svcchatdb.LockConversationParams{PageID: found.PageID, ID: found.ID})
		if err != nil {
			return err
		}
		opt, err := lockOptIn(ctx, q, conv.PageID, conv.UserID)
		if err != nil {
			return err
		}
		barrier, err := q.SendBarrier(ctx, svcchatdb.SendBarrierParams{PageID: conv.PageID, UserID: conv.UserID})
		if err != nil {
			return err
		}
		if err := sendRefusal(barrier); err != nil {
			return err
		}
		if OptInStatus(opt.Status) == OptInOptedOut {
			return errOptedOut()
		}
		if !windowOpen(conv.WindowExpiresAt) {
			return errWindowClosed()
		}
		if _, err := applyControl(ctx, tx, &conv, ControlRequest{Action: ActionHumanReply}, ""); err != nil {
			return err
		}
		msg, err := postMessage(ctx, q, &conv, newMessage{
			Direction: "outbound", Sender: string(HolderHuman), SenderUserID: manager, Kind: "session", Text: req.GetText(),
		}, sentEvents(&conv))
		if err != nil {
			return err
		}
		res.ConversationId, res.MessageId = sdk.FormatID(conv.ID), msg.ID
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}
