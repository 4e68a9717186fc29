-- name: OpenThread :one
-- The thread of a pair of users, created on first use, locked.
INSERT INTO chat.direct_threads (user_low, user_high)
VALUES (@user_low, @user_high)
ON CONFLICT (user_low, user_high) DO UPDATE SET updated_at = now()
RETURNING *;

-- name: NextSeq :one
UPDATE chat.direct_threads SET last_message_seq = last_message_seq + 1, updated_at = now()
WHERE id = @id
RETURNING last_message_seq;

-- name: InsertMessage :one
INSERT INTO chat.direct_messages (thread_id, seq, id, sender_user_id, text)
VALUES (@thread_id, @seq, @id, @sender_user_id, @text)
RETURNING *;

-- name: ListUserThreads :many
-- A user's direct threads, newest first, with their last message; not
-- those with a person the user blocked.
SELECT t.id, t.user_low, t.user_high, t.updated_at,
       m.id AS message_id, m.sender_user_id, m.text, m.created_at AS message_created_at
FROM chat.direct_threads t
JOIN chat.direct_messages m ON m.thread_id = t.id AND m.seq = t.last_message_seq
WHERE (t.user_low = @user_id OR t.user_high = @user_id)
  AND NOT EXISTS (
    SELECT 1 FROM chat.user_blocks b
    WHERE b.user_id = @user_id
      AND b.blocked_user_id = CASE WHEN t.user_low = @user_id THEN t.user_high ELSE t.user_low END)
ORDER BY t.updated_at DESC
LIMIT @lim;

-- name: GetThread :one
SELECT * FROM chat.direct_threads WHERE id = @id;

-- name: MessageSeq :one
-- The place of a message in its thread, for reading what is older.
SELECT seq FROM chat.direct_messages WHERE thread_id = @thread_id AND id = @id;

-- name: ListThreadMessages :many
-- A page of a thread's messages older than before_seq, newest first.
SELECT * FROM chat.direct_messages
WHERE thread_id = @thread_id AND seq < @before_seq
ORDER BY seq DESC
LIMIT @lim;

-- name: BlockUser :one
-- The block of blocked_user_id by user_id, made on first use; a repeat
-- returns the block as it stands.
WITH made AS (
    INSERT INTO chat.user_blocks (user_id, blocked_user_id) VALUES (@user_id, @blocked_user_id)
    ON CONFLICT DO NOTHING
    RETURNING created_at
)
SELECT created_at FROM made
UNION ALL
SELECT created_at FROM chat.user_blocks WHERE user_id = @user_id AND blocked_user_id = @blocked_user_id
LIMIT 1;

-- name: UnblockUser :exec
DELETE FROM chat.user_blocks WHERE user_id = @user_id AND blocked_user_id = @blocked_user_id;

-- name: ListUserBlocks :many
SELECT blocked_user_id, created_at FROM chat.user_blocks WHERE user_id = @user_id
ORDER BY created_at DESC, blocked_user_id LIMIT @lim;

-- name: EitherBlocked :one
-- Whether one of two users blocked the other.
SELECT EXISTS (
    SELECT 1 FROM chat.user_blocks
    WHERE (user_id = @a AND blocked_user_id = @b) OR (user_id = @b AND blocked_user_id = @a)
);

-- name: ReceivedMessage :one
-- A direct message sent to user_id by someone else, by id.
SELECT m.* FROM chat.direct_messages m
JOIN chat.direct_threads t ON t.id = m.thread_id
WHERE m.id = @id AND m.sender_user_id <> @user_id AND (t.user_low = @user_id OR t.user_high = @user_id);
