-- Webhook subscriptions, the dispatcher and the delivery log (package
-- webhook). A delivery is signed with its app's client secret, which the
-- dispatcher and the claim read sealed from core.apps, its one home
-- (identity.SealedSecrets).

-- name: WebhookApp :one
-- The app a webhook call names: whether it exists and its mode.
SELECT id, mode FROM core.apps WHERE id = @id;

-- name: GetWebhookSubscription :one
SELECT * FROM core.webhook_subscriptions WHERE app_id = @app_id;

-- name: SaveWebhookSubscription :exec
-- Creates or replaces the app's endpoint. Saving re-enables an endpoint
-- that was disabled for failing and forgets its failures.
-- Deliveries held while it was disabled stay held: the app replays the
-- time range it wants (ReplayWebhookDeliveries).
INSERT INTO core.webhook_subscriptions (app_id, callback_url, events, ordering)
VALUES (@app_id, @callback_url, @events, @ordering)
ON CONFLICT (app_id) DO UPDATE
SET callback_url = excluded.callback_url, events = excluded.events, ordering = excluded.ordering, active = true,
    failing_since = NULL, disabled_at = NULL, paused_until = NULL, updated_at = now();

-- name: WebhookEventsWithoutProduct :many
-- The event types of events whose product the app does not have, with that
-- product. The app has a product when it could receive its events: the
-- product is enabled on the app (its app events) or one of its Page links
-- carries it (the Pages' events).
SELECT t.event_type::text AS event_type, core.event_product(t.event_type)::text AS product
FROM unnest(@events::text[]) WITH ORDINALITY AS t (event_type, n)
WHERE core.event_product(t.event_type) IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM core.app_products p
                  WHERE p.app_id = @app_id AND p.product = core.event_product(t.event_type))
  AND NOT EXISTS (SELECT 1 FROM core.page_links l
                  WHERE l.app_id = @app_id AND core.event_product(t.event_type) = ANY (l.products))
ORDER BY t.n;

-- name: DeleteWebhookSubscription :execrows
DELETE FROM core.webhook_subscriptions WHERE app_id = @app_id;

-- name: OutboxQueued :one
-- Whether any event waits in the dispatch queue: the idle dispatcher's
-- poll. DispatchEvents costs PostgreSQL 1.6 ms of planning per run on the
-- bookkeeping connections (force_custom_plan), this a few microseconds;
-- an idle gateway polls ten times a second.
SELECT EXISTS (SELECT 1 FROM core.outbox_pending) AS queued;

-- name: DeliveriesDue :one
-- Whether any delivery is due: the idle claimer's poll, for the reason
-- OutboxQueued is the dispatcher's (ClaimDeliveries plans in 0.9 ms). It
-- finds every delivery ClaimDeliveries would consider, and more.
SELECT EXISTS (SELECT 1 FROM core.webhook_deliveries d
               WHERE d.status = 'pending' AND d.next_attempt_at <= now()) AS due;

