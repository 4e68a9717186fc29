-- Partners (issue 32 item 4, CONTRACT §18): a business registered in the
-- partner program. Its tier follows from measured criteria (identity
-- partner.go, AssessPartner); the last assessment is kept here, written on
-- every read of partner/<id> and at least daily by any gateway's loop.
CREATE TABLE core.partners (
    id            bigint PRIMARY KEY DEFAULT nextval('core.object_id'),
    business_id   bigint      NOT NULL UNIQUE REFERENCES core.businesses (id) ON DELETE CASCADE,
    tier          text        NOT NULL DEFAULT 'registered'
        CHECK (tier IN ('registered', 'certified', 'premier')),
    -- The criteria of the last assessment: [{"name","met","value"}].
    criteria      jsonb       NOT NULL DEFAULT '[]',
    assessed_at   timestamptz NOT NULL DEFAULT now(),
    registered_by bigint REFERENCES core.users (id) ON DELETE SET NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
-- The daily loop's queue: the partners assessed longest ago.
CREATE INDEX partners_assessed_idx ON core.partners (assessed_at);

-- Runs of `gateway smoke --report-partner`: the smoke check run against an
-- app of the partner's business, reported with the user token its OAuth
-- step obtained for that app. The criterion looks at 30 days; older runs
-- are not pruned yet (a few a month per partner).
CREATE TABLE core.partner_smoke_runs (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    partner_id bigint      NOT NULL REFERENCES core.partners (id) ON DELETE CASCADE,
    app_id     bigint      NOT NULL REFERENCES core.apps (id) ON DELETE CASCADE,
    passed     integer     NOT NULL CHECK (passed >= 0),
    failed     integer     NOT NULL CHECK (failed >= 0),
    summary    text        NOT NULL DEFAULT '',
    ran_by     bigint REFERENCES core.users (id) ON DELETE SET NULL,
    ran_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX partner_smoke_runs_partner_idx ON core.partner_smoke_runs (partner_id, ran_at DESC);

-- Webhook delivery success of an app over 30 days: an index-only range
-- scan of its completed, non-test deliveries (partner criteria).
CREATE INDEX webhook_deliveries_completed ON core.webhook_deliveries (app_id, completed_at) INCLUDE (status)
    WHERE status IN ('succeeded', 'failed') AND NOT test;
