-- The social plugin's schema: users' threads (short text posts, replies
-- being threads with reply_to), their likes, and Pages' reels. The
-- migration runner makes the schema itself.

CREATE SEQUENCE social.thread_id_seq START WITH 5000000001;

CREATE TABLE social.threads (
    id         bigint      PRIMARY KEY DEFAULT nextval('social.thread_id_seq'),
    author_id  text        NOT NULL,
    -- The app whose token published it: social.thread.created goes to it.
    app_id     text        NOT NULL,
    text       text        NOT NULL,
    reply_to   bigint      REFERENCES social.threads (id),
    -- Reads by anyone but the author, counted in the reading statement.
    views      bigint      NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now()
);

ALTER SEQUENCE social.thread_id_seq OWNED BY social.threads.id;

-- A thread's replies, oldest first, and their count for insights.
CREATE INDEX threads_replies ON social.threads (reply_to, id) WHERE reply_to IS NOT NULL;

CREATE TABLE social.thread_likes (
    thread_id  bigint      NOT NULL REFERENCES social.threads (id),
    user_id    text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (thread_id, user_id)
);

CREATE SEQUENCE social.reel_id_seq START WITH 6000000001;

-- status: processing → ready | error (reelstate.go). A processing reel is
-- also the job that checks its video: workers claim it with SKIP LOCKED
-- once check_after has come.
CREATE TABLE social.reels (
    id           bigint      PRIMARY KEY DEFAULT nextval('social.reel_id_seq'),
    page_id      text        NOT NULL,
    author_id    text        NOT NULL,
    video_url    text        NOT NULL,
    caption      text        NOT NULL,
    status       text        NOT NULL DEFAULT 'processing'
                             CHECK (status IN ('processing', 'ready', 'error')),
    error_reason text        NOT NULL DEFAULT '',
    attempts     integer     NOT NULL DEFAULT 0,
    check_after  timestamptz NOT NULL DEFAULT now(),
    views        bigint      NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now(),
    checked_at   timestamptz
);

ALTER SEQUENCE social.reel_id_seq OWNED BY social.reels.id;

CREATE INDEX reels_processing ON social.reels (check_after) WHERE status = 'processing';
