-- Issue 34 item 3: core.page_event_entitled (migration 0102), the one
-- check of an app's entitlement to a Page's event, keeps its plan.
--
-- As a SQL function that cannot be inlined (it holds a sub-select), its
-- body was parsed and planned again by every statement that called it:
-- each dispatch, claim, replay and test event. That cost about 350 µs of
-- PostgreSQL CPU per statement for one call (5,000 statements, backend CPU
-- from /proc: 316–364 µs a statement against 30 µs now; 100 calls in one
-- statement cost the same as before, about 20 µs each). In PL/pgSQL the
-- parsed body is kept per connection, and plan_cache_mode = auto lets the
-- plan be kept too (the webhook bookkeeping connections plan their own
-- statements afresh; the small lookups by key here need no fresh plan).
-- The rule is unchanged, word for word.
CREATE OR REPLACE FUNCTION core.page_event_entitled(app_id bigint, page_id text, event_type text) RETURNS boolean
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET plan_cache_mode = auto
    AS $$
BEGIN
    RETURN EXISTS (
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
                            AND r.status IN ('approved', 'automated_approved'))));
END;
$$;
