-- A user's block of another person (CONTRACT §16, issue 30 item 6):
-- neither may send the other a direct message, and the blocker's chats
-- list leaves their thread out. The blocks of Pages are svcchat's. A direct
-- message checks both directions, each a lookup of the key.
CREATE TABLE chat.user_blocks (
    user_id         text        NOT NULL,
    blocked_user_id text        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, blocked_user_id),
    CHECK (user_id <> blocked_user_id)
);
