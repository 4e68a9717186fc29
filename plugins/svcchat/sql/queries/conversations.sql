-- name: LockConversationByUser :one
-- The conversation of a user with a Page, locked for the rest of the
-- transaction.
SELECT * FROM svcchat.conversations
WHERE page_id = @page_id AND user_id = @user_id
FOR UPDATE;

-- name: OpenConversation :one
-- A user's write: opens the conversation (holder as given) or reuses it,
-- and restarts the session window. The upsert locks the row.
INSERT INTO svcchat.conversations (page_id, user_id, holder, window_expires_at)
VALUES (@page_id, @user_id, @holder, now() + interval '24 hours')
ON CONFLICT (page_id, user_id) DO UPDATE
SET window_expires_at = now() + interval '24 hours', updated_at = now()
RETURNING *;

-- name: CreateConversation :one
-- A conversation the Page starts (a template to an opted-in user who never
-- wrote): no session window yet.
INSERT INTO svcchat.conversations (page_id, user_id, holder)
VALUES (@page_id, @user_id, @holder)
ON CONFLICT (page_id, user_id) DO NOTHING
RETURNING *;

-- name: SetControl :exec
UPDATE svcchat.conversations
SET holder = @holder, holder_app_id = @holder_app_id, previous_holder = @previous_holder, updated_at = now()
WHERE page_id = @page_id AND id = @id;

-- name: NextMessageSeq :one
-- Numbers the conversation's next message; the caller holds the row lock.
-- A message from the Page ends its typing indicator.
UPDATE svcchat.conversations
SET last_message_seq = last_message_seq + 1, updated_at = now(),
    typing_until = CASE WHEN @clear_typing::boolean THEN NULL ELSE typing_until END
WHERE page_id = @page_id AND id = @id
RETURNING last_message_seq, updated_at;

-- name: InsertMessage :one
INSERT INTO svcchat.messages (page_id, conversation_id, seq, id, direction, sender, app_id, kind, template_name, text, sender_user_id)
VALUES (@page_id, @conversation_id, @seq, @id, @direction, @sender, @app_id, @kind, @template_name, @text, @sender_user_id)
RETURNING *;

-- name: GetConversation :one
SELECT sqlc.embed(c), COALESCE(o.status, 'none')::text AS opt_in_status
FROM svcchat.conversations c
LEFT JOIN svcchat.opt_ins o ON o.page_id = c.page_id AND o.user_id = c.user_id
WHERE c.page_id = @page_id AND c.id = @id;

-- name: ListConversationsFirst :many
-- A Page's conversations, newest first; one more than asked tells whether
-- there is a next page.
SELECT sqlc.embed(c), COALESCE(o.status, 'none')::text AS opt_in_status
FROM svcchat.conversations c
LEFT JOIN svcchat.opt_ins o ON o.page_id = c.page_id AND o.user_id = c.user_id
WHERE c.page_id = @page_id
ORDER BY c.id DESC LIMIT @lim;

-- name: ListConversationsAfter :many
SELECT sqlc.embed(c), COALESCE(o.status, 'none')::text AS opt_in_status
FROM svcchat.conversations c
LEFT JOIN svcchat.opt_ins o ON o.page_id = c.page_id AND o.user_id = c.user_id
WHERE c.page_id = @page_id AND c.id < @cursor
ORDER BY c.id DESC LIMIT @lim;

-- name: ListConversationsBefore :many
-- Older-to-newer from the cursor; the caller reverses the rows.
SELECT sqlc.embed(c), COALESCE(o.status, 'none')::text AS opt_in_status
FROM svcchat.conversations c
LEFT JOIN svcchat.opt_ins o ON o.page_id = c.page_id AND o.user_id = c.user_id
WHERE c.page_id = @page_id AND c.id > @cursor
ORDER BY c.id ASC LIMIT @lim;

-- name: ListMessagesFirst :many
SELECT * FROM svcchat.messages
WHERE page_id = @page_id AND conversation_id = @conversation_id
ORDER BY seq DESC LIMIT @lim;

-- name: ListMessagesAfter :many
SELECT * FROM svcchat.messages
WHERE page_id = @page_id AND conversation_id = @conversation_id AND seq < @cursor
ORDER BY seq DESC LIMIT @lim;

-- name: ListMessagesBefore :many
SELECT * FROM svcchat.messages
WHERE page_id = @page_id AND conversation_id = @conversation_id AND seq > @cursor
ORDER BY seq ASC LIMIT @lim;
