package main

import (
	"context"
	"errors"
	"net/http"

	"github.com/jackc/pgx/v5"

	extmsgv1 "github.com/svcplatform/svc/gen/svc/extmsg/v1"
	"github.com/svcplatform/svc/plugins/extmsg/internal/extmsgdb"
	"github.com/svcplatform/svc/plugins/internal/msgstatus"
	"github.com/svcplatform/svc/plugins/internal/msgtemplate"
	"github.com/svcplatform/svc/plugins/internal/msgwindow"
	"github.com/svcplatform/svc/sdk"
)

// Message kinds and directions, as stored and answered.
const (
	kindText     = "text"
	kindTemplate = "template"
	inbound      = "inbound"
	outbound     = "outbound"
)

// undeliverable is why a message to someone who is not a user of the
// messaging app fails (WhatsApp's 131026, "Message undeliverable").
var undeliverable = messageError{Code: 131026, Message: "Message undeliverable: the recipient is not a user of the messaging app."}

// outgoing is a business message ready to store: its kind, its text as the
// person will see it, and its template's name.
type outgoing struct {
	kind     string
	text     string
	template *string
}

// parseSend checks a send's shape: type text with text only, type
// template with template only (the gateway has checked each field).
func parseSend(req *extmsgv1.SendMessageRequest) error {
	switch {
	case req.GetType() == kindText && req.GetTemplate() != nil:
		return sdk.Invalid("template", "Invalid parameter: template goes with type template, not text.")
	case req.GetType() == kindText && req.GetText() == nil:
		return sdk.Invalid("text", "Invalid parameter: type text needs text.body.")
	case req.GetType() == kindTemplate && req.GetText() != nil:
		return sdk.Invalid("text", "Invalid parameter: text goes with type text, not template.")
	case req.GetType() == kindTemplate && req.GetTemplate() == nil:
		return sdk.Invalid("template", "Invalid parameter: type template needs template.name.")
	}
	if _, ok := sdk.ParseID(req.GetTo()); !ok {
		return sdk.Invalid("to", "Invalid parameter: to must be the user id of a person of the messaging app.")
	}
	return nil
}

// render makes a template send's text from the account's template, which
// must be approved (a development app approves its own drafts; there is
// no sending a draft, as on WhatsApp).
func (s *service) render(ctx context.Context, acct extmsgdb.ExtmsgAccount, t *extmsgv1.TemplateBody) (outgoing, error) {
	row, err := extmsgdb.New(s.pool).GetTemplate(ctx, extmsgdb.GetTemplateParams{AccountID: acct.ID, Name: t.GetName()})
	if errors.Is(err, pgx.ErrNoRows) {
		e := errUnknownTemplate(t.GetName())
		e.Field = "template.name"
		return outgoing{}, e
	}
	if err != nil {
		return outgoing{}, err
	}
	if msgtemplate.Status(row.Status) != msgtemplate.Approved {
		return outgoing{}, errTemplateNotApproved(row.Name, row.Status)
	}
	values := t.GetParams()
	if values == nil {
		values = map[string]string{}
	}
	text, err := msgtemplate.Render(row.Name, row.Body, row.Params, values)
	if err != nil {
		return outgoing{}, errTemplateParams(err.Error())
	}
	return outgoing{kind: kindTemplate, text: text, template: &row.Name}, nil
}

