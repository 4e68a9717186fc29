package main

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/internal/pipetx"
	"github.com/svcplatform/svc/plugins/internal/msgstatus"
	"github.com/svcplatform/svc/plugins/svcchat/internal/svcchatdb"
	"github.com/svcplatform/svc/sdk"
)

// The message status state machine is shared with extmsg (package
// msgstatus); these names keep svcchat's code reading as it did.
type (
	// MessageStatus is where a message is on its way to the reader
	// (CONTRACT §14).
	MessageStatus = msgstatus.Status
	// StatusTrigger is what may move a message's status.
	StatusTrigger = msgstatus.Trigger
)

// Message statuses.
const (
	MessageSent      = msgstatus.Sent
	MessageDelivered = msgstatus.Delivered
	MessageRead      = msgstatus.Read
	MessageFailed    = msgstatus.Failed
)

// Status triggers.
const (
	// TriggerFetched: the recipient's chat app fetched a thread holding the
	// message.
	TriggerFetched = msgstatus.Fetched
	// TriggerMarkedRead: the recipient marked the thread read (the user's
	// POST …/read, or the Page's mark_seen for the user's messages).
	TriggerMarkedRead = msgstatus.MarkedRead
	// TriggerFailed: the message can no longer be handed to the recipient.
	// A Page message is stored in the thread the chat app reads, so it
	// cannot get lost on the way; what stops it is the user opting out
	// before their chat app fetched it (failThread).
	TriggerFailed = msgstatus.Undeliverable
)

// statusRule is one row of the message status table; event is emitted
// for each outbound message the row moves ("" for none).
type statusRule struct {
	from    MessageStatus
	trigger StatusTrigger
	to      MessageStatus
	event   string
}

// statusEvents names the event of a move to each status.
var statusEvents = map[MessageStatus]string{
	MessageDelivered: EventDelivered,
	MessageRead:      EventRead,
	MessageFailed:    EventFailed,
}

// statusTable is msgstatus.Table with svcchat's event for each row: a read
// straight from sent emits only svcchat.message.read (read implies
// delivered).
var statusTable = func() []statusRule {
	rules := make([]statusRule, len(msgstatus.Table))
	for i, r := range msgstatus.Table {
		rules[i] = statusRule{r.From, r.Trigger, r.To, statusEvents[r.To]}
	}
	return rules
}()

// NextMessageStatus is the message status state machine: the status after
// trigger, the event to emit, and whether anything changed.
func NextMessageStatus(from MessageStatus, trigger StatusTrigger) (MessageStatus, string, bool) {
	for _, r := range statusTable {
		if r.from == from && r.trigger == trigger {
			return r.to, r.event, true
		}
	}
	return from, "", false
}

// movedBy is the table read column-wise for one trigger: the statuses it
// moves, the status they all move to and the event of the move, so that
// one statement can apply the table to every message of a thread.
func movedBy(trigger StatusTrigger) (from []string, to MessageStatus, event string) {
	for _, r := range statusTable {
		if r.trigger == trigger {
			from = append(from, string(r.from))
			to, event = r.to, r.event
		}
	}
	return from, to, event
}

// markThread applies trigger to every message of conv in direction, in one
// statement, and emits one event per moved outbound message (with its own
// data.sequence). conv's row must be locked by tx. It returns how many
// messages moved.
//
// One event per message rather than one "watermark" event: a receiver
// that tracks messages by id needs no second read, and a thread fetched
// after n unread messages costs n outbox rows, which the conversation's
// own sends already did.
func markThread(ctx context.Context, tx svcchatdb.DBTX, conv *svcchatdb.SvcchatConversation, direction string, trigger StatusTrigger) (int, error) {
	from, to, eventType := movedBy(trigger)
	rows, err := svcchatdb.New(tx).MarkMessages(ctx, svcchatdb.MarkMessagesParams{PageID: conv.PageID, ConversationID: conv.ID,
		Direction: direction, Status: string(to), FromStatuses: from})
	if err != nil || eventType == "" || direction != "outbound" || len(rows) == 0 {
		return len(rows), err
	}
	cid := sdk.FormatID(conv.ID)
	evs := make([]convEvent, len(rows))
	for i, m := range rows {
		evs[i] = convEvent{eventType, &statusData{ConversationID: cid, MessageID: m.ID, PageID: conv.PageID, UserID: conv.UserID}}
	}
	_, err = emitConv(ctx, tx, conv, evs...)
	return len(rows), err
}

