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
-- A user's direct threads, newest first, with their last message.
SELECT t.id, t.user_low, t.user_high, t.updated_at,
       m.id AS message_id, m.sender_user_id, m.text, m.created_at AS message_created_at
FROM chat.direct_threads t
JOIN chat.direct_messages m ON m.thread_id = t.id AND m.seq = t.last_message_seq
WHERE t.user_low = @user_id OR t.user_high = @user_id
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

-- name: ActiveSponsoredAd :one
SELECT * FROM chat.sponsored_ads WHERE active ORDER BY id DESC LIMIT 1;

-- name: InsertSponsoredAd :exec
-- The development seed's one active item.
INSERT INTO chat.sponsored_ads (title, body, link_url, sponsor)
SELECT @title, @body, @link_url, @sponsor
WHERE NOT EXISTS (SELECT 1 FROM chat.sponsored_ads);
