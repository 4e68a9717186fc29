-- name: CreatePost :one
INSERT INTO book.posts (page_id, author_user_id, app_id, content, audience)
VALUES (@page_id, @author_user_id, @app_id, @content, @audience)
RETURNING *;

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
