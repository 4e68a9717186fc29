-- Partners and the measures of their criteria (CONTRACT §18).

-- name: InsertPartner :one
-- No row when the business is a partner already.
INSERT INTO core.partners (business_id, registered_by, criteria, tier, assessed_at)
VALUES (@business_id, @registered_by, @criteria, @tier, @assessed_at)
ON CONFLICT (business_id) DO NOTHING
RETURNING id;

-- name: GetPartner :one
SELECT id, business_id, tier, criteria, assessed_at FROM core.partners WHERE id = @id;

-- name: SetPartnerAssessment :exec
UPDATE core.partners SET tier = @tier, criteria = @criteria, assessed_at = @assessed_at WHERE id = @id;

-- name: ClaimStalePartners :many
-- Partners assessed before @stale_before, locked for this transaction so
-- that one gateway assesses each.
SELECT id, business_id FROM core.partners WHERE assessed_at < @stale_before
ORDER BY assessed_at LIMIT @batch FOR UPDATE SKIP LOCKED;

-- name: CountLiveReviewedApps :one
-- The business's apps that are live and have a scope App Review approved.
SELECT count(*) FROM core.business_assets ba JOIN core.apps a ON a.id = ba.asset_id
WHERE ba.business_id = @business_id AND ba.asset_type = 'APP' AND a.mode = 'live'
  AND EXISTS (SELECT 1 FROM core.app_scope_reviews r WHERE r.app_id = a.id AND r.status IN ('approved', 'automated_approved'));

-- name: WebhookOutcomesOfBusiness :one
-- Completed non-test deliveries to the business's apps since @since, and
-- how many succeeded: of each app the most recent @max_rows only, read
-- backwards on webhook_deliveries_completed, so the read is bounded however
-- busy the apps are.
SELECT count(*)::bigint AS total, count(*) FILTER (WHERE d.status = 'succeeded')::bigint AS succeeded
FROM core.business_assets ba
CROSS JOIN LATERAL (
    SELECT wd.status FROM core.webhook_deliveries wd
    WHERE wd.app_id = ba.asset_id AND wd.status IN ('succeeded', 'failed') AND NOT wd.test
      AND wd.completed_at >= @since
    ORDER BY wd.completed_at DESC LIMIT @max_rows
) d
WHERE ba.business_id = @business_id AND ba.asset_type = 'APP';

-- name: LastPassingSmokeRun :one
-- The time of the partner's last smoke run with no failed step since @since.
SELECT max(ran_at)::timestamptz AS ran_at FROM core.partner_smoke_runs
WHERE partner_id = @partner_id AND failed = 0 AND passed > 0 AND ran_at >= @since;

-- name: InsertPartnerSmokeRun :one
INSERT INTO core.partner_smoke_runs (partner_id, app_id, passed, failed, summary, ran_by, ran_at)
VALUES (@partner_id, @app_id, @passed, @failed, @summary, @ran_by, @ran_at)
RETURNING id;

-- name: AppInBusiness :one
SELECT EXISTS (SELECT 1 FROM core.business_assets WHERE asset_type = 'APP' AND asset_id = @app_id AND business_id = @business_id);

-- name: PartnerOfBusiness :one
SELECT id FROM core.partners WHERE business_id = @business_id;

-- name: PruneSmokeRuns :execrows
-- Smoke runs older than 90 days (the criteria look at 30), oldest first.
DELETE FROM core.partner_smoke_runs WHERE id IN (
    SELECT r.id FROM core.partner_smoke_runs r WHERE r.ran_at < now() - interval '90 days' ORDER BY r.ran_at LIMIT @batch);
