package floor

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/bench"
	"github.com/svcplatform/svc/internal/outbox"
)

// SendTx is svcchat's send transaction as an app's next send to a user
// goes (plugins/svcchat, pipetx.RunOne): between BEGIN and COMMIT, in one
// pipelined round trip, the statements of LockConversationOnly,
// LockOptInOnly and PostMessageIf (plugins/svcchat/sql/queries). The last
// counts from the locked row rather than checking the counters read (a
// pipeline cannot carry a result into the next statement) and leaves out
// the guard on the rows' versions (it only reads what the locks hold); its
// event data is fixed, of the size svcchat writes. The events go to
// SendSchema's copy of core.outbox, where the webhook dispatcher does not
// see them. Parameters are sqlc's (@page_id, @user_id, @app_id,
// @message_id, @event_id, @text), bound with bench.BindNamed: to pgbench
// variables for the SQL-alone reference (benchreport) and to positional
// ones for the floor (SendStatements).
var SendTx = []string{
	`SELECT 1 FROM svcchat.conversations WHERE page_id = @page_id AND user_id = @user_id FOR UPDATE`,
	`SELECT 1 FROM svcchat.opt_ins WHERE page_id = @page_id AND user_id = @user_id FOR UPDATE`,
	`WITH counters AS (
    UPDATE svcchat.conversations c
    SET last_message_seq = c.last_message_seq + 1, last_event_seq = c.last_event_seq + 2, updated_at = now(), typing_until = NULL
    WHERE c.page_id = @page_id AND c.user_id = @user_id
    RETURNING c.page_id, c.id, c.last_message_seq
), message AS (
    INSERT INTO svcchat.messages (page_id, conversation_id, seq, id, direction, sender, app_id, kind, template_name, text, sender_user_id)
    SELECT counters.page_id, counters.id, counters.last_message_seq, @message_id,
           'outbound', 'app', @app_id, 'session', NULL, @text, ''
    FROM counters
    RETURNING id, seq, page_id, conversation_id
), emitted AS (
    INSERT INTO svcbench_send.outbox (id, type, page_id, data, ordering_key)
    SELECT @event_id::text || '_' || ev.n, ev.t, message.page_id,
           ('{"conversationId": "2000000001", "messageId": "m_0123456789ABCDEFGHIJKLMNOP", "pageId": "100000000000003", "userId": "100000000000065", "text": "pgbench reply: ☕ 咖啡 🚀", "kind": "session", "templateName": null, "sequence": 1}')::jsonb,
           'svcchat.conversation:' || message.conversation_id::text
    FROM message, unnest(ARRAY['page.message.sent', 'svcchat.message.sent']) WITH ORDINALITY AS ev(t, n)
)
SELECT id, conversation_id FROM message`,
}

// SendSchema makes the copy of core.outbox SendTx's events go to (same
// columns and indexes); DropSendSchema removes it.
const (
	SendSchema = `
DROP SCHEMA IF EXISTS svcbench_send CASCADE;
CREATE SCHEMA svcbench_send;
CREATE TABLE svcbench_send.outbox (LIKE core.outbox INCLUDING ALL);
`
	DropSendSchema = "DROP SCHEMA IF EXISTS svcbench_send CASCADE"
)

// sendParams are SendTx's parameters in the order the floor passes them.
var sendParams = []string{"page_id", "user_id", "app_id", "message_id", "event_id", "text"}

// SendStatements binds SendTx's parameters to positional ones ($1 page,
// $2 recipient, $3 app, $4 message id, $5 event id prefix, $6 text), as
// the floor's send passes them.
func SendStatements() ([]string, error) {
	args := make(map[string]string, len(sendParams))
	for i, name := range sendParams {
		args[name] = "$" + strconv.Itoa(i+1)
	}
	out := make([]string, len(SendTx))
	for i, q := range SendTx {
		var err error
		if out[i], err = bench.BindNamed(q, args); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SendAnswer is the Graph's answer to a Page message send
// (svcchat.v1.SendMessageResponse under its proto names).
type SendAnswer struct {
	RecipientID    string `json:"recipient_id"`
	MessageID      string `json:"message_id"`
	ConversationID string `json:"conversation_id"`
}

// send runs SendTx for the Page's conversation with the recipient, as one
// pipelined round trip (BEGIN, the two locks, the message with its
// counters and events, COMMIT), and answers as the gateway does.
func (s *Server) send(w http.ResponseWriter, r *http.Request, page string) {
	var in struct {
		RecipientUserID string `json:"recipient_user_id"`
		Text            string `json:"text"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.RecipientUserID == "" || in.Text == "" {
		http.Error(w, "a JSON body with recipient_user_id and text is required", http.StatusBadRequest)
		return
	}
	eventID := outbox.NewID()
	messageID := "m_" + strings.TrimPrefix(eventID, "evt_")
	user := in.RecipientUserID
	var b pgx.Batch
	b.Queue("BEGIN")
	b.Queue(s.cfg.Send[0], page, user)
	b.Queue(s.cfg.Send[1], page, user)
	var id string
	var conversation int64
	b.Queue(s.cfg.Send[2], page, user, s.cfg.AppID, messageID, eventID, in.Text).QueryRow(func(row pgx.Row) error {
		return row.Scan(&id, &conversation)
	})
	b.Queue("COMMIT")
	err := s.pool.SendBatch(r.Context(), &b).Close()
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		http.Error(w, "no conversation of the Page with this user", http.StatusBadRequest)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, SendAnswer{RecipientID: user, MessageID: id, ConversationID: strconv.FormatInt(conversation, 10)})
}
