package main

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/types/known/structpb"

	adsv1 "github.com/svcplatform/svc/gen/svc/ads/v1"
	chatv1 "github.com/svcplatform/svc/gen/svc/chat/v1"
	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/internal/readpool"
	"github.com/svcplatform/svc/plugins/chat/internal/chatdb"
	"github.com/svcplatform/svc/sdk"
)

// inboxProcedure is svcchat's inbox of Page threads for the signed-in user.
const inboxProcedure = "/svc.svcchat.v1.SvcchatService/Inbox"

// serveAdProcedure is the ads plugin's pick of the sponsored item for the
// signed-in user, which counts the serve as an impression.
const serveAdProcedure = "/svc.ads.v1.AdsService/ServeSponsoredAd"

// listLimit bounds the direct threads of one chats list.
const listLimit = 200

type service struct {
	pool *pgxpool.Pool // the primary: writes
	db   *readpool.DB  // reads without side effects, from a replica when the gateway allows
}

func (s *service) register(p *sdk.Plugin) {
	m := chatv1.File_svc_chat_v1_chat_proto.Services().ByName("ChatService").Methods()
	sdk.Handle(p, m.ByName("SendDirectMessage"), s.sendDirectMessage)
	sdk.OnUserLeft(p, s.userLeft)
	sdk.Handle(p, m.ByName("ListChats"), s.listChats)
	sdk.Handle(p, m.ByName("GetDirectThread"), s.getDirectThread)
	sdk.Handle(p, m.ByName("BlockUser"), s.blockUser)
	sdk.Handle(p, m.ByName("UnblockUser"), s.unblockUser)
	sdk.Handle(p, m.ByName("ListUserBlocks"), s.listUserBlocks)
	sdk.Handle(p, m.ByName("GetReceivedMessage"), s.getReceivedMessage)
}

// pair names a thread's two users in a fixed order.
func pair(a, b string) (low, high string) {
	if a < b {
		return a, b
	}
	return b, a
}

// sendDirectMessage is the signed-in user writing to another user.
func (s *service) sendDirectMessage(ctx context.Context, call *sdk.Call, req *chatv1.SendDirectMessageRequest) (*chatv1.SendDirectMessageResponse, error) {
	from := call.Principal().UserID
	if req.GetToUserId() == from {
		return nil, sdk.Invalid("toUserId", "Invalid parameter: toUserId must be another user.")
	}
	to, err := call.Host().UserInfo(ctx, req.GetToUserId())
	if err != nil {
		return nil, err
	}
	if !to.Exists {
		return nil, cannotMessage()
	}
	// A block either way stops the thread, answered as an unknown user.
	blocked, err := chatdb.New(s.pool).EitherBlocked(ctx, chatdb.EitherBlockedParams{A: from, B: req.GetToUserId()})
	if err != nil {
		return nil, err
	}
	if blocked {
		return nil, cannotMessage()
	}
	low, high := pair(from, req.GetToUserId())
	var res chatv1.SendDirectMessageResponse
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := chatdb.New(tx)
		th, err := q.OpenThread(ctx, chatdb.OpenThreadParams{UserLow: low, UserHigh: high})
		if err != nil {
			return err
		}
		seq, err := q.NextSeq(ctx, th.ID)
		if err != nil {
			return err
		}
		m, err := q.InsertMessage(ctx, chatdb.InsertMessageParams{ThreadID: th.ID, Seq: seq, ID: "dm_" + rand.Text(),
			SenderUserID: from, Text: req.GetText()})
		if err != nil {
			return err
		}
		res.ThreadId, res.MessageId = sdk.FormatID(th.ID), m.ID
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// cannotMessage refuses a direct message to a user who does not exist or
// who blocked the sender alike (CONTRACT §15, 403, code 10, subcode
// 2018309): the answer must not tell which user ids exist.
func cannotMessage() *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusForbidden, Code: 10, Subcode: 2018309, Type: sdk.TypeOAuth,
		Message: "This person cannot receive your messages."}
}

// chatItem is one thread of the chats list with the time it sorts by.
type chatItem struct {
	at   time.Time
	json map[string]any
}

