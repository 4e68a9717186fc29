package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/types/known/structpb"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/internal/groupcommit"
	"github.com/svcplatform/svc/internal/outbox"
	"github.com/svcplatform/svc/internal/pipetx"
	"github.com/svcplatform/svc/internal/readpool"
	"github.com/svcplatform/svc/plugins/internal/msgwindow"
	"github.com/svcplatform/svc/plugins/svcchat/internal/svcchatdb"
	"github.com/svcplatform/svc/sdk"
)

type service struct {
	pool *pgxpool.Pool // the primary: writes, and reads inside them
	db   *readpool.DB  // reads without side effects, from a replica when the gateway allows
	log  *slog.Logger
	// assistant is nudged when a user's message asks for its first reply;
	// nil in tests that run without it.
	assistant *assistant
	// sends is what each app's send left, for the next one's single round
	// trip (sendcache.go).
	sends sendSnapshots
	// oneTrip commits the single-round-trip sends made at once together
	// (pipetx.Group).
	oneTrip *pipetx.Group
}

// oneTripBatches bound the group commit of sends: one batch at a time, as
// for posts (plugins/book), so the sends decided while it commits make the
// next one.
var oneTripBatches = groupcommit.Options{MaxRunning: 1, MaxBatch: 64}

// newService is the service writing on pool (the primary) and reading
// from db; its assistant is set by main.
func newService(pool *pgxpool.Pool, db *readpool.DB, log *slog.Logger) *service {
	return &service{pool: pool, db: db, log: log, oneTrip: pipetx.NewGroup(pool, oneTripBatches)}
}

func (s *service) register(p *sdk.Plugin) {
	m := svcchatv1.File_svc_svcchat_v1_svcchat_proto.Services().ByName("SvcchatService").Methods()
	sdk.Handle(p, m.ByName("WriteToPage"), s.writeToPage)
	sdk.Handle(p, m.ByName("OptIn"), s.optIn)
	sdk.Handle(p, m.ByName("OptOut"), s.optOut)
	sdk.OnUserLeft(p, s.userLeft)
	sdk.Handle(p, m.ByName("SendMessage"), s.sendMessage)
	sdk.Handle(p, m.ByName("ListConversations"), s.listConversations)
	sdk.Handle(p, m.ByName("GetConversation"), s.getConversation)
	sdk.Handle(p, m.ByName("ListMessages"), s.listMessages)
	sdk.Handle(p, m.ByName("ListTemplates"), s.listTemplates)
	sdk.Handle(p, m.ByName("CreateTemplate"), s.createTemplate)
	sdk.Handle(p, m.ByName("ApproveTemplate"), s.approveTemplate)
	sdk.Handle(p, m.ByName("SubmitTemplate"), s.submitTemplate)
	sdk.Handle(p, m.ByName("AppWentLive"), s.appWentLive)
	sdk.Handle(p, m.ByName("ListTemplateQueue"), s.listTemplateQueue)
	sdk.Handle(p, m.ByName("DecideTemplate"), s.decideTemplate)
	sdk.Handle(p, m.ByName("Handover"), s.handover)
	sdk.Handle(p, m.ByName("MobileHandover"), s.mobileHandover)
	sdk.Handle(p, m.ByName("Reply"), s.reply)
	sdk.Handle(p, m.ByName("Inbox"), s.inbox)
	sdk.Handle(p, m.ByName("GetThread"), s.getThread)
	sdk.Handle(p, m.ByName("MarkThreadRead"), s.markThreadRead)
	sdk.Handle(p, m.ByName("ListHandovers"), s.listHandovers)
	sdk.Handle(p, m.ByName("Block"), s.block)
	sdk.Handle(p, m.ByName("ListBlocks"), s.listBlocks)
	sdk.Handle(p, m.ByName("Unblock"), s.unblock)
	sdk.Handle(p, m.ByName("Report"), s.report)
	sdk.Handle(p, m.ByName("ListReports"), s.listReports)
	sdk.Handle(p, m.ByName("DecideReport"), s.decideReport)
	sdk.Handle(p, m.ByName("ListRestrictions"), s.listRestrictions)
	sdk.Handle(p, m.ByName("LiftRestriction"), s.liftRestriction)
}

