-- name: InsertThread :one
INSERT INTO social.threads (author_id, app_id, text, reply_to)
VALUES (@author_id, @app_id, @text, sqlc.narg(reply_to))
RETURNING *;

-- name: ReadThread :one
-- Reads a thread, counting the read as a view unless the reader wrote it.
UPDATE social.threads
SET views = views + CASE WHEN author_id = @reader_id THEN 0 ELSE 1 END
WHERE id = @id
RETURNING *;

-- name: GetThread :one
SELECT * FROM social.threads WHERE id = @id;

-- name: ThreadExists :one
SELECT EXISTS (SELECT 1 FROM social.threads WHERE id = @id);

-- name: RepliesAfter :many
-- A page of replies, oldest first, after a cursor (0: from the start).
SELECT * FROM social.threads
WHERE reply_to = @thread_id::bigint AND id > @after
ORDER BY id LIMIT @lim;

-- name: RepliesBefore :many
-- A page of replies before a cursor, newest first (the caller reverses).
SELECT * FROM social.threads
WHERE reply_to = @thread_id::bigint AND id < @before
ORDER BY id DESC LIMIT @lim;

-- name: LikeThread :exec
INSERT INTO social.thread_likes (thread_id, user_id)
VALUES (@thread_id, @user_id)
ON CONFLICT DO NOTHING;

-- name: ThreadCounts :one
SELECT t.author_id, t.views,
    (SELECT count(*) FROM social.thread_likes l WHERE l.thread_id = t.id)::bigint AS likes,
    (SELECT count(*) FROM social.threads r WHERE r.reply_to = t.id)::bigint AS replies
FROM social.threads t WHERE t.id = @id;

-- name: InsertReel :one
INSERT INTO social.reels (page_id, author_id, video_url, caption)
VALUES (@page_id, @author_id, @video_url, @caption)
RETURNING *;

-- name: GetReel :one
-- By id alone (reel/<id>): on a sharded cluster a query to every shard.
SELECT * FROM social.reels WHERE id = @id;

-- name: CountReelView :exec
UPDATE social.reels SET views = views + 1 WHERE page_id = @page_id AND id = @id;

-- name: ClaimReelCheck :one
-- The next processing reel due for its check that no other worker holds;
-- the row stays locked until the claiming transaction ends.
SELECT * FROM social.reels
WHERE status = 'processing' AND check_after <= now()
ORDER BY check_after
LIMIT 1
FOR UPDATE SKIP LOCKED;

-- name: SetReelChecked :exec
UPDATE social.reels SET
    status       = @status,
    error_reason = @error_reason,
    attempts     = attempts + 1,
    check_after  = now() + make_interval(secs => @retry_seconds::float8),
    checked_at   = CASE WHEN @status <> 'processing' THEN now() ELSE checked_at END
WHERE page_id = @page_id AND id = @id;

-- name: LikeReel :exec
INSERT INTO social.reel_likes (page_id, reel_id, user_id)
VALUES (@page_id, @reel_id, @user_id)
ON CONFLICT DO NOTHING;

-- name: InsertReelReply :one
INSERT INTO social.reel_replies (page_id, reel_id, author_id, text)
VALUES (@page_id, @reel_id, @author_id, @text)
RETURNING *;

-- name: ReelRepliesAfter :many
-- A page of a reel's replies, oldest first, after a cursor (0: the start).
SELECT * FROM social.reel_replies
WHERE page_id = @page_id AND reel_id = @reel_id AND id > @after
ORDER BY id LIMIT @lim;

-- name: ReelRepliesBefore :many
-- A page of replies before a cursor, newest first (the caller reverses).
SELECT * FROM social.reel_replies
WHERE page_id = @page_id AND reel_id = @reel_id AND id < @before
ORDER BY id DESC LIMIT @lim;

-- name: ReelEngagement :one
SELECT
    (SELECT count(*) FROM social.reel_likes l WHERE l.page_id = @page_id AND l.reel_id = @reel_id)::bigint AS likes,
    (SELECT count(*) FROM social.reel_replies r WHERE r.page_id = @page_id AND r.reel_id = @reel_id)::bigint AS replies;
