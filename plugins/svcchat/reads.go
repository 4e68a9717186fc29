package main

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/plugins/svcchat/internal/svcchatdb"
	"github.com/svcplatform/svc/sdk"
)

// conversationRow is a conversation with the user's opt-in standing, as
// every conversation read returns it.
type conversationRow struct {
	SvcchatConversation svcchatdb.SvcchatConversation
	OptInStatus         string
}

// listConversations pages through a Page's conversations, newest first
// (by id, so cursors are stable under inserts).
func (s *service) listConversations(ctx context.Context, _ *sdk.Call, req *svcchatv1.ListConversationsRequest) (*svcchatv1.ListConversationsResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	var rows []conversationRow
	err = s.db.Read(ctx, func(db *pgxpool.Pool) error {
		rows = rows[:0]
		q := svcchatdb.New(db)
		switch {
		case w.After != 0:
			r, err := q.ListConversationsAfter(ctx, svcchatdb.ListConversationsAfterParams{PageID: req.GetPageId(), Cursor: w.After, Lim: w.Fetch()})
			for _, c := range r {
				rows = append(rows, conversationRow(c))
			}
			return err
		case w.Before != 0:
			r, err := q.ListConversationsBefore(ctx, svcchatdb.ListConversationsBeforeParams{PageID: req.GetPageId(), Cursor: w.Before, Lim: w.Fetch()})
			for _, c := range r {
				rows = append(rows, conversationRow(c))
			}
			return err
		default:
			r, err := q.ListConversationsFirst(ctx, svcchatdb.ListConversationsFirstParams{PageID: req.GetPageId(), Lim: w.Fetch()})
			for _, c := range r {
				rows = append(rows, conversationRow(c))
			}
			return err
		}
	})
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(c conversationRow) int64 { return c.SvcchatConversation.ID })
	res := &svcchatv1.ListConversationsResponse{Data: make([]*svcchatv1.Conversation, len(rows))}
	paging.Set(res)
	for i, c := range rows {
		res.Data[i] = conversationProto(c)
	}
	return res, nil
}

// getConversation reads one conversation of a Page.
func (s *service) getConversation(ctx context.Context, _ *sdk.Call, req *svcchatv1.GetConversationRequest) (*svcchatv1.Conversation, error) {
	c, err := s.conversation(ctx, req.GetPageId(), req.GetConversationId())
	if err != nil {
		return nil, err
	}
	return conversationProto(c), nil
}

// conversation reads a conversation by id within its Page; an id that
// names none there, whatever its form, is not found.
func (s *service) conversation(ctx context.Context, pageID, id string) (conversationRow, error) {
	cid, ok := sdk.ParseID(id)
	if !ok {
		return conversationRow{}, sdk.NotFound("Conversation " + id)
	}
	var c svcchatdb.GetConversationRow
	err := s.db.Read(ctx, func(db *pgxpool.Pool) (err error) {
		c, err = svcchatdb.New(db).GetConversation(ctx, svcchatdb.GetConversationParams{PageID: pageID, ID: cid})
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return conversationRow{}, sdk.NotFound("Conversation " + id)
	}
	if err != nil {
		return conversationRow{}, err
	}
	return conversationRow(c), nil
}

func conversationProto(row conversationRow) *svcchatv1.Conversation {
	c := row.SvcchatConversation
	out := &svcchatv1.Conversation{
		Id: sdk.FormatID(c.ID), PageId: c.PageID, UserId: c.UserID,
		Control:     controlProto(c),
		UpdatedTime: rfc3339(c.UpdatedAt), OptIn: row.OptInStatus,
	}
	if windowOpen(c.WindowExpiresAt) {
		w := rfc3339(c.WindowExpiresAt)
		out.WindowExpiresAt = &w
	}
	return out
}

// listMessages pages through a conversation's messages, newest first.
func (s *service) listMessages(ctx context.Context, _ *sdk.Call, req *svcchatv1.ListMessagesRequest) (*svcchatv1.ListMessagesResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	row, err := s.conversation(ctx, req.GetPageId(), req.GetConversationId())
	if err != nil {
		return nil, err
	}
	conv := row.SvcchatConversation
	var rows []svcchatdb.SvcchatMessage
	err = s.db.Read(ctx, func(db *pgxpool.Pool) (err error) {
		q := svcchatdb.New(db)
		switch {
		case w.After != 0:
			rows, err = q.ListMessagesAfter(ctx, svcchatdb.ListMessagesAfterParams{PageID: conv.PageID, ConversationID: conv.ID, Cursor: w.After, Lim: w.Fetch()})
		case w.Before != 0:
			rows, err = q.ListMessagesBefore(ctx, svcchatdb.ListMessagesBeforeParams{PageID: conv.PageID, ConversationID: conv.ID, Cursor: w.Before, Lim: w.Fetch()})
		default:
			rows, err = q.ListMessagesFirst(ctx, svcchatdb.ListMessagesFirstParams{PageID: conv.PageID, ConversationID: conv.ID, Lim: w.Fetch()})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(m svcchatdb.SvcchatMessage) int64 { return m.Seq })
	res := &svcchatv1.ListMessagesResponse{Data: make([]*svcchatv1.Message, len(rows))}
	paging.Set(res)
	for i, m := range rows {
		res.Data[i] = &svcchatv1.Message{Id: m.ID, ConversationId: sdk.FormatID(m.ConversationID), Direction: m.Direction,
			Sender: m.Sender, AppId: m.AppID, Text: m.Text, Kind: m.Kind, TemplateName: m.TemplateName,
			CreatedTime: rfc3339(m.CreatedAt), Status: m.Status}
		if m.Status == string(MessageFailed) {
			res.Data[i].Error, res.Data[i].ErrorCode, res.Data[i].ErrorSubcode = &m.Error, &m.ErrorCode, &m.ErrorSubcode
		}
	}
	return res, nil
}