// newMessageID returns "m_" and 26 random base-32 characters (130 bits).
func newMessageID() string { return "m_" + rand.Text() }

// pageForChat reads a Page's facts and refuses a Page that does not exist
// (404) or is not published with chat surfacing on (2018304).
func pageForChat(ctx context.Context, call *sdk.Call, pageID string) (*sdk.PageAccess, error) {
	page, ok := call.PageAccess(pageID) // what the gateway read to authorize the call
	if !ok {
		p := call.Principal()
		var err error
		if page, err = call.Host().PageAccess(ctx, sdk.PageQuery{PageID: pageID, UserID: p.UserID, AppID: p.AppID}); err != nil {
			return nil, err
		}
	}
	if !page.Exists {
		return nil, sdk.NotFound("Page " + pageID)
	}
	if !page.Published || !page.ChatSurfacing {
		return nil, errPageUnavailable()
	}
	return page, nil
}

// writeToPage is a user writing to a Page from the chat app.
func (s *service) writeToPage(ctx context.Context, call *sdk.Call, req *svcchatv1.WriteToPageRequest) (*svcchatv1.WriteToPageResponse, error) {
	page, err := pageForChat(ctx, call, req.GetPageId())
	if err != nil {
		return nil, err
	}
	userID, pageID := call.Principal().UserID, req.GetPageId()
	var (
		st     sendState
		post   queuedPost
		queued bool // a new assistant job was written
	)
	// Two round trips (pipetx), as a send: BEGIN with opening the
	// conversation (the upsert locks it) and locking the opt-in record,
	// then the message with COMMIT. A first write's opt-in and a first
	// reply's job take one more each.
	first := st.openLocks(ctx, pageID, userID, initialHolder(page.InboxAutomation))
	st.queueBarrier(ctx, first, pageID, userID)
	err = pipetx.Run(ctx, s.pool, first, func(tx *pipetx.Tx) error {
		if st.barrier.Blocked {
			// The user's block stops the thread both ways (the upsert
			// that opened it rolls back).
			return errWriteToBlocked()
		}
		conv := &st.conv
		q := svcchatdb.New(tx)
		if Holder(conv.Holder) == HolderAssistant && page.InboxAutomation {
			// The first reply's job commits with the message: never lost,
			// and only one per conversation ever.
			n, err := q.EnqueueAssistantReply(ctx, svcchatdb.EnqueueAssistantReplyParams{PageID: conv.PageID, ConversationID: conv.ID})
			if err != nil {
				return err
			}
			queued = n > 0
		}
		if _, err := s.applyOptIn(ctx, tx, conv, st.optIn(), TriggerUserMessage, []string{purposeTransactional}, "message"); err != nil {
			return err
		}
		return post.queue(ctx, tx, conv, newMessage{
			Direction: "inbound", Sender: "user", Kind: "session", Text: req.GetText(),
		}, func(msg svcchatdb.SvcchatMessage) []convEvent {
			return []convEvent{{EventMessageReceived, &pageMessageData{
				ConversationID: sdk.FormatID(conv.ID), MessageID: msg.ID, PageID: conv.PageID, UserID: userID,
				Text: msg.Text, Kind: msg.Kind,
			}}}
		})
	})
	if err == nil {
		err = post.done(&st.conv)
	}
	if err != nil {
		return nil, err
	}
	res := svcchatv1.WriteToPageResponse{ConversationId: sdk.FormatID(st.conv.ID), MessageId: post.row.ID}
	if queued && s.assistant != nil {
		// Only a new job needs the worker now; retries wait for its poll.
		s.assistant.nudge()
	}
	return &res, nil
}

// newMessage is what a writer says of a message; postMessage numbers it.
type newMessage struct {
	Direction, Sender, AppID, Kind string
	TemplateName                   *string
	Text, SenderUserID             string
}

