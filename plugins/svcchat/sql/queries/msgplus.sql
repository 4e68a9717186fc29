-- name: AddEventSeq :one
-- Reserves n consecutive data.sequence numbers for events of a
-- conversation whose row the caller holds locked; returns the last one.
UPDATE svcchat.conversations
SET last_event_seq = last_event_seq + @n::bigint
WHERE page_id = @page_id AND id = @id
RETURNING last_event_seq;

-- name: InsertHandover :exec
INSERT INTO svcchat.handovers (page_id, conversation_id, seq, action, previous_holder, new_holder, app_id, expires_at)
VALUES (@page_id, @conversation_id, @seq, @action, @previous_holder, @new_holder, @app_id, sqlc.narg(expires_at));

-- name: ListHandoversFirst :many
-- A conversation's control changes, newest first.
SELECT * FROM svcchat.handovers
WHERE page_id = @page_id AND conversation_id = @conversation_id
ORDER BY seq DESC LIMIT @lim;

-- name: ListHandoversAfter :many
SELECT * FROM svcchat.handovers
WHERE page_id = @page_id AND conversation_id = @conversation_id AND seq < @cursor
ORDER BY seq DESC LIMIT @lim;

-- name: ListHandoversBefore :many
SELECT * FROM svcchat.handovers
WHERE page_id = @page_id AND conversation_id = @conversation_id AND seq > @cursor
ORDER BY seq ASC LIMIT @lim;

-- name: MarkMessages :many
-- Moves every message of a conversation in direction whose status is one of
-- from (the statuses the transition table lets the trigger move) to
-- status, in one statement; returns the moved messages in order.
UPDATE svcchat.messages
SET status = @status, status_at = now()
WHERE page_id = @page_id AND conversation_id = @conversation_id
  AND direction = @direction AND status = ANY (@from_statuses::text[])
RETURNING id, seq;

-- name: FailMessages :many
-- Moves every outbound message of a conversation whose status is one of
-- from_statuses (those the transition table lets "failed" move) to failed
-- with the error that stops it reaching the user; returns the moved
-- messages in order.
UPDATE svcchat.messages
SET status = 'failed', status_at = now(), error = @error, error_code = @error_code, error_subcode = @error_subcode
WHERE page_id = @page_id AND conversation_id = @conversation_id
  AND direction = 'outbound' AND status = ANY (@from_statuses::text[])
RETURNING id, seq;

-- name: SetTyping :exec
UPDATE svcchat.conversations
SET typing_until = sqlc.narg(typing_until)
WHERE page_id = @page_id AND id = @id;

-- name: SetControlExpiry :exec
-- Arms (or clears, with NULLs) the conversation's handover expiry and
-- remembers the control to go back to.
UPDATE svcchat.conversations
SET control_expires_at = sqlc.narg(control_expires_at), control_expires_in = sqlc.narg(control_expires_in),
    expire_holder = @expire_holder, expire_app_id = @expire_app_id, expire_previous = @expire_previous
WHERE page_id = @page_id AND id = @id;

-- name: ClaimExpiredControls :many
-- Conversations whose control lapsed, locked for the caller's transaction;
-- rows another process is expiring (or changing) are skipped, so each
-- lapse is handled once whatever the number of gateways.
SELECT * FROM svcchat.conversations
WHERE control_expires_at <= now()
ORDER BY control_expires_at
LIMIT @lim
FOR UPDATE SKIP LOCKED;
