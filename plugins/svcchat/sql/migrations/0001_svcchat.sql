-- The migration runner makes the schema: the plugin's role owns it but may
-- not create schemas. An earlier text of this file made it too; a database
-- that applied that text is current:
-- migrate:replaces 17678080e72bb90da8ad7a99f2303f5f67f39adf37fa3c6902d7a74742749559
-- The svcchat plugin's schema: Page business messaging (CONTRACT §5).
--
-- Every Page-owned table carries page_id and every key of it starts with
-- page_id, so the tables can be distributed by Page (Citus) with
-- conversations, messages and opt-ins of one Page on one shard. Templates
-- belong to an app, not to a Page: they are keyed by app_id (a small table,
-- read on template sends to any Page; under Citus a reference table or one
-- distributed by app_id).

-- Conversation ids are decimal strings to clients (CONTRACT §1).
CREATE SEQUENCE svcchat.conversation_id_seq START WITH 2000000001;

-- One conversation per (Page, user). Its row is the lock that serialises
-- everything that changes the conversation: messages either way, the
-- session window, the control holder.
CREATE TABLE svcchat.conversations (
    page_id           text        NOT NULL,
    id                bigint      NOT NULL DEFAULT nextval('svcchat.conversation_id_seq'),
    user_id           text        NOT NULL,
    -- Who answers: the built-in assistant, a human Page manager, or an app.
    holder            text        NOT NULL CHECK (holder IN ('svc_ai', 'page_human', 'app')),
    holder_app_id     text        NOT NULL DEFAULT '',
    -- The holder before an app took control (where return_thread_control
    -- goes by default).
    previous_holder   text        NOT NULL DEFAULT '' CHECK (previous_holder IN ('', 'svc_ai', 'page_human')),
    -- End of the 24-hour session window; NULL before the user ever wrote.
    window_expires_at timestamptz,
    -- Messages are numbered per conversation, in commit order.
    last_message_seq  bigint      NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (page_id, id),
    UNIQUE (page_id, user_id),
    CHECK ((holder = 'app') = (holder_app_id <> ''))
);

CREATE TABLE svcchat.messages (
    page_id         text        NOT NULL,
    conversation_id bigint      NOT NULL,
    seq             bigint      NOT NULL,
    -- "m_" and random characters.
    id              text        NOT NULL,
    direction       text        NOT NULL CHECK (direction IN ('inbound', 'outbound')),
    sender          text        NOT NULL CHECK (sender IN ('user', 'app', 'page_human', 'svc_ai')),
    app_id          text        NOT NULL DEFAULT '',
    kind            text        NOT NULL CHECK (kind IN ('session', 'template')),
    template_name   text,
    text            text        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (page_id, conversation_id, seq),
    UNIQUE (page_id, id),
    FOREIGN KEY (page_id, conversation_id) REFERENCES svcchat.conversations (page_id, id)
);

-- A user's standing with a Page; no row is "none".
CREATE TABLE svcchat.opt_ins (
    page_id    text        NOT NULL,
    user_id    text        NOT NULL,
    status     text        NOT NULL CHECK (status IN ('active', 'opted_out')),
    purposes   text[]      NOT NULL,
    source     text        NOT NULL CHECK (source IN ('message', 'mobile')),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (page_id, user_id)
);

CREATE SEQUENCE svcchat.template_id_seq START WITH 3000000001;

-- An app's own templates (created through the Graph or declared in its
-- platformConfig). The platform's defaults are not stored: they are
-- approved for every app unless the app overrides them here.
CREATE TABLE svcchat.templates (
    app_id           text        NOT NULL,
    name             text        NOT NULL,
    -- The id staff decide by; unique through the sequence.
    id               bigint      NOT NULL DEFAULT nextval('svcchat.template_id_seq'),
    body             text        NOT NULL,
    params           text[]      NOT NULL,
    status           text        NOT NULL CHECK (status IN ('draft', 'pending_review', 'approved', 'rejected')),
    rejection_reason text        NOT NULL DEFAULT '',
    -- api: created through app/<id>/svcchat_templates; config: declared in
    -- platformConfig.svcchat.templates (and removed with it).
    source           text        NOT NULL CHECK (source IN ('api', 'config')),
    submitted_at     timestamptz,
    decided_at       timestamptz,
    decided_by       text        NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, name)
);
CREATE INDEX templates_id ON svcchat.templates (id);
-- The staff queue, oldest first.
CREATE INDEX templates_queue ON svcchat.templates (id) WHERE status = 'pending_review';