// postMessage stores the next message of conv, whose row the transaction
// holds locked, with the events announce makes of it, numbered after the
// conversation's last event: one statement (PostMessage), so a send costs
// one round trip for its message and events, not four. A message from the
// Page ends its typing indicator.
func postMessage(ctx context.Context, q *svcchatdb.Queries, conv *svcchatdb.SvcchatConversation, m newMessage, announce func(svcchatdb.SvcchatMessage) []convEvent) (svcchatdb.SvcchatMessage, error) {
	arg, err := messagePost(conv, m, announce)
	if err != nil {
		return svcchatdb.SvcchatMessage{}, err
	}
	row, err := q.PostMessage(ctx, arg)
	if errors.Is(err, pgx.ErrNoRows) {
		return svcchatdb.SvcchatMessage{}, errCountersMoved(conv.ID)
	}
	if err != nil {
		return svcchatdb.SvcchatMessage{}, err
	}
	posted(conv, arg, row.Seq)
	return svcchatdb.SvcchatMessage(row), nil
}

// messagePost is PostMessage's arguments for the next message of conv and
// the events announce makes of it, numbered after the conversation's last
// event.
func messagePost(conv *svcchatdb.SvcchatConversation, m newMessage, announce func(svcchatdb.SvcchatMessage) []convEvent) (svcchatdb.PostMessageParams, error) {
	msg := svcchatdb.SvcchatMessage{PageID: conv.PageID, ConversationID: conv.ID, Seq: conv.LastMessageSeq + 1, ID: newMessageID(),
		Direction: m.Direction, Sender: m.Sender, AppID: m.AppID, Kind: m.Kind, TemplateName: m.TemplateName, Text: m.Text,
		SenderUserID: m.SenderUserID}
	evs := announce(msg)
	arg := svcchatdb.PostMessageParams{PageID: conv.PageID, ConversationID: conv.ID,
		MessageSeqBefore: conv.LastMessageSeq, EventSeqBefore: conv.LastEventSeq, ClearTyping: m.Direction == "outbound",
		ID: msg.ID, Direction: msg.Direction, Sender: msg.Sender, AppID: msg.AppID, Kind: msg.Kind, TemplateName: msg.TemplateName,
		Text: msg.Text, SenderUserID: msg.SenderUserID, EventPageID: conv.PageID, OrderingKey: orderingKey(conv.ID),
		EventUserID: conv.UserID, EventIds: make([]string, len(evs)), EventTypes: make([]string, len(evs)),
		EventData: make([]string, len(evs))}
	for i, e := range evs {
		e.data.setSequence(conv.LastEventSeq + 1 + int64(i))
		r, err := outbox.New(e.typ, arg.EventPageID, "", arg.OrderingKey, e.data)
		if err != nil {
			return arg, err
		}
		arg.EventIds[i], arg.EventTypes[i], arg.EventData[i] = r.ID, r.Type, string(r.Data)
	}
	return arg, nil
}

// posted brings conv's copy up to date with the message PostMessage stored
// as number seq.
func posted(conv *svcchatdb.SvcchatConversation, arg svcchatdb.PostMessageParams, seq int64) {
	conv.LastMessageSeq, conv.LastEventSeq = seq, conv.LastEventSeq+int64(len(arg.EventIds))
	if arg.ClearTyping {
		conv.TypingUntil = pgtype.Timestamptz{}
	}
}

// queuedPost is a message sent with COMMIT (pipetx): PostMessage's
// arguments and, once the transaction has run, what it stored.
type queuedPost struct {
	arg    svcchatdb.PostMessageParams
	row    svcchatdb.PostMessageRow
	stored bool
	// guard, an app's send's, makes the statement PostMessageIf
	// (queueSent), whose row (ifRow) also reports the versions the send
	// leaves.
	guard *postGuard
	ifRow svcchatdb.PostMessageIfRow
}

// postGuard is the versions of the conversation and of the opt-in record
// (empty when there is none) a send was decided on; no guard when the
// conversation's is empty (the send decided on what it locked).
type postGuard struct{ conversation, optIn string }

