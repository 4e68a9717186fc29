-- name: InsertCampaign :one
INSERT INTO ads.campaigns (ad_account_id, name, objective, status, daily_budget)
VALUES (@ad_account_id, @name, @objective, @status, @daily_budget)
RETURNING *;

-- name: GetCampaign :one
SELECT c.*, a.business_id FROM ads.campaigns c JOIN ads.ad_accounts a ON a.id = c.ad_account_id
WHERE c.id = @id;

-- name: CampaignsAfter :many
SELECT * FROM ads.campaigns WHERE ad_account_id = @ad_account_id AND id > @after ORDER BY id LIMIT @lim;

-- name: CampaignsBefore :many
SELECT * FROM ads.campaigns WHERE ad_account_id = @ad_account_id AND id < @before ORDER BY id DESC LIMIT @lim;

-- name: SetCampaignStatus :exec
UPDATE ads.campaigns SET status = @status WHERE ad_account_id = @ad_account_id AND id = @id;

-- name: AudienceOfAccountExists :one
SELECT EXISTS (SELECT 1 FROM ads.custom_audiences WHERE ad_account_id = @ad_account_id AND id = @id);

-- name: InsertAd :one
INSERT INTO ads.ads (ad_account_id, campaign_id, name, status, title, body, link_url, page_id, audience_id)
VALUES (@ad_account_id, @campaign_id, @name, @status, @title, @body, @link_url, @page_id, sqlc.narg(audience_id))
RETURNING *;

-- name: GetAd :one
SELECT d.*, a.business_id FROM ads.ads d JOIN ads.ad_accounts a ON a.id = d.ad_account_id
WHERE d.id = @id;

-- name: AdsAfter :many
SELECT * FROM ads.ads WHERE ad_account_id = @ad_account_id AND campaign_id = @campaign_id AND id > @after ORDER BY id LIMIT @lim;

-- name: AdsBefore :many
SELECT * FROM ads.ads WHERE ad_account_id = @ad_account_id AND campaign_id = @campaign_id AND id < @before ORDER BY id DESC LIMIT @lim;

-- name: SetAdStatus :exec
UPDATE ads.ads SET status = @status WHERE ad_account_id = @ad_account_id AND id = @id;

-- name: ServeAd :one
-- Picks the ad to serve a person today and counts the serve, in one
-- statement: of the ACTIVE ads of ACTIVE campaigns whose audience holds
-- the person (or who have none) and whose campaign's impressions today
-- leave room in its daily budget for one more at cpm (minor units per
-- thousand), the one served least today, the oldest on a tie.
WITH pick AS (
    SELECT d.ad_account_id, d.id, d.campaign_id, d.title, d.body, d.link_url, d.page_id
    FROM ads.ads d
    JOIN ads.campaigns c ON c.ad_account_id = d.ad_account_id AND c.id = d.campaign_id
    LEFT JOIN ads.ad_daily_stats s ON s.ad_account_id = d.ad_account_id AND s.ad_id = d.id AND s.day = @day::date
    WHERE d.status = 'ACTIVE' AND c.status = 'ACTIVE'
      AND (d.audience_id IS NULL OR EXISTS (
          SELECT 1 FROM ads.audience_members m
          WHERE m.ad_account_id = d.ad_account_id AND m.audience_id = d.audience_id
            AND m.schema = 'USER_ID' AND m.hash = @user_hash))
      AND (COALESCE((SELECT sum(cs.impressions) FROM ads.ad_daily_stats cs
                     WHERE cs.campaign_id = c.id AND cs.day = @day::date), 0) + 1) * @cpm::bigint
          <= c.daily_budget * 1000
    ORDER BY COALESCE(s.impressions, 0), d.id
    LIMIT 1
), counted AS (
    INSERT INTO ads.ad_daily_stats (ad_account_id, ad_id, day, campaign_id, impressions)
    SELECT ad_account_id, id, @day::date, campaign_id, 1 FROM pick
    ON CONFLICT (ad_account_id, ad_id, day) DO UPDATE SET impressions = ads.ad_daily_stats.impressions + 1
    RETURNING ad_id
)
SELECT pick.id, pick.title, pick.body, pick.link_url, pick.page_id FROM pick JOIN counted ON counted.ad_id = pick.id;

-- name: InAudience :one
SELECT EXISTS (SELECT 1 FROM ads.audience_members
               WHERE ad_account_id = @ad_account_id AND audience_id = @audience_id AND schema = 'USER_ID' AND hash = @user_hash);

