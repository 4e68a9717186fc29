package main

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	chatv1 "github.com/svcplatform/svc/gen/svc/chat/v1"
	"github.com/svcplatform/svc/plugins/chat/internal/chatdb"
	"github.com/svcplatform/svc/sdk"
)

// The blocks of people (CONTRACT §16): a block either way refuses a direct
// message as one to an unknown user, and the blocker's chats list leaves
// the thread out. The REST paths are svcchat's (/api/mobile/blocks, which
// also keeps the blocks of Pages); it calls these methods through the host
// as the signed-in user.

// blocksLimit bounds the blocks one list answers.
const blocksLimit = 1000

// blockUser is the signed-in user blocking another person.
func (s *service) blockUser(ctx context.Context, call *sdk.Call, req *chatv1.BlockUserRequest) (*chatv1.UserBlock, error) {
	from, to := call.Principal().UserID, req.GetUserId()
	if to == from {
		return nil, sdk.Invalid("userId", "Invalid parameter: userId must be another user; you cannot block yourself.")
	}
	u, err := call.Host().UserInfo(ctx, to)
	if err != nil {
		return nil, err
	}
	if !u.Exists {
		return nil, sdk.NotFound("User " + to)
	}
	q := chatdb.New(s.pool)
	arg := chatdb.BlockUserParams{UserID: from, BlockedUserID: to}
	at, err := q.BlockUser(ctx, arg)
	if errors.Is(err, pgx.ErrNoRows) {
		// The same block made at the same moment by another call, committed
		// after this statement's snapshot: it is there now.
		at, err = q.BlockUser(ctx, arg)
	}
	if err != nil {
		return nil, err
	}
	return &chatv1.UserBlock{UserId: to, CreatedAt: rfc3339(at)}, nil
}

// unblockUser ends the signed-in user's block of another person, if any.
func (s *service) unblockUser(ctx context.Context, call *sdk.Call, req *chatv1.BlockUserRequest) (*chatv1.UnblockUserResponse, error) {
	err := chatdb.New(s.pool).UnblockUser(ctx, chatdb.UnblockUserParams{UserID: call.Principal().UserID, BlockedUserID: req.GetUserId()})
	if err != nil {
		return nil, err
	}
	return &chatv1.UnblockUserResponse{Success: true}, nil
}

// listUserBlocks lists the people the signed-in user blocked, newest first.
func (s *service) listUserBlocks(ctx context.Context, call *sdk.Call, _ *chatv1.ListUserBlocksRequest) (*chatv1.ListUserBlocksResponse, error) {
	rows, err := chatdb.New(s.pool).ListUserBlocks(ctx, chatdb.ListUserBlocksParams{UserID: call.Principal().UserID, Lim: blocksLimit})
	if err != nil {
		return nil, err
	}
	out := &chatv1.ListUserBlocksResponse{Data: make([]*chatv1.UserBlock, len(rows))}
	for i, r := range rows {
		out.Data[i] = &chatv1.UserBlock{UserId: r.BlockedUserID, CreatedAt: rfc3339(r.CreatedAt)}
	}
	return out, nil
}

// getReceivedMessage reads a direct message another person sent the
// signed-in user, for their report; any other id answers 404 alike, so
// that ids reveal nothing.
func (s *service) getReceivedMessage(ctx context.Context, call *sdk.Call, req *chatv1.GetReceivedMessageRequest) (*chatv1.DirectMessage, error) {
	m, err := chatdb.New(s.pool).ReceivedMessage(ctx, chatdb.ReceivedMessageParams{ID: req.GetMessageId(), UserID: call.Principal().UserID})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, sdk.NotFound("Message " + req.GetMessageId())
	}
	if err != nil {
		return nil, err
	}
	return &chatv1.DirectMessage{Id: m.ID, SenderUserId: m.SenderUserID, Text: m.Text, CreatedAt: rfc3339(m.CreatedAt)}, nil
}