// queue queues the next message of conv, locked by tx, and the events
// announce makes of it, on tx.Last.
func (p *queuedPost) queue(ctx context.Context, tx *pipetx.Tx, conv *svcchatdb.SvcchatConversation, m newMessage, announce func(svcchatdb.SvcchatMessage) []convEvent) error {
	arg, err := messagePost(conv, m, announce)
	if err != nil {
		return err
	}
	p.arg = arg
	pipetx.QueueRow(tx.Last(), func(db pipetx.DBTX) { svcchatdb.New(db).PostMessage(ctx, p.arg) }, &p.row, &p.stored)
	return nil
}

// sentEventCount is how many events an app's send writes: page.message.sent
// and svcchat.message.sent (sentEvents).
const sentEventCount = 2

// queueSent queues an app's send m into conv on tx.Last: PostMessageIf,
// guarded by p.guard, which writes the message and the events sentEvents
// would make of it, their data built by the statement from the same
// values (the text is sent once, and no JSON is marshalled).
func (p *queuedPost) queueSent(ctx context.Context, tx *pipetx.Tx, conv *svcchatdb.SvcchatConversation, m newMessage) {
	arg := svcchatdb.PostMessageIfParams{PageID: conv.PageID, ConversationID: conv.ID, UserID: conv.UserID,
		MessageSeqBefore: conv.LastMessageSeq, EventSeqBefore: conv.LastEventSeq,
		Guarded: p.guard.conversation != "", ConversationVersion: p.guard.conversation, OptInVersion: p.guard.optIn,
		ID: newMessageID(), AppID: m.AppID, Kind: m.Kind, TemplateName: m.TemplateName, Text: m.Text,
		PageEventID: outbox.NewID(), SentEventID: outbox.NewID(),
		ControlHolder: holderName(Holder(conv.Holder), conv.HolderAppID)}
	pipetx.QueueRow(tx.Last(), func(db pipetx.DBTX) { svcchatdb.New(db).PostMessageIf(ctx, arg) }, &p.ifRow, &p.stored)
}

// done checks that the committed transaction stored the message and
// brings conv's copy up to date with it.
func (p *queuedPost) done(conv *svcchatdb.SvcchatConversation) error {
	if !p.stored {
		return errCountersMoved(conv.ID)
	}
	posted(conv, p.arg, p.row.Seq)
	return nil
}

// errCountersMoved is PostMessage storing nothing: the conversation's
// counters were not those its caller read under the row's lock.
func errCountersMoved(id int64) error {
	return fmt.Errorf("svcchat: conversation %d: its counters are not those read under its lock", id)
}

// sendShape is a message write's body, checked for exactly one of the two
// shapes of interface §2.1.
type sendShape struct {
	template bool
	// action is a sender action (typing_on, typing_off, mark_seen): no
	// message is sent.
	action       string
	recipient    string
	text         string
	templateName string
	params       map[string]string
}

