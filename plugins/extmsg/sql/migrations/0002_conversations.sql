-- Issue 31: the messaging-app channel. An account's channel identity is a
-- phone-number-like string derived from its id (as WhatsApp's business
-- phone number), unique across accounts. A conversation is one person of
-- the messaging app (a user of the platform) with one account; their last
-- message opens the customer window (plugins/internal/msgwindow). Messages
-- are keyed by their account first, as conversations are.

ALTER TABLE extmsg.accounts
    ADD COLUMN phone_number text GENERATED ALWAYS AS ('+1555' || lpad((id - 9000000000)::text, 7, '0')) STORED NOT NULL UNIQUE;

CREATE SEQUENCE extmsg.conversation_id_seq START WITH 9200000001;

CREATE TABLE extmsg.conversations (
    account_id        bigint      NOT NULL REFERENCES extmsg.accounts (id),
    id                bigint      NOT NULL DEFAULT nextval('extmsg.conversation_id_seq') UNIQUE,
    user_id           text        NOT NULL,
    -- End of the customer window; NULL until the person first writes.
    window_expires_at timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, id),
    UNIQUE (account_id, user_id)
);

ALTER SEQUENCE extmsg.conversation_id_seq OWNED BY extmsg.conversations.id;

-- A person's threads, newest first, and what leaving erases.
CREATE INDEX conversations_user ON extmsg.conversations (user_id, updated_at DESC);

CREATE SEQUENCE extmsg.message_id_seq START WITH 9300000001;

-- status follows plugins/internal/msgstatus's table; an inbound message
-- (the person's) stays sent until the business reads it, which this
-- product does not track.
CREATE TABLE extmsg.messages (
    account_id      bigint      NOT NULL,
    conversation_id bigint      NOT NULL,
    id              bigint      NOT NULL DEFAULT nextval('extmsg.message_id_seq') UNIQUE,
    direction       text        NOT NULL CHECK (direction IN ('inbound', 'outbound')),
    kind            text        NOT NULL CHECK (kind IN ('text', 'template')),
    text            text        NOT NULL,
    template_name   text,
    -- The app that sent an outbound message.
    app_id          text,
    status          text        NOT NULL DEFAULT 'sent' CHECK (status IN ('sent', 'delivered', 'read', 'failed')),
    error_code      integer,
    error_message   text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, id),
    FOREIGN KEY (account_id, conversation_id) REFERENCES extmsg.conversations (account_id, id)
);

ALTER SEQUENCE extmsg.message_id_seq OWNED BY extmsg.messages.id;

CREATE INDEX messages_conversation ON extmsg.messages (account_id, conversation_id, id);
