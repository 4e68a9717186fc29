package main

import (
	"context"

	"github.com/svcplatform/svc/plugins/svcchat/internal/svcchatdb"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/event"
)

// Event types the plugin emits (CONTRACT §6).
const (
	EventMessageReceived = "page.message.received"
	EventPageMessageSent = "page.message.sent"
	EventMessageSent     = "svcchat.message.sent"
	EventOptIn           = "svcchat.opt_in"
	EventOptOut          = "svcchat.opt_out"
	EventHandover        = "svcchat.handover"
	EventDelivered       = "svcchat.message.delivered"
	EventRead            = "svcchat.message.read"
	// EventFailed: a Page message can no longer reach the user (they opted
	// out before their chat app fetched it); not in CONTRACT, see
	// docs/design/messaging.md.
	EventFailed = "svcchat.message.failed"
)

// handoverData is the data of svcchat.handover; holders are written svc_ai,
// page_human or app:<app id>.
type handoverData struct {
	ConversationID string `json:"conversationId"`
	PageID         string `json:"pageId"`
	Action         string `json:"action"`
	PreviousHolder string `json:"previousHolder"`
	NewHolder      string `json:"newHolder"`
	AppID          string `json:"appId"`
	// ExpiresAt is when the new control lapses (take or pass with
	// expires_in), RFC 3339; absent otherwise.
	ExpiresAt string `json:"expiresAt,omitempty"`
	Sequence  int64  `json:"sequence"`
}

// pageMessageData is the data of page.message.received and
// page.message.sent.
type pageMessageData struct {
	ConversationID string  `json:"conversationId"`
	MessageID      string  `json:"messageId"`
	PageID         string  `json:"pageId"`
	UserID         string  `json:"userId"`
	Text           string  `json:"text"`
	Kind           string  `json:"kind"`
	TemplateName   *string `json:"templateName"`
	Sequence       int64   `json:"sequence"`
}

// messageSentData is the data of svcchat.message.sent.
type messageSentData struct {
	Conversation struct {
		ID            string `json:"id"`
		PageID        string `json:"pageId"`
		UserID        string `json:"userId"`
		ControlHolder string `json:"controlHolder"`
	} `json:"conversation"`
	Message struct {
		ID           string  `json:"id"`
		Text         string  `json:"text"`
		Kind         string  `json:"kind"`
		TemplateName *string `json:"templateName"`
		AppID        string  `json:"appId"`
	} `json:"message"`
	Sequence int64 `json:"sequence"`
}

// optInData is the data of svcchat.opt_in and svcchat.opt_out.
type optInData struct {
	PageID   string   `json:"pageId"`
	UserID   string   `json:"userId"`
	Purposes []string `json:"purposes"`
	Source   string   `json:"source"`
	// The user's conversation with the Page and the event's place in it,
	// when the user has one (an opt-in before any message has none).
	ConversationID string `json:"conversationId,omitempty"`
	Sequence       *int64 `json:"sequence,omitempty"`
}

// statusData is the data of svcchat.message.delivered and
// svcchat.message.read.
type statusData struct {
	ConversationID string `json:"conversationId"`
	MessageID      string `json:"messageId"`
	PageID         string `json:"pageId"`
	UserID         string `json:"userId"`
	Sequence       int64  `json:"sequence"`
}

// failedData is the data of svcchat.message.failed: statusData and why.
type failedData struct {
	statusData
	Error messageError `json:"error"`
}

// messageError is why a message failed, named as in the Graph error
// envelope (CONTRACT §3).
type messageError struct {
	Code    int    `json:"code"`
	Subcode int    `json:"error_subcode"`
	Message string `json:"message"`
}

func (d *handoverData) setSequence(n int64)    { d.Sequence = n }
func (d *pageMessageData) setSequence(n int64) { d.Sequence = n }
func (d *messageSentData) setSequence(n int64) { d.Sequence = n }
func (d *optInData) setSequence(n int64)       { d.Sequence = &n }
func (d *statusData) setSequence(n int64)      { d.Sequence = n }

// sequenced is an event's data that carries data.sequence.
type sequenced interface{ setSequence(int64) }

// convEvent is one event of a conversation, for emitConv.
type convEvent struct {
	typ  string
	data sequenced
}

// orderingKey is the outbox ordering key of a conversation's events: a
// subscription with ordering "conversation" receives the events of one key
// one at a time, in order.
func orderingKey(conversationID int64) string {
	return "svcchat.conversation:" + sdk.FormatID(conversationID)
}

// emitConv writes events of conv to the outbox in tx, numbering them with
// the conversation's next data.sequence values. conv's row must be locked
// by tx: the counter is raised under that lock, so the numbers are gap-free
// and follow commit order. It returns the first number given.
func emitConv(ctx context.Context, tx svcchatdb.DBTX, conv *svcchatdb.SvcchatConversation, evs ...convEvent) (int64, error) {
	if len(evs) == 0 {
		return 0, nil
	}
	last, err := svcchatdb.New(tx).AddEventSeq(ctx, svcchatdb.AddEventSeqParams{PageID: conv.PageID, ID: conv.ID, N: int64(len(evs))})
	if err != nil {
		return 0, err
	}
	conv.LastEventSeq = last
	first := last - int64(len(evs)) + 1
	key := orderingKey(conv.ID)
	for i, e := range evs {
		e.data.setSequence(first + int64(i))
		if _, err := event.Emit(ctx, tx, event.Event{Type: e.typ, PageID: conv.PageID, Data: e.data, OrderingKey: key,
			UserID: conv.UserID}); err != nil {
			return 0, err
		}
	}
	return first, nil
}