// parseSend checks a message write's shape: a session message carries
// recipient_user_id and text and no type; a template message carries to,
// type "template", templateName and templateParams (string values; may be
// omitted for a template without parameters). Anything else is refused
// naming the first field that is wrong.
func parseSend(req *svcchatv1.SendMessageRequest) (sendShape, error) {
	if req.SenderAction != nil {
		switch req.GetSenderAction() {
		case actionTypingOn, actionTypingOff, actionMarkSeen:
		default:
			return sendShape{}, sdk.Invalid("sender_action", "Invalid parameter: sender_action must be typing_on, typing_off or mark_seen.")
		}
		switch {
		case req.Type != nil:
			return sendShape{}, sdk.Invalid("type", "Invalid parameter: type cannot be sent with sender_action.")
		case req.To != nil:
			return sendShape{}, sdk.Invalid("to", "Invalid parameter: a sender action names its recipient in recipient_user_id.")
		case req.Text != nil:
			return sendShape{}, sdk.Invalid("text", "Invalid parameter: text cannot be sent with sender_action; send the message separately.")
		case req.TemplateName != nil:
			return sendShape{}, sdk.Invalid("templateName", "Invalid parameter: templateName cannot be sent with sender_action.")
		case req.TemplateParams != nil:
			return sendShape{}, sdk.Invalid("templateParams", "Invalid parameter: templateParams cannot be sent with sender_action.")
		case req.RecipientUserId == nil:
			return sendShape{}, sdk.Invalid("recipient_user_id", "Invalid parameter: recipient_user_id is required with sender_action.")
		}
		return sendShape{action: req.GetSenderAction(), recipient: req.GetRecipientUserId()}, nil
	}
	if req.Type != nil {
		if req.GetType() != "template" {
			return sendShape{}, sdk.Invalid("type", `Invalid parameter: type must be "template" (a session message has no type).`)
		}
		switch {
		case req.RecipientUserId != nil:
			return sendShape{}, sdk.Invalid("recipient_user_id", "Invalid parameter: recipient_user_id is for session messages; a template message names its recipient in to.")
		case req.Text != nil:
			return sendShape{}, sdk.Invalid("text", "Invalid parameter: text is for session messages; a template message has templateName and templateParams.")
		case req.To == nil:
			return sendShape{}, sdk.Invalid("to", "Invalid parameter: to is required for a template message.")
		case req.TemplateName == nil || req.GetTemplateName() == "":
			return sendShape{}, sdk.Invalid("templateName", "Invalid parameter: templateName is required for a template message.")
		}
		params, err := templateParams(req.GetTemplateParams())
		if err != nil {
			return sendShape{}, err
		}
		return sendShape{template: true, recipient: req.GetTo(), templateName: req.GetTemplateName(), params: params}, nil
	}
	switch {
	case req.To != nil:
		return sendShape{}, sdk.Invalid("to", `Invalid parameter: to is for template messages (with type "template"); a session message uses recipient_user_id.`)
	case req.TemplateName != nil:
		return sendShape{}, sdk.Invalid("templateName", `Invalid parameter: templateName needs type "template".`)
	case req.TemplateParams != nil:
		return sendShape{}, sdk.Invalid("templateParams", `Invalid parameter: templateParams needs type "template".`)
	case req.RecipientUserId == nil:
		return sendShape{}, sdk.Invalid("recipient_user_id", "Invalid parameter: recipient_user_id is required for a session message.")
	case req.Text == nil:
		return sendShape{}, sdk.Invalid("text", "Invalid parameter: text is required for a session message.")
	}
	return sendShape{recipient: req.GetRecipientUserId(), text: req.GetText()}, nil
}

// templateParams reads templateParams, whose values must be strings
// (132000 otherwise).
func templateParams(st *structpb.Struct) (map[string]string, error) {
	out := make(map[string]string, len(st.GetFields()))
	names := make([]string, 0, len(st.GetFields()))
	for k := range st.GetFields() {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		sv, ok := st.GetFields()[k].GetKind().(*structpb.Value_StringValue)
		if !ok {
			return nil, errTemplateParams("templateParams." + k + " must be a string")
		}
		out[k] = sv.StringValue
	}
	return out, nil
}

