-- name: CreatePost :one
-- The post and its book.post.created event in one statement: one round trip
-- to PostgreSQL instead of a transaction's four (BEGIN, two inserts,
-- COMMIT), and as atomic. The event's data is built here from the post's
-- own columns, {postId, pageId, content, audience} (the post's id is the
-- database's): the content travels once and is not parsed as JSON.
WITH post AS (
    INSERT INTO book.posts (page_id, author_user_id, app_id, content, audience)
    VALUES (@page_id::text, @author_user_id, @app_id, @content::text, @audience::text)
    RETURNING id
), emitted AS (
    INSERT INTO core.outbox (id, type, page_id, data)
    SELECT @event_id, @event_type, @page_id::text,
           jsonb_build_object('postId', post.id::text, 'pageId', @page_id::text, 'content', @content::text, 'audience', @audience::text)
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
