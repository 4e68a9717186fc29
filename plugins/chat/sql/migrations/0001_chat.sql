-- The migration runner makes the schema: the plugin's role owns it but may
-- not create schemas. An earlier text of this file made it too; a database
-- that applied that text is current:
-- migrate:replaces 1eb3f3a1d552078728086e57d39afb61f8137774d0e7f068604c14a7df6046e3
-- The chat plugin's schema: the consumer chat app's own data. Direct
-- messages are between users and belong to no Page or app; they are never
-- exposed through the Graph, to apps or in webhooks (CONTRACT §5).

CREATE SEQUENCE chat.thread_id_seq START WITH 4000000001;

-- One thread per pair of users; user_low < user_high (as text) names the
-- pair once. Its row is the lock that numbers the thread's messages.
CREATE TABLE chat.direct_threads (
    id               bigint      NOT NULL DEFAULT nextval('chat.thread_id_seq') PRIMARY KEY,
    user_low         text        NOT NULL,
    user_high        text        NOT NULL,
    last_message_seq bigint      NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_low, user_high),
    CHECK (user_low < user_high)
);
CREATE INDEX direct_threads_low ON chat.direct_threads (user_low, updated_at DESC);
CREATE INDEX direct_threads_high ON chat.direct_threads (user_high, updated_at DESC);

CREATE TABLE chat.direct_messages (
    thread_id      bigint      NOT NULL REFERENCES chat.direct_threads (id),
    seq            bigint      NOT NULL,
    -- "dm_" and random characters.
    id             text        NOT NULL UNIQUE,
    sender_user_id text        NOT NULL,
    text           text        NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (thread_id, seq)
);

-- Sponsored items shown at the top of the chats list; the newest active
-- one is shown.
CREATE TABLE chat.sponsored_ads (
    id         bigserial   PRIMARY KEY,
    title      text        NOT NULL,
    body       text        NOT NULL,
    link_url   text        NOT NULL,
    sponsor    text        NOT NULL,
    active     boolean     NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now()
);