// sendMessage sends a session or template message as the Page and makes
// the sending app the conversation's holder.
func (s *service) sendMessage(ctx context.Context, call *sdk.Call, req *svcchatv1.SendMessageRequest) (*svcchatv1.SendMessageResponse, error) {
	shape, err := parseSend(req)
	if err != nil {
		return nil, err
	}
	page, err := pageForChat(ctx, call, req.GetPageId())
	if err != nil {
		return nil, err
	}
	if shape.action != "" {
		if err := s.sendAction(ctx, req.GetPageId(), shape.recipient, shape.action); err != nil {
			return nil, err
		}
		return &svcchatv1.SendMessageResponse{RecipientId: shape.recipient}, nil
	}
	p := call.Principal()
	kind, text := "session", shape.text
	var templateName *string
	if shape.template {
		t, err := s.templateFor(ctx, call, p.AppID, shape.templateName)
		if err != nil {
			return nil, err
		}
		sendable := t.Status == StatusApproved || (!p.Live && t.Status == StatusDraft)
		if !sendable {
			return nil, errTemplateNotApproved(t.Name)
		}
		if text, err = render(t, shape.params); err != nil {
			return nil, errTemplateParams(err.Error())
		}
		kind, templateName = "template", &t.Name
	}
	pageID, recipient := req.GetPageId(), shape.recipient
	out := newMessage{Direction: "outbound", Sender: "app", AppID: p.AppID, Kind: kind, TemplateName: templateName, Text: text}
	// decide is the send's rules, on the state st holds (locked, or as the
	// last send left it), queuing the message on tx.Last.
	decide := func(ctx context.Context, tx *pipetx.Tx, st *sendState, post *queuedPost) error {
		if err := sendRefusal(st.barrier); err != nil {
			return err
		}
		conv, found, opt := &st.conv, st.found, st.optIn()
		switch {
		case OptInStatus(opt.Status) == OptInOptedOut:
			return errOptedOut()
		case !shape.template && (!found || !windowOpen(conv.WindowExpiresAt)):
			return errWindowClosed()
		case shape.template && !allowsTemplates(OptInStatus(opt.Status), opt.Purposes):
			return errNoOptIn()
		}
		if !found {
			// An opted-in user who never wrote: the Page starts the thread.
			return errNoThread
		}
		if _, err := applyControl(ctx, tx, conv, ControlRequest{Action: ActionAppSend, ActorApp: p.AppID}, p.AppID); err != nil {
			return err
		}
		// Under the row lock the counters cannot move: the guard in
		// PostMessageIf is a check, and what it finds commits either way.
		post.queueSent(ctx, tx, conv, out)
		return nil
	}
	key := sendKey{pageID, recipient}
	w := sendWorks.Get().(*sendWork)
	defer w.release()
	st, post := &w.st, &w.post
	// One round trip when the last send of this process to the user left
	// its state and nothing changed since (sendcache.go).
	var left *sendSnapshot
	defer func() { s.sends.end(key, left) }()
	if snap, ok := s.sends.begin(key); ok {
		*st = sendState{pageID: pageID, userID: recipient, conv: snap.conv, found: true, opt: snap.opt, optFound: snap.optFound}
		w.guard = postGuard{conversation: snap.convVersion, optIn: snap.optInVersion}
		*post = queuedPost{guard: &w.guard}
		decided := false
		err = s.oneTrip.RunOne(ctx, lockBatch(ctx, pageID, recipient), func(tx *pipetx.Tx) error {
			if err := decide(ctx, tx, st, post); err != nil {
				return err
			}
			decided = true
			return nil
		})
		switch {
		case decided && err != nil:
			return nil, err // sent: its outcome is that of any failed commit
		case decided && post.stored:
			s.sends.oneTrip.Add(1)
			res, kept := sent(key, st, post, snap)
			left = kept
			return res, nil
		}
		// Refused or changed since: decide on what the locks read.
	}
	// Two round trips (pipetx): BEGIN with the locks of the conversation
	// and of the opt-in record, then the message and its events with COMMIT
	// (a conversation's first template takes one more transaction).
	// A user who never wrote has no conversation to lock: the first try
	// finds that out and ends, and the second creates the conversation
	// before it locks the opt-in record (see startLocks).
	for start := false; ; start = true {
		w.guard = postGuard{}
		*st, *post = sendState{}, queuedPost{guard: &w.guard}
		var first *pgx.Batch
		if start {
			first = st.startLocks(ctx, pageID, recipient, initialHolder(page.InboxAutomation))
		} else {
			first = st.locks(ctx, pageID, recipient)
		}
		st.queueBarrier(ctx, first, pageID, recipient)
		err = pipetx.Run(ctx, s.pool, first, func(tx *pipetx.Tx) error { return decide(ctx, tx, st, post) })
		if !errors.Is(err, errNoThread) || start {
			break
		}
	}
	if err == nil && !post.stored {
		err = errCountersMoved(st.conv.ID)
	}
	if err != nil {
		return nil, err
	}
	res, kept := sent(key, st, post, nil)
	left = kept
	return res, nil
}

// sendWork is what an app's send decides on and queues, kept for the next
// send once it has answered (the transaction's callbacks have run by then):
// a send allocated it every time otherwise.
type sendWork struct {
	st    sendState
	post  queuedPost
	guard postGuard
}

var sendWorks = sync.Pool{New: func() any { return new(sendWork) }}

// release clears w and returns it to the pool.
func (w *sendWork) release() {
	*w = sendWork{}
	sendWorks.Put(w)
}

