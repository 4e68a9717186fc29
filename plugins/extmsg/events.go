package main

import (
	"context"

	"github.com/svcplatform/svc/plugins/extmsg/internal/extmsgdb"
	"github.com/svcplatform/svc/plugins/internal/msgstatus"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/event"
)

// Event types the plugin emits, each to the account's app (an app event:
// the app that was connected by embedded signup receives it when it
// subscribed to the type). Status events are WhatsApp's statuses webhook:
// one per message and status.
const (
	EventReceived  = "extmsg.message.received"
	EventSent      = "extmsg.message.sent"
	EventDelivered = "extmsg.message.delivered"
	EventRead      = "extmsg.message.read"
	EventFailed    = "extmsg.message.failed"
)

// events is what main declares, so that apps may subscribe to them.
var events = []string{EventReceived, EventSent, EventDelivered, EventRead, EventFailed}

// statusEvents names the event of each status a message reaches.
var statusEvents = map[msgstatus.Status]string{
	msgstatus.Sent:      EventSent,
	msgstatus.Delivered: EventDelivered,
	msgstatus.Read:      EventRead,
	msgstatus.Failed:    EventFailed,
}

// receivedData is the data of extmsg.message.received.
type receivedData struct {
	AccountID      string `json:"accountId"`
	PhoneNumber    string `json:"phoneNumber"`
	ConversationID string `json:"conversationId"`
	MessageID      string `json:"messageId"`
	UserID         string `json:"userId"`
	Text           string `json:"text"`
}

// statusData is the data of the status events: the message and the status
// it reached, and for failed why.
type statusData struct {
	AccountID      string        `json:"accountId"`
	ConversationID string        `json:"conversationId"`
	MessageID      string        `json:"messageId"`
	UserID         string        `json:"userId"`
	Status         string        `json:"status"`
	Error          *messageError `json:"error,omitempty"`
}

// messageError is why a message failed, named as in the error envelope
// (CONTRACT §3).
type messageError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// emit writes an event of conv's account to the outbox in tx, for the
// account's app, in the conversation's order (the caller holds the
// conversation's row lock, so emit order is commit order). Each event is
// about the conversation's person, whom leaving erases from the core too.
func emit(ctx context.Context, tx event.Tx, acct extmsgdb.ExtmsgAccount, conv extmsgdb.ExtmsgConversation, typ string, data any) error {
	_, err := event.Emit(ctx, tx, event.Event{Type: typ, AppID: acct.AppID, Data: data, UserID: conv.UserID,
		OrderingKey: "extmsg.conversation:" + sdk.FormatID(conv.ID)})
	return err
}

// mark applies trigger to the account's messages in conv (only the message
// only, when not 0), recording cause on a failure, and emits one status
// event per message moved. conv's row must be locked by tx. It returns
// how many moved.
func mark(ctx context.Context, tx extmsgdb.DBTX, acct extmsgdb.ExtmsgAccount, conv extmsgdb.ExtmsgConversation,
	trigger msgstatus.Trigger, only int64, cause *messageError) (int, error) {
	from, to := msgstatus.MovedBy(trigger)
	p := extmsgdb.MarkMessagesParams{Status: string(to), AccountID: acct.ID, ConversationID: conv.ID, FromStatuses: from}
	if only != 0 {
		p.OnlyID = &only
	}
	if cause != nil {
		code := int32(cause.Code)
		p.ErrorCode, p.ErrorMessage = &code, &cause.Message
	}
	ids, err := extmsgdb.New(tx).MarkMessages(ctx, p)
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		d := &statusData{AccountID: sdk.FormatID(acct.ID), ConversationID: sdk.FormatID(conv.ID), MessageID: sdk.FormatID(id),
			UserID: conv.UserID, Status: string(to), Error: cause}
		if err := emit(ctx, tx, acct, conv, statusEvents[to], d); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}