// listChats merges the user's direct threads with svcchat's Page threads.
func (s *service) listChats(ctx context.Context, call *sdk.Call, req *chatv1.ListChatsRequest) (*structpb.Struct, error) {
	view := req.GetView()
	if view == "" {
		view = "list"
	}
	if view != "list" && view != "folders" {
		return nil, sdk.Invalid("view", `Invalid parameter: view must be "list" or "folders".`)
	}
	userID := call.Principal().UserID
	var inbox svcchatv1.InboxResponse
	if err := call.Host().Call(ctx, inboxProcedure, &svcchatv1.InboxRequest{UserId: userID}, &inbox); err != nil {
		return nil, err
	}
	var pages, direct []chatItem
	for _, t := range inbox.GetThreads() {
		at, _ := time.Parse(time.RFC3339, t.GetUpdatedAt())
		pages = append(pages, chatItem{at: at, json: map[string]any{"kind": "page", "conversationId": t.GetConversationId(),
			"pageId": t.GetPageId(), "pageName": t.GetPageName(), "controlHolder": t.GetControlHolder(),
			"updatedAt": t.GetUpdatedAt(), "deepLink": t.GetDeepLink(), "lastMessage": map[string]any{
				"text": t.GetLastMessage().GetText(), "senderLabel": t.GetLastMessage().GetSenderLabel(), "createdAt": t.GetLastMessage().GetCreatedAt()}}})
	}
	var rows []chatdb.ListUserThreadsRow
	err := s.db.Read(ctx, func(db *pgxpool.Pool) (err error) {
		rows, err = chatdb.New(db).ListUserThreads(ctx, chatdb.ListUserThreadsParams{UserID: userID, Lim: listLimit})
		return err
	})
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, r := range rows {
		other := r.UserLow
		if other == userID {
			other = r.UserHigh
		}
		name, ok := names[other]
		if !ok {
			u, err := call.Host().UserInfo(ctx, other)
			if err != nil {
				return nil, err
			}
			name, names[other] = u.Name, u.Name
		}
		label := "You"
		if r.SenderUserID != userID {
			label = name
		}
		direct = append(direct, chatItem{at: r.UpdatedAt.Time, json: map[string]any{"kind": "direct",
			"threadId": sdk.FormatID(r.ID), "withUserId": other, "withUserName": name, "updatedAt": rfc3339(r.UpdatedAt),
			"lastMessage": map[string]any{"text": r.Text, "senderLabel": label, "createdAt": rfc3339(r.MessageCreatedAt)}}})
	}
	out := map[string]any{"sponsoredAd": sponsoredAd(ctx, call)}
	if view == "list" {
		out["threads"] = newestFirst(append(append([]chatItem{}, pages...), direct...))
	} else {
		out["folders"] = []any{
			map[string]any{"name": "Direct", "threads": newestFirst(direct)},
			map[string]any{"name": "Pages", "threads": newestFirst(pages)},
		}
	}
	return structpb.NewStruct(out)
}

// newestFirst sorts items by time, newest first, and returns their JSON.
func newestFirst(items []chatItem) []any {
	slices.SortStableFunc(items, func(a, b chatItem) int { return b.at.Compare(a.at) })
	out := make([]any, len(items))
	for i, it := range items {
		out[i] = it.json
	}
	return out
}

// threadPage is the default number of messages per thread read.
const threadPage = 25

// getDirectThread reads a page of one of the signed-in user's direct
// threads. Someone else's thread, a malformed id and a missing one all
// answer the same 404, so that ids reveal nothing.
func (s *service) getDirectThread(ctx context.Context, call *sdk.Call, req *chatv1.GetDirectThreadRequest) (*chatv1.DirectThread, error) {
	userID := call.Principal().UserID
	notFound := sdk.NotFound("Thread " + req.GetThreadId())
	id, ok := sdk.ParseID(req.GetThreadId())
	if !ok {
		return nil, notFound
	}
	limit := req.GetLimit()
	if limit == 0 {
		limit = threadPage
	}
	var th chatdb.ChatDirectThread
	var rows []chatdb.ChatDirectMessage
	err := s.db.Read(ctx, func(db *pgxpool.Pool) (err error) {
		q := chatdb.New(db)
		th, err = q.GetThread(ctx, id)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && th.UserLow != userID && th.UserHigh != userID {
			return notFound
		}
		if err != nil {
			return err
		}
		before := th.LastMessageSeq + 1
		if req.GetBefore() != "" {
			if before, err = q.MessageSeq(ctx, chatdb.MessageSeqParams{ThreadID: id, ID: req.GetBefore()}); errors.Is(err, pgx.ErrNoRows) {
				return sdk.Invalid("before", "Invalid parameter: before must be a message of this thread.")
			} else if err != nil {
				return err
			}
		}
		// One more than asked tells whether older messages remain.
		rows, err = q.ListThreadMessages(ctx, chatdb.ListThreadMessagesParams{ThreadID: id, BeforeSeq: before, Lim: limit + 1})
		return err
	})
	if err != nil {
		return nil, err
	}
	other := th.UserLow
	if other == userID {
		other = th.UserHigh
	}
	u, err := call.Host().UserInfo(ctx, other)
	if err != nil {
		return nil, err
	}
	out := &chatv1.DirectThread{ThreadId: req.GetThreadId(), WithUserId: other, WithUserName: u.Name,
		HasOlder: len(rows) > int(limit)}
	rows = rows[:min(len(rows), int(limit))]
	for i := len(rows) - 1; i >= 0; i-- {
		r := rows[i]
		label := u.Name
		if r.SenderUserID == userID {
			label = "You"
		}
		out.Messages = append(out.Messages, &chatv1.DirectMessage{Id: r.ID, SenderUserId: r.SenderUserID,
			SenderLabel: label, Text: r.Text, CreatedAt: rfc3339(r.CreatedAt)})
	}
	return out, nil
}

// sponsoredAd is the item the ads plugin serves the signed-in user (a
// served item is an impression), or nil when it serves none. The chats
// list does not fail for want of an ad: when the ads plugin is absent or
// refuses, the slot is empty and the refusal is logged.
func sponsoredAd(ctx context.Context, call *sdk.Call) any {
	var ad adsv1.SponsoredAd
	if err := call.Host().Call(ctx, serveAdProcedure, &adsv1.ServeSponsoredAdRequest{}, &ad); err != nil {
		call.Logger().WarnContext(ctx, "no sponsored item: the ads plugin did not serve one", "error", err)
		return nil
	}
	if ad.GetAdId() == "" {
		return nil
	}
	return map[string]any{"adId": ad.GetAdId(), "title": ad.GetTitle(), "body": ad.GetBody(), "linkUrl": ad.GetLinkUrl(), "pageId": ad.GetPageId()}
}

func rfc3339(t pgtype.Timestamptz) string { return t.Time.UTC().Format(time.RFC3339) }
