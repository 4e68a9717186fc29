-- Issue 26: which apps are entitled to an event (CONTRACT §15). The rule is
-- a function of the event type, so that the dispatcher (DispatchEvents) and
-- the subscription check (WebhookEventsWithoutProduct) share one
-- definition, and an event's entitlement never depends on which plugins are
-- loaded when it is dispatched. See docs/DECISIONS.md, "Events reach only
-- apps entitled to them".

-- The product an app must have to get events of this type, or NULL when
-- the type belongs to no such product. A plugin names its events after
-- itself, and the plugin's name is the product: book.post.created is
-- book's; the Page messaging events page.message.* are svcchat's. Only the
-- products an app can be granted count (those core.app_products and
-- core.page_links hold: CreateAppRequest and CreatePageLinkRequest list
-- them); a plugin that is no such product (social, a partner's plugin) has
-- no grant to check. A product that becomes grantable is added here.
CREATE FUNCTION core.event_product(event_type text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CASE
        WHEN event_type LIKE 'page.message.%' OR event_type LIKE 'svcchat.%' THEN 'svcchat'
        WHEN event_type LIKE 'book.%' THEN 'book'
        WHEN event_type LIKE 'wearables.%' THEN 'wearables'
    END
    $$;

-- The scope a live app needs approved to get an event about a Page:
-- svcchat:read for the messaging events (they carry what people wrote),
-- pages:read for any other event about a Page (its content).
CREATE FUNCTION core.event_read_scope(event_type text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN core.event_product(event_type) = 'svcchat' THEN 'svcchat:read' ELSE 'pages:read' END $$;