// sent is the answer to an app's send that stored its message, and the
// state it leaves for the next send to the user, written into reuse if
// not nil (the snapshot the send decided on, which no one else holds).
func sent(key sendKey, st *sendState, post *queuedPost, reuse *sendSnapshot) (*svcchatv1.SendMessageResponse, *sendSnapshot) {
	st.conv.LastMessageSeq, st.conv.LastEventSeq = post.ifRow.Seq, st.conv.LastEventSeq+sentEventCount
	st.conv.TypingUntil = pgtype.Timestamptz{} // a message from the Page ends its typing indicator
	snap := reuse
	if snap == nil {
		snap = new(sendSnapshot)
	}
	*snap = sendSnapshot{conv: st.conv, opt: st.opt, optFound: st.optFound,
		convVersion: post.ifRow.ConversationVersion, optInVersion: post.ifRow.OptInVersion, at: time.Now()}
	return &svcchatv1.SendMessageResponse{RecipientId: key.userID, MessageId: post.ifRow.ID, ConversationId: sdk.FormatID(st.conv.ID)}, snap
}

// sentEvents announces a message the Page sent into conv (an app's, a
// human's or the assistant's): page.message.sent and svcchat.message.sent.
func sentEvents(conv *svcchatdb.SvcchatConversation) func(svcchatdb.SvcchatMessage) []convEvent {
	return func(msg svcchatdb.SvcchatMessage) []convEvent { return messageSent(conv, msg) }
}

// messageSent is sentEvents' events of msg. PostMessageIf builds the same
// data in SQL for an app's send: a change here is a change there
// (TestAnAppsSendWritesTheEventsMessageSentMarshals holds them together).
func messageSent(conv *svcchatdb.SvcchatConversation, msg svcchatdb.SvcchatMessage) []convEvent {
	cid := sdk.FormatID(conv.ID)
	page := &pageMessageData{
		ConversationID: cid, MessageID: msg.ID, PageID: conv.PageID, UserID: conv.UserID,
		Text: msg.Text, Kind: msg.Kind, TemplateName: msg.TemplateName,
	}
	var d messageSentData
	d.Conversation.ID, d.Conversation.PageID, d.Conversation.UserID = cid, conv.PageID, conv.UserID
	d.Conversation.ControlHolder = holderName(Holder(conv.Holder), conv.HolderAppID)
	d.Message.ID, d.Message.Text, d.Message.Kind, d.Message.TemplateName, d.Message.AppID =
		msg.ID, msg.Text, msg.Kind, msg.TemplateName, msg.AppID
	return []convEvent{{EventPageMessageSent, page}, {EventMessageSent, &d}}
}

// sendState is what a write of the Page to a user decides on: their
// conversation and their opt-in record with the Page, both locked.
type sendState struct {
	pageID, userID  string
	conv            svcchatdb.SvcchatConversation
	found, optFound bool
	opt             svcchatdb.SvcchatOptIn
	// barrier is what refuses any send of the Page to the user (the Page
	// restricted, the user's block), read in the first round trip of the
	// writes that queue it (queueBarrier).
	barrier svcchatdb.SendBarrierRow
}

// locks is the batch that locks the conversation and the opt-in record of
// pageID with userID, to send with BEGIN (pipetx.Run); their rows are in
// st once it has run.
func (st *sendState) locks(ctx context.Context, pageID, userID string) *pgx.Batch {
	b := &pgx.Batch{}
	pipetx.QueueRow(b, func(db pipetx.DBTX) {
		svcchatdb.New(db).LockConversationByUser(ctx, svcchatdb.LockConversationByUserParams{PageID: pageID, UserID: userID})
	}, &st.conv, &st.found)
	st.lockOptIn(ctx, b, pageID, userID)
	return b
}

// lockBatch is locks for a send decided beforehand (pipetx.RunOne): the
// conversation's, its row neither read nor sent. PostMessageIf, next, takes
// the opt-in record's (the same locks in the same order, one statement
// fewer).
func lockBatch(ctx context.Context, pageID, userID string) *pgx.Batch {
	b := &pgx.Batch{}
	pipetx.Queue(b, func(db pipetx.DBTX) {
		_ = svcchatdb.New(db).LockConversationOnly(ctx, svcchatdb.LockConversationOnlyParams{PageID: pageID, UserID: userID})
	})
	return b
}

