-- Issue 26 (review): entitlement is checked again when a delivery is about
-- to be sent, not only when the dispatcher creates it (CONTRACT §15, "Events
-- reach only apps entitled to them"). A delivery retrying, held while its
-- endpoint was disabled, or failed and replayed is not sent once the Page
-- unlinked the app, the link lost the event's product, or a live app's
-- approval of the scope that reads it was withdrawn. See docs/DECISIONS.md.

-- Whether the app is entitled to an event of this type about this Page
-- (page_id as events carry it: text, not a Page id matches nothing): its
-- link to the Page carries the event's product (when it has one) and, for
-- a live app, it holds the approved scope that reads the event. The one
-- definition of the rule: the dispatcher's fan-out (DispatchEvents), the
-- claim of a delivery for sending (ClaimDeliveries) and replays use it.
CREATE FUNCTION core.page_event_entitled(app_id bigint, page_id text, event_type text) RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT EXISTS (
        SELECT 1
        FROM core.page_links l
        JOIN core.apps a ON a.id = l.app_id
        WHERE l.app_id = page_event_entitled.app_id
          AND l.page_id = CASE WHEN page_event_entitled.page_id ~ '^[0-9]{1,18}$'
                               THEN page_event_entitled.page_id::bigint END
          AND (core.event_product(event_type) IS NULL OR core.event_product(event_type) = ANY (l.products))
          AND (a.mode <> 'live'
               OR EXISTS (SELECT 1 FROM core.app_scope_reviews r
                          WHERE r.app_id = l.app_id AND r.scope = core.event_read_scope(event_type)
                            AND r.status IN ('approved', 'automated_approved'))))
    $$;

-- page_link: the delivery reached its app through the app's link to the
-- event's Page (not as the event's own app, not a console test event), so
-- its entitlement is checked again before each attempt and on replay.
ALTER TABLE core.webhook_deliveries ADD COLUMN page_link boolean NOT NULL DEFAULT false;

-- Deliveries made before this migration: those of a Page's event that were
-- not the event's own app's (as far as the outbox still tells) nor tests.
UPDATE core.webhook_deliveries d SET page_link = true
WHERE d.page_id IS NOT NULL AND NOT d.test AND d.status <> 'succeeded'
  AND NOT EXISTS (SELECT 1 FROM core.outbox o WHERE o.id = d.event_id AND o.app_id = d.app_id::text);
