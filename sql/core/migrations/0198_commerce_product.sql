-- Issue 33: commerce (and ads) become products an app can be granted
-- (CONTRACT §19), so commerce's events reach only the apps whose link to
-- the shop's Page carries commerce. core.event_product (0101) is replaced
-- with the same rule and the commerce line.
CREATE OR REPLACE FUNCTION core.event_product(event_type text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CASE
        WHEN event_type LIKE 'page.message.%' OR event_type LIKE 'svcchat.%' THEN 'svcchat'
        WHEN event_type LIKE 'book.%' THEN 'book'
        WHEN event_type LIKE 'wearables.%' THEN 'wearables'
        WHEN event_type LIKE 'commerce.%' THEN 'commerce'
    END
    $$;
