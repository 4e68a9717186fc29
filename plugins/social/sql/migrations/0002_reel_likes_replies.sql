-- Likes and replies of reels, so that a reel's insights count real writes.
-- Both hold a Page's data and carry page_id first in their primary key, for
-- sharding by Page. They name their reel without a foreign key: the reel's
-- own key may become (page_id, id), and the plugin checks that the reel
-- exists in the transaction that writes.

CREATE TABLE social.reel_likes (
    page_id    text        NOT NULL,
    reel_id    bigint      NOT NULL,
    user_id    text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (page_id, reel_id, user_id)
);

CREATE SEQUENCE social.reel_reply_id_seq START WITH 6500000001;

CREATE TABLE social.reel_replies (
    page_id    text        NOT NULL,
    id         bigint      NOT NULL DEFAULT nextval('social.reel_reply_id_seq'),
    reel_id    bigint      NOT NULL,
    author_id  text        NOT NULL,
    text       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (page_id, id)
);

ALTER SEQUENCE social.reel_reply_id_seq OWNED BY social.reel_replies.id;

-- A reel's replies, oldest first, and their count for insights.
CREATE INDEX reel_replies_reel ON social.reel_replies (page_id, reel_id, id);
