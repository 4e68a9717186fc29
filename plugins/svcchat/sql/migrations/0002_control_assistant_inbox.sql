-- Part 2 of the svcchat plugin: conversation control, the assistant's first
-- reply and the chat app's inbox (issue 11).

-- The chat app's inbox lists a user's threads across Pages, newest first.
CREATE INDEX conversations_by_user ON svcchat.conversations (user_id, updated_at DESC);

-- A human Page manager who replied from the Page inbox.
ALTER TABLE svcchat.messages ADD COLUMN sender_user_id text NOT NULL DEFAULT '';

-- The assistant's first reply to a conversation, one row per conversation
-- ever: its existence is "the assistant has answered (or will answer) this
-- conversation". The row is written in the transaction of the user's
-- message, so a reply is never lost, and it is claimed with FOR UPDATE SKIP
-- LOCKED by one worker of one svcchat process at a time; the reply and
-- status 'done' commit together, so it is sent exactly once whatever the
-- number of gateways and whenever one of them dies.
CREATE TABLE svcchat.assistant_jobs (
    page_id         text        NOT NULL,
    conversation_id bigint      NOT NULL,
    -- pending: to run at run_after; done: replied (message_id) or stayed
    -- silent because an app or a human held control (message_id empty).
    status          text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done')),
    attempts        integer     NOT NULL DEFAULT 0,
    run_after       timestamptz NOT NULL DEFAULT now(),
    last_error      text        NOT NULL DEFAULT '',
    message_id      text        NOT NULL DEFAULT '',
    -- builtin: the fallback after the model failed every attempt.
    source          text        NOT NULL DEFAULT '' CHECK (source IN ('', 'model', 'builtin', 'silent')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (page_id, conversation_id),
    FOREIGN KEY (page_id, conversation_id) REFERENCES svcchat.conversations (page_id, id)
);
CREATE INDEX assistant_jobs_due ON svcchat.assistant_jobs (run_after) WHERE status = 'pending';
