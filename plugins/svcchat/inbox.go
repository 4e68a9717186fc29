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

// inboxLimit bounds the threads the inbox lists: a user's Page threads are
// few; the newest come first.
const inboxLimit = 200

// defaultAssistantLabel follows the Page name in the assistant's
// attribution when the Page sets none (CONTRACT §5).
const defaultAssistantLabel = "Assistant"

// youLabel is the sender label of the user's own messages in the chat app.
const youLabel = "You"

// senderLabel is how the chat app names a message's sender: the user
// ("You"), the Page, or the Page's assistant.
func senderLabel(m svcchatdb.SvcchatMessage, page *sdk.PageAccess) string {
	switch {
	case m.Direction == "inbound":
		return youLabel
	case m.Sender == string(HolderAssistant):
		return assistantAttribution(page)
	}
	return page.Name
}

// assistantAttribution is "<page name> · <assistant label>".
func assistantAttribution(page *sdk.PageAccess) string {
	label := page.AssistantLabel
	if label == "" {
		label = defaultAssistantLabel
	}
	return page.Name + " · " + label
}

// surfaced tells whether the chat app may show a Page's threads: the Page
// is published, chat surfacing is on and the inbox-merge link is active.
func surfaced(page *sdk.PageAccess) bool {
	return page.Exists && page.Published && page.ChatSurfacing && page.InboxMergeLinked
}

func deepLink(pageID, conversationID string) string {
	return "svcchat://page-inbox/" + pageID + "/" + conversationID
}

// inbox lists the signed-in user's Page threads.
func (s *service) inbox(ctx context.Context, call *sdk.Call, req *svcchatv1.InboxRequest) (*svcchatv1.InboxResponse, error) {
	userID := call.Principal().UserID
	if req.GetUserId() != userID {
		return nil, sdk.Invalid("userId", "Invalid parameter: userId must be the signed-in user.")
	}
	// A list that may lag: from the read replica when the gateway allows,
	// all of it again from the primary should the replica fail midway.
	var res *svcchatv1.InboxResponse
	pages := map[string]*sdk.PageAccess{}
	err := s.db.Read(ctx, func(db *pgxpool.Pool) error {
		var err error
		res, err = s.inboxFrom(ctx, call, svcchatdb.New(db), userID, pages)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// inboxFrom reads the inbox of userID with q; pages caches the Pages'
// access answers across tries.
func (s *service) inboxFrom(ctx context.Context, call *sdk.Call, q *svcchatdb.Queries, userID string, pages map[string]*sdk.PageAccess) (*svcchatv1.InboxResponse, error) {
	rows, err := q.ListUserConversations(ctx, svcchatdb.ListUserConversationsParams{UserID: userID, Lim: inboxLimit})
	if err != nil {
		return nil, err
	}
	res := &svcchatv1.InboxResponse{Threads: []*svcchatv1.InboxThread{}}
	for _, r := range rows {
		c := r.SvcchatConversation
		if OptInStatus(r.OptInStatus) != OptInActive {
			continue
		}
		page, ok := pages[c.PageID]
		if !ok {
			if page, err = call.Host().PageAccess(ctx, sdk.PageQuery{PageID: c.PageID, UserID: userID}); err != nil {
				return nil, err
			}
			pages[c.PageID] = page
		}
		if !surfaced(page) {
			continue
		}
		last, err := q.LastMessage(ctx, svcchatdb.LastMessageParams{PageID: c.PageID, ConversationID: c.ID})
		if errors.Is(err, pgx.ErrNoRows) {
			continue // a thread with no message yet has nothing to show
		}
		if err != nil {
			return nil, err
		}
		cid := sdk.FormatID(c.ID)
		res.Threads = append(res.Threads, &svcchatv1.InboxThread{
			ConversationId: cid, PageId: c.PageID, PageName: page.Name,
			LastMessage:   &svcchatv1.ThreadMessageSummary{Text: last.Text, SenderLabel: senderLabel(last, page), CreatedAt: rfc3339(last.CreatedAt)},
			ControlHolder: holderName(Holder(c.Holder), c.HolderAppID), UpdatedAt: rfc3339(c.UpdatedAt),
			DeepLink: deepLink(c.PageID, cid),
		})
	}
	return res, nil
}

// getThread reads one of the signed-in user's Page threads. The fetch is
// the chat app showing the thread: it first marks the Page's messages in
// it delivered (one statement, one svcchat.message.delivered per message).
func (s *service) getThread(ctx context.Context, call *sdk.Call, req *svcchatv1.GetThreadRequest) (*svcchatv1.Thread, error) {
	userID := call.Principal().UserID
	q := svcchatdb.New(s.pool)
	conv, err := userThread(ctx, q, req.GetConversationId(), userID)
	if err != nil {
		return nil, err
	}
	page, err := call.Host().PageAccess(ctx, sdk.PageQuery{PageID: conv.PageID, UserID: userID})
	if err != nil {
		return nil, err
	}
	if !surfaced(page) {
		return nil, errPageUnavailable()
	}
	if _, err := s.markUserThread(ctx, conv, TriggerFetched); err != nil {
		return nil, err
	}
	limit := req.GetLimit()
	if limit == 0 {
		limit = sdk.DefaultPageSize
	}
	beforeSeq := int64(1) << 62
	if req.GetBefore() != "" {
		seq, err := q.MessageSeq(ctx, svcchatdb.MessageSeqParams{PageID: conv.PageID, ConversationID: conv.ID, ID: req.GetBefore()})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, sdk.Invalid("before", "Invalid parameter: before must be the id of a message of this thread.")
		}
		if err != nil {
			return nil, err
		}
		beforeSeq = seq
	}
	rows, err := q.ListThreadMessages(ctx, svcchatdb.ListThreadMessagesParams{PageID: conv.PageID, ConversationID: conv.ID, BeforeSeq: beforeSeq, Lim: limit + 1})
	if err != nil {
		return nil, err
	}
	res := &svcchatv1.Thread{ConversationId: sdk.FormatID(conv.ID), PageId: conv.PageID, PageName: page.Name,
		ControlHolder: holderName(Holder(conv.Holder), conv.HolderAppID), Messages: []*svcchatv1.ThreadMessage{},
		Typing: typing(conv)}
	if len(rows) > int(limit) {
		rows, res.HasOlder = rows[:limit], true
	}
	for i := len(rows) - 1; i >= 0; i-- { // oldest first
		m := rows[i]
		res.Messages = append(res.Messages, &svcchatv1.ThreadMessage{Id: m.ID, Direction: m.Direction, Text: m.Text,
			SenderLabel: senderLabel(m, page), CreatedAt: rfc3339(m.CreatedAt), Status: m.Status})
	}
	return res, nil
}
