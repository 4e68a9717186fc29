-- name: GetBudget :one
SELECT monthly_tokens, requests_per_minute FROM completions.budgets WHERE app_id = @app_id;

-- name: SetBudget :exec
-- Sets what the request names; a null parameter keeps the stored value.
INSERT INTO completions.budgets AS b (app_id, monthly_tokens, requests_per_minute)
VALUES (@app_id, sqlc.narg(monthly_tokens)::bigint, sqlc.narg(requests_per_minute)::bigint)
ON CONFLICT (app_id) DO UPDATE
SET monthly_tokens      = coalesce(sqlc.narg(monthly_tokens)::bigint, b.monthly_tokens),
    requests_per_minute = coalesce(sqlc.narg(requests_per_minute)::bigint, b.requests_per_minute),
    updated_at          = now();

-- name: LeaseQuota :one
-- Leases up to @want units of an app's window, never past @quota_limit;
-- answers how many were granted (0: the window is used up).
INSERT INTO completions.quota_leases AS q (app_id, kind, window_start, granted, last_grant)
VALUES (@app_id, @kind, @window_start,
        LEAST(@want::bigint, GREATEST(@quota_limit::bigint, 0)),
        LEAST(@want::bigint, GREATEST(@quota_limit::bigint, 0)))
ON CONFLICT (app_id, kind, window_start) DO UPDATE
SET granted    = q.granted + LEAST(@want::bigint, GREATEST((@quota_limit::bigint) - q.granted, 0)),
    last_grant = LEAST(@want::bigint, GREATEST((@quota_limit::bigint) - q.granted, 0))
RETURNING last_grant;

-- name: StartTokenWindow :exec
-- Starts a month's token counter from the tokens already recorded that
-- month, so that a budget set mid-month counts what came before it; a
-- counter already there is kept.
INSERT INTO completions.quota_leases (app_id, kind, window_start, granted, last_grant)
SELECT @app_id, 'tokens', @window_start, coalesce(sum(prompt_tokens + completion_tokens), 0)::bigint, 0
FROM completions.usage
WHERE app_id = @app_id AND day >= @since::date
ON CONFLICT (app_id, kind, window_start) DO NOTHING;

-- name: ResetTokenLeases :exec
-- A changed budget starts its month's counter again from recorded usage.
DELETE FROM completions.quota_leases WHERE app_id = @app_id AND kind = 'tokens';

-- name: PruneQuotaLeases :exec
-- Minute windows are over once their minute is; months are kept a year.
DELETE FROM completions.quota_leases
WHERE (kind = 'requests' AND window_start < now() - interval '1 hour')
   OR (kind = 'tokens' AND window_start < now() - interval '1 year');