// failThread applies TriggerFailed to the Page's messages in conv: each
// one the table lets fail becomes failed with cause (the Graph error a send
// would get now), and emits svcchat.message.failed carrying that error.
// conv's row must be locked by tx. It returns how many messages failed.
func failThread(ctx context.Context, tx svcchatdb.DBTX, conv *svcchatdb.SvcchatConversation, cause *sdk.Error) (int, error) {
	from, _, eventType := movedBy(TriggerFailed)
	rows, err := svcchatdb.New(tx).FailMessages(ctx, svcchatdb.FailMessagesParams{PageID: conv.PageID, ConversationID: conv.ID,
		Error: cause.Message, ErrorCode: int32(cause.Code), ErrorSubcode: int32(cause.Subcode), FromStatuses: from})
	if err != nil || len(rows) == 0 {
		return len(rows), err
	}
	cid := sdk.FormatID(conv.ID)
	e := messageError{Code: cause.Code, Subcode: cause.Subcode, Message: cause.Message}
	evs := make([]convEvent, len(rows))
	for i, m := range rows {
		evs[i] = convEvent{eventType, &failedData{statusData: statusData{ConversationID: cid, MessageID: m.ID,
			PageID: conv.PageID, UserID: conv.UserID}, Error: e}}
	}
	_, err = emitConv(ctx, tx, conv, evs...)
	return len(rows), err
}

// userThread finds the signed-in user's conversation named by id; another
// user's thread is not shown to exist.
func userThread(ctx context.Context, q *svcchatdb.Queries, id, userID string) (svcchatdb.SvcchatConversation, error) {
	notFound := sdk.NotFound("Conversation " + id)
	cid, ok := sdk.ParseID(id)
	if !ok {
		return svcchatdb.SvcchatConversation{}, notFound
	}
	conv, err := q.GetConversationByID(ctx, cid)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && conv.UserID != userID) {
		return conv, notFound
	}
	return conv, err
}

// markUserThread locks the user's thread and applies trigger to the Page's
// messages in it.
func (s *service) markUserThread(ctx context.Context, conv svcchatdb.SvcchatConversation, trigger StatusTrigger) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		locked, err := svcchatdb.New(tx).LockConversation(ctx, svcchatdb.LockConversationParams{PageID: conv.PageID, ID: conv.ID})
		if err != nil {
			return err
		}
		n, err = markThread(ctx, tx, &locked, "outbound", trigger)
		return err
	})
	return n, err
}

// markThreadRead is the user reading a Page thread.
func (s *service) markThreadRead(ctx context.Context, call *sdk.Call, req *svcchatv1.MarkThreadReadRequest) (*svcchatv1.MarkThreadReadResponse, error) {
	conv, err := userThread(ctx, svcchatdb.New(s.pool), req.GetConversationId(), call.Principal().UserID)
	if err != nil {
		return nil, err
	}
	n, err := s.markUserThread(ctx, conv, TriggerMarkedRead)
	if err != nil {
		return nil, err
	}
	return &svcchatv1.MarkThreadReadResponse{Success: true, Read: int32(n)}, nil
}

// Sender actions (Messenger's names).
const (
	actionTypingOn  = "typing_on"
	actionTypingOff = "typing_off"
	actionMarkSeen  = "mark_seen"
)

// typingFor is how long typing_on shows in the user's thread unless
// typing_off or a message ends it first.
const typingFor = 20 * time.Second

// sendAction applies a sender action of the Page to its conversation with
// recipient: inside the session window, and not to a user who opted out.
// It changes no control and emits no event.
func (s *service) sendAction(ctx context.Context, pageID, recipient, action string) error {
	// Two round trips (pipetx), as a message: BEGIN with the locks, then
	// the change with COMMIT (mark_seen's take one more).
	var st sendState
	first := st.locks(ctx, pageID, recipient)
	st.queueBarrier(ctx, first, pageID, recipient)
	return pipetx.Run(ctx, s.pool, first, func(tx *pipetx.Tx) error {
		if err := sendRefusal(st.barrier); err != nil {
			return err
		}
		switch {
		case OptInStatus(st.optIn().Status) == OptInOptedOut:
			return errOptedOut()
		case !st.found || !windowOpen(st.conv.WindowExpiresAt):
			return errWindowClosed()
		}
		typing := svcchatdb.SetTypingParams{PageID: pageID, ID: st.conv.ID}
		switch action {
		case actionTypingOn:
			typing.TypingUntil = pgtype.Timestamptz{Time: time.Now().Add(typingFor), Valid: true}
		case actionTypingOff:
		default: // mark_seen: the Page has seen what the user wrote
			_, err := markThread(ctx, tx, &st.conv, "inbound", TriggerMarkedRead)
			return err
		}
		pipetx.Queue(tx.Last(), func(db pipetx.DBTX) { svcchatdb.New(db).SetTyping(ctx, typing) })
		return nil
	})
}

// typing tells whether the Page shows as typing in conv now.
func typing(conv svcchatdb.SvcchatConversation) bool {
	return conv.TypingUntil.Valid && time.Now().Before(conv.TypingUntil.Time)
}
