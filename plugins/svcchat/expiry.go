package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/plugins/svcchat/internal/svcchatdb"
	"github.com/svcplatform/svc/sdk"
)

// expiryBatch bounds the lapsed controls one transaction returns.
const expiryBatch = 50

// expirer returns control of conversations whose handover expiry lapsed
// (CONTRACT §14). Every svcchat process (one per gateway) runs one; the
// lapsed rows are claimed with FOR UPDATE SKIP LOCKED and the return
// commits with the disarmed expiry, so each lapse is handled exactly once
// however many gateways run.
type expirer struct {
	pool *pgxpool.Pool
	log  *slog.Logger
	// poll is how often lapsed controls are looked for: the most a return
	// comes late.
	poll time.Duration
}

// run expires lapsed controls until ctx ends.
func (e *expirer) run(ctx context.Context) {
	for {
		for ctx.Err() == nil {
			n, err := e.expireBatch(ctx)
			if err != nil && ctx.Err() == nil {
				e.log.Warn("handover expiry failed; retrying at the next poll", "error", err)
			}
			if err != nil || n < expiryBatch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(e.poll):
		}
	}
}

// expireBatch returns control of up to expiryBatch lapsed conversations in
// one transaction and tells how many.
func (e *expirer) expireBatch(ctx context.Context) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		convs, err := svcchatdb.New(tx).ClaimExpiredControls(ctx, expiryBatch)
		if err != nil {
			return err
		}
		n = len(convs)
		for i := range convs {
			c := &convs[i]
			restore := Control{Holder: Holder(c.ExpireHolder), AppID: c.ExpireAppID, Previous: Holder(c.ExpirePrevious)}
			if _, err := applyControl(ctx, tx, c, ControlRequest{Action: ActionExpire, Restore: restore}, ""); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// listHandovers pages through a conversation's control changes, newest
// first.
func (s *service) listHandovers(ctx context.Context, _ *sdk.Call, req *svcchatv1.ListHandoversRequest) (*svcchatv1.ListHandoversResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	row, err := s.conversation(ctx, req.GetPageId(), req.GetConversationId())
	if err != nil {
		return nil, err
	}
	conv := row.SvcchatConversation
	q := svcchatdb.New(s.pool)
	var rows []svcchatdb.SvcchatHandover
	switch {
	case w.After != 0:
		rows, err = q.ListHandoversAfter(ctx, svcchatdb.ListHandoversAfterParams{PageID: conv.PageID, ConversationID: conv.ID, Cursor: w.After, Lim: w.Fetch()})
	case w.Before != 0:
		rows, err = q.ListHandoversBefore(ctx, svcchatdb.ListHandoversBeforeParams{PageID: conv.PageID, ConversationID: conv.ID, Cursor: w.Before, Lim: w.Fetch()})
	default:
		rows, err = q.ListHandoversFirst(ctx, svcchatdb.ListHandoversFirstParams{PageID: conv.PageID, ConversationID: conv.ID, Lim: w.Fetch()})
	}
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(h svcchatdb.SvcchatHandover) int64 { return h.Seq })
	res := &svcchatv1.ListHandoversResponse{Data: make([]*svcchatv1.HandoverRecord, len(rows))}
	paging.Set(res)
	for i, h := range rows {
		res.Data[i] = &svcchatv1.HandoverRecord{Action: h.Action, PreviousHolder: h.PreviousHolder, NewHolder: h.NewHolder,
			AppId: h.AppID, At: rfc3339(h.CreatedAt), Sequence: int32(h.Seq)}
		if h.ExpiresAt.Valid {
			at := rfc3339(h.ExpiresAt)
			res.Data[i].ExpiresAt = &at
		}
	}
	return res, nil
}
