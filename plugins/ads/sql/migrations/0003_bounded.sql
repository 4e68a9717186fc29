-- Clicks and conversions are pruned (service.pruneRound): clicks after 15
-- days (a conversion may arrive 7 days after its event, and is attributed
-- to the click in the 7 days before that), conversions after 7 days (the
-- event_id dedup needs 48 hours). Insights count an ad's conversions on its
-- daily row, by the day they were received, so pruning changes no number.
ALTER TABLE ads.ad_daily_stats ADD COLUMN conversions bigint NOT NULL DEFAULT 0;

INSERT INTO ads.ad_daily_stats (ad_account_id, ad_id, day, campaign_id, conversions)
SELECT c.ad_account_id, c.ad_id, (c.received_at AT TIME ZONE 'UTC')::date, a.campaign_id, count(*)
FROM ads.conversions c JOIN ads.ads a ON a.ad_account_id = c.ad_account_id AND a.id = c.ad_id
GROUP BY 1, 2, 3, 4
ON CONFLICT (ad_account_id, ad_id, day) DO UPDATE SET conversions = EXCLUDED.conversions;

-- Pruning walks each table oldest first.
CREATE INDEX ad_clicks_clicked ON ads.ad_clicks (clicked_at);
CREATE INDEX conversions_received ON ads.conversions (received_at);