-- name: DispatchEvents :many
-- Takes up to max_events undispatched events off the queue
-- (core.outbox_pending, entries another dispatcher holds are skipped),
-- creates one delivery per event and subscribed app (every app entitled to
-- the event's Page's events, see recipient, and the event's own app), in
-- one statement. The outbox rows are only read: deleting the queue entry
-- is what marks an event dispatched (migration 0267). Ids that are not
-- decimal match no app or Page rather than failing the batch.
--
-- The first claim_max new deliveries are created already leased to the
-- caller with lease_token, as ClaimDeliveries would lease them, and are
-- returned with what an attempt needs: the first attempt then costs no
-- claim. Every row carries the counts; when nothing was leased there is one
-- row, whose delivery columns are NULL. The fair share of ClaimDeliveries
-- (app_share, busy_apps, busy_room) bounds what each app gets leased.
WITH busy AS (
    -- Two set-returning functions in one select list run in lockstep.
    SELECT unnest(@busy_apps::bigint[]) AS app_id, unnest(@busy_room::bigint[]) AS room
), taken AS (
    -- An entry whose event is gone (erased by a person's leaving in the
    -- meantime) is taken all the same and makes nothing.
    -- = ANY (ARRAY(...)), not IN (...): the statement runs with a generic
    -- plan (see the dispatcher), which cannot know max_events and would
    -- expect a tenth of the queue; the array is estimated at a few rows,
    -- so the entries are deleted by their key at any queue length.
    DELETE FROM core.outbox_pending p
    WHERE p.seq = ANY (ARRAY(SELECT q.seq FROM core.outbox_pending q ORDER BY q.seq LIMIT @max_events
                             FOR UPDATE SKIP LOCKED))
    RETURNING p.seq
), ev AS (
    SELECT o.seq, o.id, o.type, o.page_id, o.app_id, o.data, o.created_at, o.ordering_key, o.user_id
    FROM taken JOIN core.outbox o ON o.seq = taken.seq
), linked AS MATERIALIZED (
    -- Each app linked to a Page of the batch, once per Page and event
    -- type: a batch is mostly a few Pages' events of a few types, and the
    -- entitlement is asked once for each (MATERIALIZED keeps the check
    -- below from being pushed under the DISTINCT, once per event).
    SELECT DISTINCT ev.page_id, ev.type, l.app_id
    FROM ev JOIN core.page_links l
      ON l.page_id = CASE WHEN ev.page_id ~ '^[0-9]{1,18}$' THEN ev.page_id::bigint END
), entitled AS MATERIALIZED (
    SELECT k.page_id, k.type, k.app_id FROM linked k
    WHERE core.page_event_entitled(k.app_id, k.page_id, k.type)
), recipient AS (
    -- A Page's event goes to the apps whose link to the Page carries the
    -- event's product (when it has one), and, for a live app, that hold
    -- the approved scope that reads it (CONTRACT §15;
    -- core.page_event_entitled, migration 0102). page_link: the app gets
    -- it only through that link (not as the event's own app), so its
    -- entitlement is checked again before each attempt (ClaimDeliveries).
    SELECT r.seq, r.app_id, bool_and(r.page_link) AS page_link
    FROM (SELECT ev.seq, e.app_id, true AS page_link
          FROM ev JOIN entitled e ON e.page_id = ev.page_id AND e.type = ev.type
          UNION ALL
          SELECT ev.seq, a.id, false
          FROM ev JOIN core.apps a
            ON a.id = CASE WHEN ev.app_id ~ '^[0-9]{1,18}$' THEN ev.app_id::bigint END) r
    GROUP BY r.seq, r.app_id
), fanout AS (
    -- A disabled endpoint's deliveries are created held; an ordered
    -- subscription's carry the event's ordering key and seq. An app with a
    -- listener (`gateway listen`, core.webhook_listeners) gets the events
    -- the listener asked for even without a subscription, never held.
    SELECT r.app_id, ev.id, ev.type, ev.page_id, ev.created_at, ev.data,
           COALESCE(s.active, false) OR lst.listening AS active,
           COALESCE(s.paused_until > now(), false) AS paused,
           CASE WHEN s.ordering = 'conversation' THEN ev.ordering_key END AS ordering_key,
           ev.seq AS event_seq, r.page_link, ev.user_id
    FROM recipient r
    JOIN ev ON ev.seq = r.seq
    LEFT JOIN core.webhook_subscriptions s ON s.app_id = r.app_id AND ev.type = ANY (s.events)
    CROSS JOIN LATERAL (
        SELECT EXISTS (SELECT 1 FROM core.webhook_listeners w
                       WHERE w.app_id = r.app_id AND w.expires_at > now()
                         AND (cardinality(w.events) = 0 OR ev.type = ANY (w.events))) AS listening) lst
    WHERE s.app_id IS NOT NULL OR lst.listening
), leasable AS (
    -- Only unordered deliveries to enabled endpoints that are not paused
    -- are leased at once: the others go through the claim, which checks
    -- an ordered one's turn and a paused endpoint's Retry-After. Each app
    -- gets its oldest, up to its room.
    SELECT f.*, (f.active AND NOT f.paused AND f.ordering_key IS NULL)
               AND row_number() OVER (PARTITION BY f.app_id, f.active AND NOT f.paused AND f.ordering_key IS NULL
                                      ORDER BY f.event_seq)
                   <= COALESCE((SELECT b.room FROM busy b WHERE b.app_id = f.app_id),
                               sqlc.arg(app_share)::bigint) AS may_lease
    FROM fanout f
), ranked AS (
    SELECT f.*, f.may_lease
               AND row_number() OVER (PARTITION BY f.may_lease ORDER BY f.event_seq, f.app_id)
                   <= sqlc.arg(claim_max)::bigint AS leased,
           now() + make_interval(secs => sqlc.arg(lease_ms)::bigint / 1000.0) AS lease_ends,
           sqlc.arg(lease_token)::bigint AS lease_token
    FROM leasable f
), delivered AS (
    INSERT INTO core.webhook_deliveries (app_id, event_id, event_type, page_id, event_created_at, data,
                                         status, next_attempt_at, lease_token, ordering_key, ordering_seq, page_link,
                                         user_id)
    SELECT f.app_id, f.id, f.type, f.page_id, f.created_at, f.data,
           CASE WHEN f.active THEN 'pending' ELSE 'held' END,
           CASE WHEN NOT f.active THEN NULL WHEN f.leased THEN f.lease_ends ELSE now() END,
           CASE WHEN f.leased THEN f.lease_token END,
           f.ordering_key, CASE WHEN f.ordering_key IS NOT NULL THEN f.event_seq END, f.page_link, f.user_id
    FROM ranked f
    ORDER BY f.event_seq, f.app_id
    RETURNING seq, id, app_id, event_id, event_type, page_id, event_created_at, data, test, failed_attempts,
              lease_token
), counts AS (
    SELECT (SELECT count(*) FROM taken)::bigint AS events,
           (SELECT count(*) FROM delivered)::bigint AS deliveries
)
SELECT counts.events, counts.deliveries,
       c.seq, c.id, c.app_id, c.event_id, c.event_type, c.page_id, c.event_created_at, c.data,
       c.test, c.failed_attempts, a.mode AS app_mode, s.callback_url, s.active,
       a.client_secret_sealed AS sealed, a.previous_secret_sealed AS previous_sealed,
       a.previous_secret_expires_at
FROM counts
LEFT JOIN delivered c ON c.lease_token IS NOT NULL
LEFT JOIN core.apps a ON a.id = c.app_id
LEFT JOIN core.webhook_subscriptions s ON s.app_id = c.app_id;

-- name: ClaimDeliveries :many
-- Leases up to max_rows due deliveries to the caller: their next_attempt_at
-- moves past the lease, so no one else claims them meanwhile, and
-- lease_token fences the result. Returns what an attempt needs.
--
-- Skipped: deliveries to an endpoint paused by Retry-After, and ordered
-- deliveries that are not their key's turn: an older delivery of the same
-- app and key is still pending (being attempted or waiting for a retry),
-- or an older event of the key is not dispatched yet (another gateway's
-- dispatch of it has not committed).
--
-- Fair share: no app gets more than app_share of the caller's attempts in
-- flight. busy_apps and busy_room name the apps the caller already has
-- attempts of, and how many more each may start (0: none, and its due
-- deliveries are not even considered). The candidates are the scan_rows
-- oldest due deliveries of the other apps; of those, each app gets its
-- oldest, up to its room.
--
-- Entitlement: a delivery made through its app's link to a Page
-- (page_link) is sent only while the app is still entitled to the event
-- (core.page_event_entitled, as at fan-out). A due one that no longer is
-- is not leased: it fails at once, with an attempt saying why (CONTRACT
-- §15, docs/DECISIONS.md "Events reach only apps entitled to them").
WITH busy AS (
    -- Two set-returning functions in one select list run in lockstep.
    SELECT unnest(@busy_apps::bigint[]) AS app_id, unnest(@busy_room::bigint[]) AS room
), candidate AS (
    SELECT d.seq, d.app_id, d.next_attempt_at,
           (NOT d.page_link OR core.page_event_entitled(d.app_id, d.page_id, d.event_type)) AS entitled
    FROM core.webhook_deliveries d
    WHERE d.status = 'pending' AND d.next_attempt_at <= now()
      AND NOT EXISTS (SELECT 1 FROM busy b WHERE b.app_id = d.app_id AND b.room <= 0)
      AND NOT EXISTS (SELECT 1 FROM core.webhook_subscriptions s
                      WHERE s.app_id = d.app_id AND s.paused_until > now() AND NOT d.test)
      AND (d.ordering_key IS NULL OR (
          NOT EXISTS (SELECT 1 FROM core.webhook_deliveries p
                      WHERE p.app_id = d.app_id AND p.ordering_key = d.ordering_key
                        AND p.status = 'pending' AND p.ordering_seq < d.ordering_seq)
          AND NOT EXISTS (SELECT 1 FROM core.outbox_pending o
                          WHERE o.ordering_key = d.ordering_key AND o.seq < d.ordering_seq)))
    ORDER BY d.next_attempt_at
    LIMIT @scan_rows
), fair AS (
    SELECT c.seq, c.next_attempt_at
    FROM (SELECT candidate.*,
                 row_number() OVER (PARTITION BY candidate.app_id ORDER BY candidate.next_attempt_at) AS n
          FROM candidate WHERE candidate.entitled) c
    LEFT JOIN busy b ON b.app_id = c.app_id
    WHERE c.n <= COALESCE(b.room, sqlc.arg(app_share)::bigint)
), revoked AS (
    UPDATE core.webhook_deliveries d
    SET status = 'failed', next_attempt_at = NULL, lease_token = NULL, completed_at = now(),
        attempts = d.attempts || jsonb_build_array(jsonb_build_object(
            'at', now(), 'status_code', 0, 'latency_ms', 0, 'response_excerpt', '',
            'error', 'not sent: the app is no longer entitled to this event (its link to the Page or the approved scope that reads it was removed)'))
    FROM candidate c
    WHERE d.seq = c.seq AND NOT c.entitled AND d.status = 'pending' AND d.next_attempt_at <= now()
), due AS (
    -- The candidates were read unlocked: the lock re-checks that each is
    -- still due (another gateway may have claimed it meanwhile).
    SELECT d.seq,
           now() + make_interval(secs => sqlc.arg(lease_ms)::bigint / 1000.0) AS lease_ends,
           @lease_token::bigint AS lease_token
    FROM core.webhook_deliveries d
    JOIN fair f ON f.seq = d.seq
    WHERE d.status = 'pending' AND d.next_attempt_at <= now()
    ORDER BY f.next_attempt_at
    LIMIT @max_rows
    FOR UPDATE OF d SKIP LOCKED
), claimed AS (
    UPDATE core.webhook_deliveries d
    SET next_attempt_at = due.lease_ends, lease_token = due.lease_token
    FROM due WHERE d.seq = due.seq
    RETURNING d.seq, d.id, d.app_id, d.event_id, d.event_type, d.page_id, d.event_created_at,
              d.data, d.test, d.failed_attempts, d.ordering_key
)
SELECT c.seq, c.id, c.app_id, c.event_id, c.event_type, c.page_id, c.event_created_at, c.data,
       c.test, c.failed_attempts, a.mode AS app_mode, s.callback_url, s.active, c.ordering_key,
       a.client_secret_sealed AS sealed, a.previous_secret_sealed AS previous_sealed,
       a.previous_secret_expires_at
FROM claimed c
JOIN core.apps a ON a.id = c.app_id
LEFT JOIN core.webhook_subscriptions s ON s.app_id = c.app_id;

-- name: RecordOutcomes :many
-- Writes a batch of attempt outcomes in one statement (one round trip, all
-- or nothing):
--  * appends each attempt (a JSON object, or '' for none) to its
--    delivery's log, and moves the delivery, if still leased with the given
--    token, to its new state: done (succeeded, failed) or pending again
--    after delay_ms. A result whose lease was lost is logged and changes
--    nothing else.
--  * updates each endpoint's failure streak: had_success says one of its
--    attempts succeeded, since is its first failure after its last success
--    (NULL when its last attempt succeeded). An endpoint whose streak began
--    before the window is disabled. Endpoints whose state does not change
--    are not written.
-- Returns the apps whose endpoint was disabled now.
WITH outcome AS (
    SELECT unnest(@seqs::bigint[]) AS seq, unnest(@lease_tokens::bigint[]) AS lease_token,
           unnest(@statuses::text[]) AS status, unnest(@failed_incs::integer[]) AS failed_inc,
           unnest(@delays_ms::bigint[]) AS delay_ms, unnest(@attempts::text[]) AS attempt
), done AS (
    -- "Fenced": the delivery is still pending under this result's lease.
    -- The statement runs with a generic plan (the recorder, runner.generic):
    -- joined only to the unnested outcomes, whose count it cannot know,
    -- the generic plan made on a small table hashes a sequential scan of it,
    -- and kept, scanned the whole table once it had grown. seq = ANY (seqs)
    -- lets it find them by their key at any size (EXPLAIN of the generic
    -- plan: a bitmap scan of the primary key at 28,000 rows; a scan of the
    -- few pages of a small table, which the next plan, planAge later, does
    -- not keep).
    UPDATE core.webhook_deliveries d
    SET attempts = CASE WHEN o.attempt = '' THEN d.attempts
                        ELSE d.attempts || jsonb_build_array(o.attempt::jsonb) END,
        status = CASE WHEN d.lease_token IS NOT DISTINCT FROM o.lease_token AND d.status = 'pending'
                      THEN o.status ELSE d.status END,
        failed_attempts = d.failed_attempts
                          + CASE WHEN d.lease_token IS NOT DISTINCT FROM o.lease_token AND d.status = 'pending' THEN o.failed_inc ELSE 0 END,
        next_attempt_at = CASE
            WHEN NOT (d.lease_token IS NOT DISTINCT FROM o.lease_token AND d.status = 'pending') THEN d.next_attempt_at
            WHEN o.status = 'pending' THEN now() + o.delay_ms * '1 millisecond'::interval END,
        lease_token = CASE WHEN d.lease_token IS NOT DISTINCT FROM o.lease_token AND d.status = 'pending'
                           THEN NULL ELSE d.lease_token END,
        completed_at = CASE
            WHEN NOT (d.lease_token IS NOT DISTINCT FROM o.lease_token AND d.status = 'pending') THEN d.completed_at
            WHEN o.status IN ('succeeded', 'failed') THEN now() END
    FROM outcome o
    WHERE d.seq = ANY (@seqs::bigint[]) AND d.seq = o.seq
    RETURNING 1
), health AS (
    SELECT unnest(@app_ids::bigint[]) AS app_id, unnest(@had_success::boolean[]) AS had_success,
           unnest(@since::timestamptz[]) AS since
), streak AS (
    SELECT s.app_id, n.failing_since,
           s.active AND COALESCE(n.failing_since <= now() - make_interval(secs => sqlc.arg(window_ms)::bigint / 1000.0), false) AS disable
    FROM core.webhook_subscriptions s
    JOIN health h ON h.app_id = s.app_id
    CROSS JOIN LATERAL (SELECT CASE WHEN h.had_success THEN h.since ELSE COALESCE(s.failing_since, h.since) END
                        AS failing_since) n
), judged AS (
    UPDATE core.webhook_subscriptions s
    SET failing_since = streak.failing_since,
        active = s.active AND NOT streak.disable,
        disabled_at = CASE WHEN streak.disable THEN now() ELSE s.disabled_at END
    FROM streak
    WHERE s.app_id = streak.app_id
      AND (s.failing_since IS DISTINCT FROM streak.failing_since OR streak.disable)
    RETURNING s.app_id, streak.disable
)
SELECT judged.app_id FROM judged WHERE judged.disable;

-- name: InsertWebhookDelivery :one
-- A delivery made outside the dispatcher: a replay or a test event. A
-- replay of a delivery made through a Page link (page_link) is made only
-- while the app is still entitled to the event: no row otherwise.
INSERT INTO core.webhook_deliveries (app_id, event_id, event_type, page_id, event_created_at, data, test,
                                     replay_of, next_attempt_at, page_link, user_id)
SELECT @app_id, @event_id, @event_type, sqlc.narg(page_id), @event_created_at, @data, @test,
       sqlc.narg(replay_of), now(), @page_link::boolean, sqlc.narg(user_id)
WHERE NOT @page_link::boolean OR core.page_event_entitled(@app_id, sqlc.narg(page_id), @event_type)
RETURNING id;

-- name: GetWebhookDelivery :one
SELECT * FROM core.webhook_deliveries WHERE id = @id;

-- name: ListWebhookDeliveriesOlder :many
-- The app's deliveries older than the cursor (a seq), newest first, with
-- the optional filters; one more than asked tells whether there is more.
SELECT seq, id, event_id, event_type, status, attempts FROM core.webhook_deliveries
WHERE app_id = @app_id AND seq < @cursor
  AND (sqlc.narg(status)::text IS NULL OR status = sqlc.narg(status)::text)
  AND (sqlc.narg(event_type)::text IS NULL OR event_type = sqlc.narg(event_type)::text)
ORDER BY seq DESC
LIMIT @max_rows;

-- name: ListWebhookDeliveriesNewer :many
-- The app's deliveries newer than the cursor, oldest first: the caller
-- reverses them.
SELECT seq, id, event_id, event_type, status, attempts FROM core.webhook_deliveries
WHERE app_id = @app_id AND seq > @cursor
  AND (sqlc.narg(status)::text IS NULL OR status = sqlc.narg(status)::text)
  AND (sqlc.narg(event_type)::text IS NULL OR event_type = sqlc.narg(event_type)::text)
ORDER BY seq ASC
LIMIT @max_rows;

-- name: CountPendingWebhookDeliveries :one
-- The backlog: deliveries not yet done, for metrics and tests.
SELECT count(*) FROM core.webhook_deliveries WHERE status = 'pending';

-- name: WebhookLag :one
-- The metrics' view of delivery: deliveries pending (due, leased or
-- waiting for a retry), outbox events not yet dispatched, and how long
-- the oldest due delivery (not leased to anyone) and the oldest
-- undispatched event have waited, in seconds (0 when none).
SELECT (SELECT count(*) FROM core.webhook_deliveries WHERE status = 'pending')::bigint AS pending,
       (SELECT count(*) FROM core.outbox_pending)::bigint AS undispatched,
       COALESCE((SELECT EXTRACT(EPOCH FROM now() - min(next_attempt_at))
                 FROM core.webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now()), 0)::float8 AS due_wait,
       COALESCE((SELECT EXTRACT(EPOCH FROM now() - min(created_at))
                 FROM core.outbox o JOIN core.outbox_pending p ON p.seq = o.seq), 0)::float8 AS dispatch_wait;

-- name: DisableWebhookEndpoint :exec
-- The receiver answered 410 Gone: the endpoint is disabled at once (saving
-- the subscription again enables it) and its deliveries are held.
UPDATE core.webhook_subscriptions
SET active = false, disabled_at = now(), updated_at = now()
WHERE app_id = @app_id AND active;

-- name: PauseWebhookEndpoint :exec
-- The receiver answered 429 or 503 with Retry-After: nothing more is sent
-- to it before until.
UPDATE core.webhook_subscriptions
SET paused_until = GREATEST(COALESCE(paused_until, now()), @until::timestamptz)
WHERE app_id = @app_id;

-- name: ReplayWebhookDeliveries :one
-- Replays an app's deliveries of a time range (by event time) whose status
-- is one of statuses (failed, held) and that the app is still entitled
-- to (page_link), oldest first, at most max_rows: a
-- held delivery is sent as it is (pending now: it was never sent); a
-- failed one is copied into a new delivery (replay_of), as a single replay
-- does. Ordered deliveries keep their key and seq, so they stay in order.
-- Returns how many deliveries were queued.
WITH picked AS (
    SELECT d.* FROM core.webhook_deliveries d
    WHERE d.app_id = @app_id AND d.status = ANY (@statuses::text[])
      AND d.event_created_at >= @since AND d.event_created_at < @until
      -- Not replayed: a delivery the app is no longer entitled to (as
      -- ClaimDeliveries).
      AND (NOT d.page_link OR core.page_event_entitled(d.app_id, d.page_id, d.event_type))
    ORDER BY d.seq
    LIMIT @max_rows
    FOR UPDATE SKIP LOCKED
), released AS (
    UPDATE core.webhook_deliveries d
    SET status = 'pending', next_attempt_at = now(), lease_token = NULL
    FROM picked p
    WHERE d.seq = p.seq AND p.status = 'held'
    RETURNING 1
), copied AS (
    INSERT INTO core.webhook_deliveries (app_id, event_id, event_type, page_id, event_created_at, data, test,
                                         replay_of, next_attempt_at, ordering_key, ordering_seq, page_link, user_id)
    SELECT p.app_id, p.event_id, p.event_type, p.page_id, p.event_created_at, p.data, p.test,
           p.seq, now(), p.ordering_key, p.ordering_seq, p.page_link, p.user_id
    FROM picked p WHERE p.status = 'failed'
    ORDER BY p.seq
    RETURNING 1
)
SELECT ((SELECT count(*) FROM released) + (SELECT count(*) FROM copied))::bigint AS queued;

-- name: AddWebhookListener :one
-- Registers a listener of the app, after deleting the app's expired ones,
-- unless the app already has max_listeners connected: then nothing is
-- added and added is false.
WITH gone AS (
    DELETE FROM core.webhook_listeners l WHERE l.app_id = @app_id AND l.expires_at <= now()
), live AS (
    SELECT count(*) AS n FROM core.webhook_listeners l
    WHERE l.app_id = @app_id AND l.expires_at > now() AND l.ended_at IS NULL
), added AS (
    INSERT INTO core.webhook_listeners (id, app_id, events, expires_at)
    SELECT @id, @app_id, @events::text[], now() + make_interval(secs => sqlc.arg(ttl_ms)::bigint / 1000.0)
    FROM live WHERE live.n < sqlc.arg(max_listeners)::bigint
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM added) AS added;

-- name: RenewWebhookListener :exec
UPDATE core.webhook_listeners
SET expires_at = now() + make_interval(secs => sqlc.arg(ttl_ms)::bigint / 1000.0)
WHERE id = @id;

-- name: EndWebhookListener :exec
-- A listener that went away counts for grace_ms more, so that a
-- delivery it left unacknowledged, and the events of a short
-- disconnection, wait for it to reconnect.
UPDATE core.webhook_listeners
SET expires_at = least(expires_at, now() + make_interval(secs => sqlc.arg(grace_ms)::bigint / 1000.0)),
    ended_at = now()
WHERE id = @id;

-- name: WebhookAppListening :one
-- Whether the app has a listener that has not expired, on any gateway.
SELECT EXISTS (SELECT 1 FROM core.webhook_listeners WHERE app_id = @app_id AND expires_at > now()) AS listening;

-- name: WakeWebhookDeliveries :execrows
-- Makes the app's deliveries that wait for a retry due now: a listener
-- (re)connected, and gets at once what it left unacknowledged. Leased
-- deliveries (lease_token set) are left to their attempt.
UPDATE core.webhook_deliveries
SET next_attempt_at = now()
WHERE app_id = @app_id AND status = 'pending' AND lease_token IS NULL AND next_attempt_at > now();
