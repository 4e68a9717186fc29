-- Platform status and SLA (CONTRACT §18).

-- Request outcomes per surface and minute, added into by every gateway
-- once a minute (package sla): requests, the failed among them (the
-- platform's fault: 5xx, or a webhook attempt that failed on our side), and
-- a latency histogram of fixed log-scale buckets (sla.Buckets of them),
-- counts per bucket, so that the p99 of any window over any gateways is
-- read from the summed buckets. At most 1,440 rows per surface and day;
-- pruned after 30 days.
CREATE TABLE core.sla_minutes (
    surface  text        NOT NULL CHECK (surface IN ('graph', 'oauth', 'completions', 'webhooks')),
    minute   timestamptz NOT NULL CHECK (date_trunc('minute', minute) = minute),
    requests bigint      NOT NULL CHECK (requests >= 0),
    errors   bigint      NOT NULL CHECK (errors >= 0),
    latency  bigint[]    NOT NULL,
    PRIMARY KEY (surface, minute)
);
CREATE INDEX sla_minutes_minute ON core.sla_minutes (minute);

-- The worst status each component had on each day, as any gateway's probes
-- saw it: the 90 days of bars of the status page. A row per component and
-- day; pruned after 90 days.
CREATE TABLE core.status_days (
    component text     NOT NULL CHECK (component <> ''),
    day       date     NOT NULL,
    -- 0 operational, 1 degraded, 2 partial_outage, 3 major_outage.
    worst     smallint NOT NULL CHECK (worst BETWEEN 0 AND 3),
    PRIMARY KEY (component, day)
);

-- Incidents, written by the operator (POST /api/admin/incidents).
CREATE TABLE core.status_incidents (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    title       text        NOT NULL CHECK (title <> '' AND length(title) <= 200),
    status      text        NOT NULL CHECK (status IN ('investigating', 'identified', 'monitoring', 'resolved')),
    components  text[]      NOT NULL DEFAULT '{}',
    started_at  timestamptz NOT NULL DEFAULT now(),
    resolved_at timestamptz,
    CHECK ((status = 'resolved') = (resolved_at IS NOT NULL))
);
CREATE INDEX status_incidents_recent ON core.status_incidents (started_at DESC);

CREATE TABLE core.status_incident_updates (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    incident_id bigint      NOT NULL REFERENCES core.status_incidents (id) ON DELETE CASCADE,
    at          timestamptz NOT NULL DEFAULT now(),
    status      text        NOT NULL CHECK (status IN ('investigating', 'identified', 'monitoring', 'resolved')),
    body        text        NOT NULL CHECK (length(body) <= 5000)
);
CREATE INDEX status_incident_updates_incident ON core.status_incident_updates (incident_id, id);
