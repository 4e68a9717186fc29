-- name: AddUsage :execrows
-- Adds one batch of counts, exactly once: the batch id goes in with the
-- counts, and a batch whose id is already there adds nothing (0 rows).
-- Each (app, day, model, upstream) appears once in a batch.
WITH batch AS (
    INSERT INTO completions.usage_batches (id) VALUES (@batch_id)
    ON CONFLICT (id) DO NOTHING
    RETURNING id
)
INSERT INTO completions.usage AS u (app_id, day, model, upstream, requests, prompt_tokens, completion_tokens)
SELECT unnest(@app_ids::text[]), unnest(@days::date[]), unnest(@models::text[]), unnest(@upstreams::text[]),
       unnest(@requests::bigint[]), unnest(@prompt_tokens::bigint[]), unnest(@completion_tokens::bigint[])
WHERE EXISTS (SELECT 1 FROM batch)
ON CONFLICT (app_id, day, model, upstream) DO UPDATE
SET requests          = u.requests + excluded.requests,
    prompt_tokens     = u.prompt_tokens + excluded.prompt_tokens,
    completion_tokens = u.completion_tokens + excluded.completion_tokens;

-- name: PruneUsageBatches :exec
-- Batch ids are needed only while a batch may still be retried.
DELETE FROM completions.usage_batches WHERE written_at < now() - interval '1 day';

-- name: UsageByDay :many
-- An app's usage per model and day, upstreams added up, newest day first.
SELECT model, day,
       sum(requests)::bigint          AS requests,
       sum(prompt_tokens)::bigint     AS prompt_tokens,
       sum(completion_tokens)::bigint AS completion_tokens
FROM completions.usage
WHERE app_id = @app_id AND day BETWEEN @since::date AND @until::date
GROUP BY model, day
ORDER BY day DESC, model;

-- name: UsedTokens :one
-- An app's tokens from a day on (the budget's month so far).
SELECT coalesce(sum(prompt_tokens + completion_tokens), 0)::bigint
FROM completions.usage
WHERE app_id = @app_id AND day >= @since::date;