// openLocks is locks for a user's write: the conversation is opened (or
// reused, its window restarted) by an upsert, which locks it.
func (st *sendState) openLocks(ctx context.Context, pageID, userID string, holder Holder) *pgx.Batch {
	b := &pgx.Batch{}
	pipetx.QueueRow(b, func(db pipetx.DBTX) {
		svcchatdb.New(db).OpenConversation(ctx, svcchatdb.OpenConversationParams{PageID: pageID, UserID: userID, Holder: string(holder)})
	}, &st.conv, nil) // an upsert always returns its row: none is an error
	st.lockOptIn(ctx, b, pageID, userID)
	return b
}

// lockOptIn queues the opt-in record's lock on b, after the
// conversation's: the order every writer takes them in.
func (st *sendState) lockOptIn(ctx context.Context, b *pgx.Batch, pageID, userID string) {
	st.pageID, st.userID = pageID, userID
	pipetx.QueueRow(b, func(db pipetx.DBTX) {
		svcchatdb.New(db).LockOptIn(ctx, svcchatdb.LockOptInParams{PageID: pageID, UserID: userID})
	}, &st.opt, &st.optFound)
}

// optIn is the user's opt-in record; no record reads as status none.
func (st *sendState) optIn() svcchatdb.SvcchatOptIn {
	if !st.optFound {
		return noOptIn(st.pageID, st.userID)
	}
	return st.opt
}

// lockConversation locks the conversation of a Page with a user, if any.
func lockConversation(ctx context.Context, q *svcchatdb.Queries, pageID, userID string) (svcchatdb.SvcchatConversation, bool, error) {
	conv, err := q.LockConversationByUser(ctx, svcchatdb.LockConversationByUserParams{PageID: pageID, UserID: userID})
	if errors.Is(err, pgx.ErrNoRows) {
		return conv, false, nil
	}
	return conv, err == nil, err
}

// errNoThread ends a send's transaction that found no conversation to
// lock, for startLocks' to create it.
var errNoThread = errors.New("svcchat: no conversation to lock")

// startLocks is locks for a conversation the Page starts (a template to an
// opted-in user who never wrote): it creates the conversation (no session
// window yet) before it locks it and then the opt-in record, the order
// every writer takes them in. Created later, under the opt-in record's
// lock, it would wait for a user's first write creating it at the same
// moment, which waits for that lock: a deadlock. A send refused after all
// rolls the new conversation back with it.
func (st *sendState) startLocks(ctx context.Context, pageID, userID string, holder Holder) *pgx.Batch {
	b := &pgx.Batch{}
	pipetx.Queue(b, func(db pipetx.DBTX) {
		svcchatdb.New(db).CreateConversation(ctx, svcchatdb.CreateConversationParams{PageID: pageID, UserID: userID, Holder: string(holder)})
	})
	b.QueuedQueries = append(b.QueuedQueries, st.locks(ctx, pageID, userID).QueuedQueries...)
	return b
}

// lockOptIn locks a user's opt-in record with a Page; no record reads as
// status none.
func lockOptIn(ctx context.Context, q *svcchatdb.Queries, pageID, userID string) (svcchatdb.SvcchatOptIn, error) {
	opt, err := q.LockOptIn(ctx, svcchatdb.LockOptInParams{PageID: pageID, UserID: userID})
	if errors.Is(err, pgx.ErrNoRows) {
		return noOptIn(pageID, userID), nil
	}
	return opt, err
}

// noOptIn is the opt-in record of a user who has none with a Page.
func noOptIn(pageID, userID string) svcchatdb.SvcchatOptIn {
	return svcchatdb.SvcchatOptIn{PageID: pageID, UserID: userID, Status: string(OptInNone), Purposes: []string{}}
}

// windowOpen tells whether a session window is open now.
func windowOpen(expires pgtype.Timestamptz) bool { return msgwindow.Open(expires) }

func rfc3339(t pgtype.Timestamptz) string { return t.Time.UTC().Format(time.RFC3339) }
