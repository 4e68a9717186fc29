-- name: CreatePost :one
-- The post and its book.post.created event in one statement: one round trip
-- to PostgreSQL instead of a transaction's four (BEGIN, two inserts,
-- COMMIT), and as atomic. The event is the outbox row internal/outbox made
-- (as sdk/event's would be); its data lacks only the post's id, which the
-- database assigns here and sets as postId.
WITH post AS (
    INSERT INTO book.posts (page_id, author_user_id, app_id, content, audience)
    VALUES (@page_id, @author_user_id, @app_id, @content, @audience)
    RETURNING id
), emitted AS (
    INSERT INTO core.outbox (id, type, page_id, app_id, data, ordering_key)
    SELECT @event_id, @event_type, NULLIF(@event_page_id::text, ''), NULLIF(@event_app_id::text, ''),
           jsonb_set(@event_data::jsonb, '{postId}', to_jsonb(post.id::text)), NULLIF(@event_ordering_key::text, '')
    FROM post
)
SELECT post.id FROM post;

-- name: GetPost :one
-- By id alone (post/<id>): on a sharded cluster a query to every shard.
SELECT * FROM book.posts WHERE id = @id;

-- name: ListPostsFirst :many
-- The newest posts of a Page; one more than asked tells whether there is a
-- next page.
SELECT * FROM book.posts WHERE page_id = @page_id
ORDER BY id DESC LIMIT @lim;

-- name: ListPostsAfter :many
SELECT * FROM book.posts WHERE page_id = @page_id AND id < @cursor
ORDER BY id DESC LIMIT @lim;

-- name: ListPostsBefore :many
-- Older-to-newer from the cursor; the caller reverses the rows.
SELECT * FROM book.posts WHERE page_id = @page_id AND id > @cursor
ORDER BY id ASC LIMIT @lim;
