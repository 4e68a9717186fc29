-- The book plugin's schema: a Page's posts. Every table carries page_id, so
-- the data can be sharded by Page.
CREATE SCHEMA IF NOT EXISTS book;

CREATE SEQUENCE book.post_id_seq START WITH 1000000001;

CREATE TABLE book.posts (
    id             bigint      PRIMARY KEY DEFAULT nextval('book.post_id_seq'),
    page_id        text        NOT NULL,
    author_user_id text        NOT NULL,
    app_id         text        NOT NULL DEFAULT '',
    content        text        NOT NULL,
    audience       text        NOT NULL CHECK (audience IN ('everyone', 'followers', 'only_me')),
    created_at     timestamptz NOT NULL DEFAULT now()
);

ALTER SEQUENCE book.post_id_seq OWNED BY book.posts.id;

-- Newest first per Page; ids only grow, so (page_id, id) orders by time and
-- makes cursors stable under inserts.
CREATE INDEX posts_page_id ON book.posts (page_id, id DESC);
