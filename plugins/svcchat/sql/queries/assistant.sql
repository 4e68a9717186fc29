-- name: EnqueueAssistantReply :execrows
-- Asks for the assistant's first reply to a conversation, once ever.
INSERT INTO svcchat.assistant_jobs (page_id, conversation_id)
VALUES (@page_id, @conversation_id)
ON CONFLICT (page_id, conversation_id) DO NOTHING;

-- name: ClaimAssistantJob :one
-- The next due job no other worker holds; the row stays locked until the
-- claiming transaction ends (a dead worker's lock ends with its connection).
SELECT * FROM svcchat.assistant_jobs
WHERE status = 'pending' AND run_after <= now()
ORDER BY run_after
LIMIT 1
FOR UPDATE SKIP LOCKED;

-- name: FinishAssistantJob :exec
UPDATE svcchat.assistant_jobs
SET status = 'done', message_id = @message_id, source = @source, attempts = attempts + 1, updated_at = now()
WHERE page_id = @page_id AND conversation_id = @conversation_id;

-- name: RetryAssistantJob :exec
UPDATE svcchat.assistant_jobs
SET attempts = attempts + 1, run_after = now() + make_interval(secs => @delay_seconds::float8),
    last_error = @last_error, updated_at = now()
WHERE page_id = @page_id AND conversation_id = @conversation_id;
