-- Issue 18: ordered conversation events, message status, sender actions and
-- handover expiry with its history (CONTRACT §14).

ALTER TABLE svcchat.conversations
    -- The last data.sequence given to an event of this conversation. It is
    -- raised under the conversation's row lock, in the event's own
    -- transaction, so the numbers are gap-free and in commit order.
    ADD COLUMN last_event_seq     bigint      NOT NULL DEFAULT 0,
    -- The Page is shown typing in the user's thread until this time (an
    -- expiry rather than a timer: nothing has to run to stop it).
    ADD COLUMN typing_until       timestamptz,
    -- A take or pass with expires_in: control goes back to the state in
    -- expire_* at control_expires_at unless the holder writes first; each
    -- message from the holder restarts the expiry (control_expires_in
    -- seconds from that message).
    ADD COLUMN control_expires_at timestamptz,
    ADD COLUMN control_expires_in integer,
    ADD COLUMN expire_holder      text        NOT NULL DEFAULT '',
    ADD COLUMN expire_app_id      text        NOT NULL DEFAULT '',
    ADD COLUMN expire_previous    text        NOT NULL DEFAULT '';

-- The expiry job looks only at conversations whose control lapses.
CREATE INDEX conversations_control_due ON svcchat.conversations (control_expires_at)
    WHERE control_expires_at IS NOT NULL;

-- Message status (sent → delivered → read, or failed with error). The
-- Page's messages move as the user's chat app fetches and reads them; the
-- user's own become read when the Page sends mark_seen.
ALTER TABLE svcchat.messages
    ADD COLUMN status    text NOT NULL DEFAULT 'sent' CHECK (status IN ('sent', 'delivered', 'read', 'failed')),
    ADD COLUMN error     text NOT NULL DEFAULT '',
    ADD COLUMN status_at timestamptz;

-- The messages not yet read: what a fetch, a read or mark_seen marks.
CREATE INDEX messages_unread ON svcchat.messages (page_id, conversation_id, seq)
    WHERE status IN ('sent', 'delivered');

-- Every change of a conversation's control, for the handovers node. seq is
-- the data.sequence of its svcchat.handover event.
CREATE TABLE svcchat.handovers (
    page_id         text        NOT NULL,
    conversation_id bigint      NOT NULL,
    seq             bigint      NOT NULL,
    action          text        NOT NULL,
    previous_holder text        NOT NULL,
    new_holder      text        NOT NULL,
    app_id          text        NOT NULL DEFAULT '',
    expires_at      timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (page_id, conversation_id, seq),
    FOREIGN KEY (page_id, conversation_id) REFERENCES svcchat.conversations (page_id, id)
);
