-- Smoke runs are pruned after 90 days (the partner criteria look at 30);
-- the pruning job walks them oldest first.
CREATE INDEX partner_smoke_runs_ran_at ON core.partner_smoke_runs (ran_at);
