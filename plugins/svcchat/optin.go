package main

import (
	"context"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/internal/pipetx"
	"github.com/svcplatform/svc/plugins/svcchat/internal/svcchatdb"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/event"
)

// applyOptIn runs the opt-in state machine for a user and a Page inside
// tx, from cur, their record as tx locked it (sendState.optIn): it writes
// the new standing and emits the event when something changed, and returns
// the record as it is now. purposes and source are recorded on a change.
// conv is the user's conversation with the Page, locked by tx, or nil when
// there is none: the event then carries no sequence.
func (s *service) applyOptIn(ctx context.Context, tx svcchatdb.DBTX, conv *svcchatdb.SvcchatConversation, cur svcchatdb.SvcchatOptIn, trigger OptInTrigger, purposes []string, source string) (svcchatdb.SvcchatOptIn, error) {
	q := svcchatdb.New(tx)
	pageID, userID := cur.PageID, cur.UserID
	next, eventType := NextOptIn(OptInStatus(cur.Status), trigger)
	if eventType == "" {
		return cur, nil
	}
	if next == OptInOptedOut && len(cur.Purposes) > 0 {
		purposes = cur.Purposes // what the user opts out of
	}
	rec, err := q.PutOptIn(ctx, svcchatdb.PutOptInParams{PageID: pageID, UserID: userID, Status: string(next),
		Purposes: purposes, Source: source})
	if err != nil {
		return rec, err
	}
	data := &optInData{PageID: pageID, UserID: userID, Purposes: rec.Purposes, Source: rec.Source}
	if conv != nil {
		data.ConversationID = sdk.FormatID(conv.ID)
		if _, err = emitConv(ctx, tx, conv, convEvent{eventType, data}); err != nil || next != OptInOptedOut {
			return rec, err
		}
		// The Page's messages the user's chat app has not fetched will not
		// reach them now: the inbox hides the thread and no send passes.
		_, err = failThread(ctx, tx, conv, errOptedOut())
		return rec, err
	}
	_, err = event.Emit(ctx, tx, event.Event{Type: eventType, PageID: pageID, Data: data, UserID: userID})
	return rec, err
}

// optIn records the signed-in user's opt-in; a repeat changes nothing.
func (s *service) optIn(ctx context.Context, call *sdk.Call, req *svcchatv1.OptInRequest) (*svcchatv1.OptInResponse, error) {
	if _, err := pageForChat(ctx, call, req.GetPageId()); err != nil {
		return nil, err
	}
	return s.changeOptIn(ctx, req.GetPageId(), call.Principal().UserID, TriggerMobileOptIn, req.GetPurposes())
}

// optOut records the signed-in user's opt-out; a repeat changes nothing.
// A user may opt out of a Page that is no longer published.
func (s *service) optOut(ctx context.Context, call *sdk.Call, req *svcchatv1.OptOutRequest) (*svcchatv1.OptInResponse, error) {
	userID := call.Principal().UserID
	if req.GetUserId() != userID {
		return nil, sdk.Invalid("userId", "Invalid parameter: userId must be the signed-in user.")
	}
	page, err := call.Host().PageAccess(ctx, sdk.PageQuery{PageID: req.GetPageId(), UserID: userID})
	if err != nil {
		return nil, err
	}
	if !page.Exists {
		return nil, sdk.NotFound("Page " + req.GetPageId())
	}
	return s.changeOptIn(ctx, req.GetPageId(), userID, TriggerMobileOptOut, []string{})
}

func (s *service) changeOptIn(ctx context.Context, pageID, userID string, trigger OptInTrigger, purposes []string) (*svcchatv1.OptInResponse, error) {
	var (
		rec svcchatdb.SvcchatOptIn
		st  sendState
	)
	// The conversation's lock orders this event among its others.
	err := pipetx.Run(ctx, s.pool, st.locks(ctx, pageID, userID), func(tx *pipetx.Tx) error {
		var locked *svcchatdb.SvcchatConversation
		if st.found {
			locked = &st.conv
		}
		var err error
		rec, err = s.applyOptIn(ctx, tx, locked, st.optIn(), trigger, purposes, "mobile")
		return err
	})
	if err != nil {
		return nil, err
	}
	return &svcchatv1.OptInResponse{OptIn: &svcchatv1.OptInRecord{PageId: rec.PageID, UserId: rec.UserID,
		Purposes: rec.Purposes, Source: rec.Source, Status: rec.Status, UpdatedAt: rfc3339(rec.UpdatedAt)}}, nil
}
