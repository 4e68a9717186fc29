package main

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	extmsgv1 "github.com/svcplatform/svc/gen/svc/extmsg/v1"
	"github.com/svcplatform/svc/plugins/extmsg/internal/extmsgdb"
	"github.com/svcplatform/svc/plugins/internal/msgstatus"
	"github.com/svcplatform/svc/plugins/internal/msgwindow"
	"github.com/svcplatform/svc/sdk"
)

// The messaging app's side: its users are the platform's people, signed
// in with their own session (the chat app's /api/mobile), who write to a
// business by its phone number and read their threads. Fetching a thread
// delivers the business's messages in it; marking it read reads them
// (msgstatus's triggers, as svcchat's chat app).

// userWrite is a person writing to a business: their conversation with
// the account is made or found, its window restarted, and
// extmsg.message.received goes to the account's app.
func (s *service) userWrite(ctx context.Context, call *sdk.Call, req *extmsgv1.UserWriteRequest) (*extmsgv1.UserWriteResponse, error) {
	text := req.GetText()
	if strings.TrimSpace(text) == "" || strings.ContainsRune(text, 0) {
		return nil, sdk.Invalid("text", "Invalid parameter: text must be 1 to 2,000 characters, not only spaces.")
	}
	user := call.Principal().UserID
	acct, err := extmsgdb.New(s.pool).GetAccountByPhone(ctx, req.GetTo())
	if errors.Is(err, pgx.ErrNoRows) {
		e := sdk.NotFound("Business " + req.GetTo())
		e.Field = "to"
		return nil, e
	}
	if err != nil {
		return nil, err
	}
	var msg extmsgdb.ExtmsgMessage
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := extmsgdb.New(tx)
		conv, err := q.UserWrites(ctx, extmsgdb.UserWritesParams{AccountID: acct.ID, UserID: user, WindowSeconds: msgwindow.Length.Seconds()})
		if err != nil {
			return err
		}
		msg, err = q.InsertMessage(ctx, extmsgdb.InsertMessageParams{AccountID: acct.ID, ConversationID: conv.ID, Direction: inbound,
			Kind: kindText, Text: text})
		if err != nil {
			return err
		}
		return emit(ctx, tx, acct, conv, EventReceived, &receivedData{AccountID: sdk.FormatID(acct.ID), PhoneNumber: acct.PhoneNumber,
			ConversationID: sdk.FormatID(conv.ID), MessageID: sdk.FormatID(msg.ID), UserID: user, Text: text})
	})
	if err != nil {
		return nil, err
	}
	return &extmsgv1.UserWriteResponse{ConversationId: sdk.FormatID(msg.ConversationID), MessageId: sdk.FormatID(msg.ID)}, nil
}

// userThreads lists the signed-in person's conversations with businesses.
func (s *service) userThreads(ctx context.Context, call *sdk.Call, _ *extmsgv1.UserThreadsRequest) (*extmsgv1.UserThreadsResponse, error) {
	rows, err := extmsgdb.New(s.pool).UserConversations(ctx, call.Principal().UserID)
	if err != nil {
		return nil, err
	}
	res := &extmsgv1.UserThreadsResponse{Threads: make([]*extmsgv1.UserThreadSummary, len(rows))}
	for i, r := range rows {
		res.Threads[i] = &extmsgv1.UserThreadSummary{ConversationId: sdk.FormatID(r.ID), BusinessName: r.DisplayName,
			PhoneNumber: r.PhoneNumber, UpdatedAt: rfc3339(r.UpdatedAt)}
	}
	return res, nil
}

// userThread reads one of the person's conversations; the business's sent
// messages in it become delivered. A failed message never reached the
// person and is left out.
func (s *service) userThread(ctx context.Context, call *sdk.Call, req *extmsgv1.UserThreadRequest) (*extmsgv1.UserThreadResponse, error) {
	conv, acct, err := s.userConversation(ctx, call, req.GetConversationId())
	if err != nil {
		return nil, err
	}
	if _, err := s.markUserThread(ctx, acct, conv, msgstatus.Fetched); err != nil {
		return nil, err
	}
	rows, err := extmsgdb.New(s.pool).ListMessages(ctx, extmsgdb.ListMessagesParams{AccountID: acct.ID, ConversationID: conv.ID})
	if err != nil {
		return nil, err
	}
	slices.Reverse(rows)
	res := &extmsgv1.UserThreadResponse{ConversationId: sdk.FormatID(conv.ID), BusinessName: acct.DisplayName, PhoneNumber: acct.PhoneNumber}
	for _, m := range rows {
		if m.Status != string(msgstatus.Failed) {
			res.Messages = append(res.Messages, messageProto(m))
		}
	}
	return res, nil
}

// markThreadRead is the person reading the business's messages in a
// conversation.
func (s *service) markThreadRead(ctx context.Context, call *sdk.Call, req *extmsgv1.MarkThreadReadRequest) (*extmsgv1.MarkThreadReadResponse, error) {
	conv, acct, err := s.userConversation(ctx, call, req.GetConversationId())
	if err != nil {
		return nil, err
	}
	n, err := s.markUserThread(ctx, acct, conv, msgstatus.MarkedRead)
	if err != nil {
		return nil, err
	}
	return &extmsgv1.MarkThreadReadResponse{Success: true, Read: int32(n)}, nil
}

// userConversation reads the signed-in person's conversation named id and
// its account; another person's does not exist for the caller.
func (s *service) userConversation(ctx context.Context, call *sdk.Call, id string) (extmsgdb.ExtmsgConversation, extmsgdb.ExtmsgAccount, error) {
	q := extmsgdb.New(s.pool)
	user := call.Principal().UserID
	conv, err := conversationOf(ctx, q, id, func(c extmsgdb.ExtmsgConversation) bool { return c.UserID == user })
	if err != nil {
		return conv, extmsgdb.ExtmsgAccount{}, err
	}
	acct, err := q.GetAccount(ctx, conv.AccountID)
	return conv, acct, err
}

// markUserThread locks conv and applies trigger to the business's messages
// in it.
func (s *service) markUserThread(ctx context.Context, acct extmsgdb.ExtmsgAccount, conv extmsgdb.ExtmsgConversation, trigger msgstatus.Trigger) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		locked, err := extmsgdb.New(tx).LockConversation(ctx, extmsgdb.LockConversationParams{AccountID: conv.AccountID, ID: conv.ID})
		if err != nil {
			return err
		}
		n, err = mark(ctx, tx, acct, locked, trigger, 0, nil)
		return err
	})
	return n, err
}
