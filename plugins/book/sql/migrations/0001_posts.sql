-- The migration runner makes the schema: the plugin's role owns it but may
-- not create schemas. An earlier text of this file made it too; a database
-- that applied that text is current:
-- migrate:replaces 24ca2d39b8e8027e57b20af49a5d88a30e03405ddbfe270d58f5043f7e433e80
-- The book plugin's schema: a Page's posts. Every table carries page_id, so
-- the data can be sharded by Page.

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