-- name: CountClick :exec
INSERT INTO ads.ad_daily_stats (ad_account_id, ad_id, day, campaign_id, clicks)
VALUES (@ad_account_id, @ad_id, @day::date, @campaign_id, 1)
ON CONFLICT (ad_account_id, ad_id, day) DO UPDATE SET clicks = ads.ad_daily_stats.clicks + 1;

-- name: InsertClick :exec
INSERT INTO ads.ad_clicks (ad_account_id, ad_id, user_hash, clicked_at) VALUES (@ad_account_id, @ad_id, @user_hash, @clicked_at);

-- name: AdTotals :one
SELECT COALESCE(sum(impressions), 0)::bigint AS impressions, COALESCE(sum(clicks), 0)::bigint AS clicks,
       COALESCE(sum(conversions), 0)::bigint AS conversions
FROM ads.ad_daily_stats WHERE ad_account_id = @ad_account_id AND ad_id = @ad_id;

-- name: CountConversion :exec
-- A conversion attributed to an ad, counted on its row of the day it was
-- received (the conversion rows themselves are pruned).
INSERT INTO ads.ad_daily_stats (ad_account_id, ad_id, day, campaign_id, conversions)
SELECT a.ad_account_id, a.id, @day::date, a.campaign_id, 1 FROM ads.ads a WHERE a.ad_account_id = @ad_account_id AND a.id = @ad_id
ON CONFLICT (ad_account_id, ad_id, day) DO UPDATE SET conversions = ads.ad_daily_stats.conversions + 1;

-- name: PruneClicks :execrows
-- Clicks older than @before, oldest first, at most @batch.
DELETE FROM ads.ad_clicks WHERE (ad_account_id, ad_id, id) IN (
    SELECT c.ad_account_id, c.ad_id, c.id FROM ads.ad_clicks c WHERE c.clicked_at < @before ORDER BY c.clicked_at LIMIT @batch);

-- name: PruneConversions :execrows
-- Conversions received before @before, oldest first, at most @batch.
DELETE FROM ads.conversions WHERE (ad_account_id, id) IN (
    SELECT c.ad_account_id, c.id FROM ads.conversions c WHERE c.received_at < @before ORDER BY c.received_at LIMIT @batch);

-- name: InsertCustomAudience :one
INSERT INTO ads.custom_audiences (ad_account_id, name, description) VALUES (@ad_account_id, @name, @description) RETURNING *;

-- name: GetCustomAudience :one
SELECT ca.*, a.business_id, a.is_sandbox FROM ads.custom_audiences ca JOIN ads.ad_accounts a ON a.id = ca.ad_account_id
WHERE ca.id = @id;

-- name: AddAudienceMembers :exec
INSERT INTO ads.audience_members (ad_account_id, audience_id, schema, hash, matched)
SELECT @ad_account_id, @audience_id, @schema, unnest(@hashes::bytea[]), unnest(@matched::boolean[])
ON CONFLICT (ad_account_id, audience_id, schema, hash) DO UPDATE SET matched = EXCLUDED.matched;

-- name: AudienceMatched :one
SELECT count(*) FROM ads.audience_members WHERE ad_account_id = @ad_account_id AND audience_id = @audience_id AND matched;

-- name: LockEvents :exec
-- Serialises conversion batches of one ad account, so that an event_id
-- sent twice at once is counted once.
SELECT pg_advisory_xact_lock(hashtextextended('ads.events:' || @ad_account_id::text, 0));

-- name: EventSeen :one
SELECT EXISTS (SELECT 1 FROM ads.conversions WHERE ad_account_id = @ad_account_id AND event_id = @event_id
               AND received_at > @since);

-- name: LastClick :one
-- The ad of the account a person (by hash) clicked last in [from, to].
SELECT ad_id FROM ads.ad_clicks
WHERE ad_account_id = @ad_account_id AND user_hash = ANY(@user_hashes::bytea[])
  AND clicked_at >= @from_time AND clicked_at <= @to_time
ORDER BY clicked_at DESC, id DESC LIMIT 1;

-- name: InsertConversion :exec
INSERT INTO ads.conversions (ad_account_id, event_id, event_name, event_time, user_hash, ad_id, value, currency, received_at)
VALUES (@ad_account_id, @event_id, @event_name, @event_time, sqlc.narg(user_hash), sqlc.narg(ad_id), sqlc.narg(value), @currency, @received_at);
