-- name: LockConversation :one
-- A conversation by id within its Page, locked for the transaction.
SELECT * FROM svcchat.conversations
WHERE page_id = @page_id AND id = @id
FOR UPDATE;

-- name: GetConversationByID :one
-- By id alone (the chat app's thread): on a sharded cluster a query to
-- every shard.
SELECT * FROM svcchat.conversations WHERE id = @id;

-- name: ListUserConversations :many
-- A user's conversations with every Page, newest first, but those with a
-- Page the user blocked.
SELECT sqlc.embed(c), COALESCE(o.status, 'none')::text AS opt_in_status
FROM svcchat.conversations c
LEFT JOIN svcchat.opt_ins o ON o.page_id = c.page_id AND o.user_id = c.user_id
WHERE c.user_id = @user_id
  AND NOT EXISTS (SELECT 1 FROM svcchat.page_blocks b WHERE b.page_id = c.page_id AND b.user_id = c.user_id)
ORDER BY c.updated_at DESC, c.id DESC
LIMIT @lim;

-- name: LastMessage :one
-- The thread's newest message the user can see (a failed one never reached
-- them).
SELECT * FROM svcchat.messages
WHERE page_id = @page_id AND conversation_id = @conversation_id AND status <> 'failed'
ORDER BY seq DESC LIMIT 1;

-- name: MessageSeq :one
SELECT seq FROM svcchat.messages WHERE page_id = @page_id AND conversation_id = @conversation_id AND id = @id;

-- name: ListThreadMessages :many
-- The newest messages before a sequence number (newest first; the caller
-- reverses them), without the failed ones: those never reached the user.
SELECT * FROM svcchat.messages
WHERE page_id = @page_id AND conversation_id = @conversation_id AND seq < @before_seq AND status <> 'failed'
ORDER BY seq DESC LIMIT @lim;

-- name: ListInboundTexts :many
-- What the user has written so far, oldest first, for the assistant.
SELECT text FROM (
    SELECT seq, text FROM svcchat.messages
    WHERE page_id = @page_id AND conversation_id = @conversation_id AND direction = 'inbound'
    ORDER BY seq DESC LIMIT @lim
) m ORDER BY seq ASC;
