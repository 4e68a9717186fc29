-- Platform status and SLA (gateway/internal/sla, gateway/internal/status).

-- name: AddSLAMinute :exec
-- Adds one gateway's minute of a surface into the minute's row: counts and
-- histogram buckets add up, whichever gateways flush.
INSERT INTO core.sla_minutes (surface, minute, requests, errors, latency)
VALUES (@surface, @minute, @requests, @errors, @latency::bigint[])
ON CONFLICT (surface, minute) DO UPDATE SET
    requests = core.sla_minutes.requests + EXCLUDED.requests,
    errors   = core.sla_minutes.errors + EXCLUDED.errors,
    latency  = ARRAY(SELECT coalesce(core.sla_minutes.latency[i], 0) + coalesce(EXCLUDED.latency[i], 0)
                     FROM generate_series(1, greatest(cardinality(core.sla_minutes.latency),
                                                      cardinality(EXCLUDED.latency))) AS i);

-- name: SLAWindow :many
-- Each surface's requests, errors and summed histogram since @since.
SELECT s.surface::text AS surface, s.requests::bigint AS requests, s.errors::bigint AS errors,
       coalesce((SELECT array_agg(b.n ORDER BY b.i) FROM (
           SELECT u.i, sum(u.c)::bigint AS n
           FROM core.sla_minutes m2, unnest(m2.latency) WITH ORDINALITY AS u(c, i)
           WHERE m2.surface = s.surface AND m2.minute >= @since
           GROUP BY u.i) b), '{}')::bigint[] AS latency
FROM (SELECT m.surface, sum(m.requests) AS requests, sum(m.errors) AS errors
      FROM core.sla_minutes m WHERE m.minute >= @since GROUP BY m.surface) s;

-- name: PruneSLAMinutes :execrows
-- Minutes older than the longest window (30 days) and a day.
DELETE FROM core.sla_minutes WHERE (surface, minute) IN (
    SELECT surface, minute FROM core.sla_minutes
    WHERE minute < now() - interval '31 days' ORDER BY minute LIMIT @batch);

-- name: NoteStatusDay :exec
-- Raises a component's worst status of a day to @worst.
INSERT INTO core.status_days (component, day, worst) VALUES (@component, @day, @worst)
ON CONFLICT (component, day) DO UPDATE SET worst = GREATEST(core.status_days.worst, EXCLUDED.worst);

-- name: StatusDays :many
SELECT component, day, worst FROM core.status_days WHERE day >= @since::date ORDER BY component, day;

-- name: PruneStatusDays :execrows
DELETE FROM core.status_days WHERE (component, day) IN (
    SELECT component, day FROM core.status_days WHERE day < current_date - 91 LIMIT @batch);

-- name: WebhookBacklog :one
-- Deliveries due and waiting for a worker (at most 10,000 counted), and
-- how long the oldest has waited.
SELECT count(*)::bigint AS due,
       coalesce(extract(epoch FROM now() - min(next_attempt_at)), 0)::float8 AS oldest_seconds
FROM (SELECT next_attempt_at FROM core.webhook_deliveries
      WHERE status = 'pending' AND next_attempt_at <= now()
      ORDER BY next_attempt_at LIMIT 10000) d;

-- name: CreateIncident :one
INSERT INTO core.status_incidents (title, status, components, resolved_at)
VALUES (@title, @status, @components::text[], CASE WHEN @status = 'resolved' THEN now() END)
RETURNING id, started_at;

-- name: GetIncidentForUpdate :one
SELECT id, status FROM core.status_incidents WHERE id = @id FOR UPDATE;

-- name: SetIncidentStatus :exec
UPDATE core.status_incidents
SET status = @status, resolved_at = CASE WHEN @status = 'resolved' THEN now() END
WHERE id = @id;

-- name: AddIncidentUpdate :exec
INSERT INTO core.status_incident_updates (incident_id, status, body) VALUES (@incident_id, @status, @body);

-- name: RecentIncidents :many
-- Unresolved incidents and those resolved since @since, newest first.
SELECT id, title, status, components, started_at, resolved_at FROM core.status_incidents
WHERE resolved_at IS NULL OR resolved_at >= @since
ORDER BY started_at DESC, id DESC LIMIT 50;

-- name: IncidentUpdates :many
SELECT incident_id, at, status, body FROM core.status_incident_updates
WHERE incident_id = ANY(@ids::bigint[]) ORDER BY incident_id, id DESC;
