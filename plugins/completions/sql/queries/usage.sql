-- name: AddUsage :exec
-- Adds one batch of counts; each (app, day, model, upstream) appears once
-- in a batch.
INSERT INTO completions.usage AS u (app_id, day, model, upstream, requests, prompt_tokens, completion_tokens)
SELECT unnest(@app_ids::text[]), unnest(@days::date[]), unnest(@models::text[]), unnest(@upstreams::text[]),
       unnest(@requests::bigint[]), unnest(@prompt_tokens::bigint[]), unnest(@completion_tokens::bigint[])
ON CONFLICT (app_id, day, model, upstream) DO UPDATE
SET requests          = u.requests + excluded.requests,
    prompt_tokens     = u.prompt_tokens + excluded.prompt_tokens,
    completion_tokens = u.completion_tokens + excluded.completion_tokens;

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