// sendMessage sends a business message: text inside the customer window,
// an approved template at any time. It is stored sent and announced by
// extmsg.message.sent in the transaction that stores it; to someone who is
// not a user of the messaging app it fails at once (extmsg.message.failed).
func (s *service) sendMessage(ctx context.Context, call *sdk.Call, req *extmsgv1.SendMessageRequest) (*extmsgv1.SendMessageResponse, error) {
	if err := parseSend(req); err != nil {
		return nil, err
	}
	acct, err := s.account(ctx, call, req.GetAccountId())
	if err != nil {
		return nil, err
	}
	out := outgoing{kind: kindText, text: req.GetText().GetBody()}
	if req.GetType() == kindTemplate {
		if out, err = s.render(ctx, acct, req.GetTemplate()); err != nil {
			return nil, err
		}
	}
	person, err := call.Host().UserInfo(ctx, req.GetTo())
	if err != nil {
		return nil, err
	}
	var msg extmsgdb.ExtmsgMessage
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := extmsgdb.New(tx)
		var conv extmsgdb.ExtmsgConversation
		if out.kind == kindText {
			// Free-form text needs the person's open window: never make a
			// conversation for it.
			found, err := q.ConversationWith(ctx, extmsgdb.ConversationWithParams{AccountID: acct.ID, UserID: req.GetTo()})
			if errors.Is(err, pgx.ErrNoRows) || err == nil && !msgwindow.Open(found.WindowExpiresAt) {
				return errWindowClosed()
			}
			if err != nil {
				return err
			}
			conv = found
		} else if conv, err = q.BusinessWrites(ctx, extmsgdb.BusinessWritesParams{AccountID: acct.ID, UserID: req.GetTo()}); err != nil {
			return err
		}
		msg, err = q.InsertMessage(ctx, extmsgdb.InsertMessageParams{AccountID: acct.ID, ConversationID: conv.ID, Direction: outbound,
			Kind: out.kind, Text: out.text, TemplateName: out.template, AppID: &acct.AppID})
		if err != nil {
			return err
		}
		sent := &statusData{AccountID: sdk.FormatID(acct.ID), ConversationID: sdk.FormatID(conv.ID), MessageID: sdk.FormatID(msg.ID),
			UserID: conv.UserID, Status: string(msgstatus.Sent)}
		if err := emit(ctx, tx, acct, conv, EventSent, sent); err != nil {
			return err
		}
		if !person.Exists {
			_, err = mark(ctx, tx, acct, conv, msgstatus.Undeliverable, msg.ID, &undeliverable)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &extmsgv1.SendMessageResponse{ConversationId: sdk.FormatID(msg.ConversationID), MessageId: sdk.FormatID(msg.ID),
		Status: string(msgstatus.Sent)}, nil
}

// listConversations lists the account's conversations for its app.
func (s *service) listConversations(ctx context.Context, call *sdk.Call, req *extmsgv1.ListConversationsRequest) (*extmsgv1.ListConversationsResponse, error) {
	acct, err := s.account(ctx, call, req.GetAccountId())
	if err != nil {
		return nil, err
	}
	rows, err := extmsgdb.New(s.pool).ListConversations(ctx, acct.ID)
	if err != nil {
		return nil, err
	}
	res := &extmsgv1.ListConversationsResponse{Data: make([]*extmsgv1.Conversation, len(rows))}
	for i, c := range rows {
		res.Data[i] = conversationProto(c)
	}
	return res, nil
}

// listMessages lists a conversation of the account, newest first.
func (s *service) listMessages(ctx context.Context, call *sdk.Call, req *extmsgv1.ListMessagesRequest) (*extmsgv1.ListMessagesResponse, error) {
	acct, err := s.account(ctx, call, req.GetAccountId())
	if err != nil {
		return nil, err
	}
	q := extmsgdb.New(s.pool)
	conv, err := conversationOf(ctx, q, req.GetConversationId(), func(c extmsgdb.ExtmsgConversation) bool { return c.AccountID == acct.ID })
	if err != nil {
		return nil, err
	}
	rows, err := q.ListMessages(ctx, extmsgdb.ListMessagesParams{AccountID: acct.ID, ConversationID: conv.ID})
	if err != nil {
		return nil, err
	}
	res := &extmsgv1.ListMessagesResponse{Data: make([]*extmsgv1.Message, len(rows))}
	for i, m := range rows {
		res.Data[i] = messageProto(m)
	}
	return res, nil
}

// conversationOf reads the conversation named id when mine says it is the
// caller's; any other does not exist for the caller.
func conversationOf(ctx context.Context, q *extmsgdb.Queries, id string, mine func(extmsgdb.ExtmsgConversation) bool) (extmsgdb.ExtmsgConversation, error) {
	notFound := sdk.NotFound("Conversation " + id)
	n, ok := sdk.ParseID(id)
	if !ok {
		return extmsgdb.ExtmsgConversation{}, notFound
	}
	conv, err := q.GetConversation(ctx, n)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !mine(conv) {
		return conv, notFound
	}
	return conv, err
}

func conversationProto(c extmsgdb.ExtmsgConversation) *extmsgv1.Conversation {
	window := ""
	if msgwindow.Open(c.WindowExpiresAt) {
		window = rfc3339(c.WindowExpiresAt)
	}
	return &extmsgv1.Conversation{Id: sdk.FormatID(c.ID), AccountId: sdk.FormatID(c.AccountID), UserId: c.UserID,
		WindowExpiresAt: window, UpdatedAt: rfc3339(c.UpdatedAt)}
}

func messageProto(m extmsgdb.ExtmsgMessage) *extmsgv1.Message {
	res := &extmsgv1.Message{Id: sdk.FormatID(m.ID), ConversationId: sdk.FormatID(m.ConversationID), Direction: m.Direction,
		Kind: m.Kind, Text: m.Text, Status: m.Status, CreatedAt: rfc3339(m.CreatedAt)}
	if m.TemplateName != nil {
		res.TemplateName = *m.TemplateName
	}
	if m.ErrorCode != nil {
		res.Error = &extmsgv1.MessageError{Code: *m.ErrorCode}
		if m.ErrorMessage != nil {
			res.Error.Message = *m.ErrorMessage
		}
	}
	return res
}

// The refusals of sending, as svcchat answers the same conditions
// (CONTRACT §3); see docs/DECISIONS.md, "extmsg sends".

// errWindowClosed: free-form text outside the customer window (WhatsApp's
// 131047, "Re-engagement message"; ours is svcchat's 2018278).
func errWindowClosed() *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusBadRequest, Code: 10, Subcode: 2018278, Type: sdk.TypeMessaging,
		Message: "This message is sent outside of the allowed window: the person has not written to this business in the last 24 hours. Send a template message instead."}
}

func errTemplateNotApproved(name, status string) *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusForbidden, Code: 10, Subcode: 2018302, Type: sdk.TypeMessaging,
		Message: "Template " + name + " is " + status + "; only approved templates are sent.", Field: "template.name"}
}

func errTemplateParams(reason string) *sdk.Error {
	return &sdk.Error{HTTPStatus: http.StatusBadRequest, Code: 132000, Type: sdk.TypeMessaging,
		Message: "Invalid template parameters: " + reason + ".", Field: "template.params"}
}
