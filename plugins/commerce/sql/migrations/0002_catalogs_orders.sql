-- Issue 33: catalogs of a business, product sets, shops on a Page selling
-- from a catalog, and orders that move past pending_payment. Products now
-- belong to a catalog, not a shop; each existing shop gets a catalog of
-- its own products (of no business: nobody manages it through the API).

CREATE SEQUENCE commerce.catalog_id_seq START WITH 7300000101;

CREATE TABLE commerce.catalogs (
    id          bigint      PRIMARY KEY DEFAULT nextval('commerce.catalog_id_seq'),
    -- The business the catalog belongs to (business.Of today).
    business_id text        NOT NULL,
    name        text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

ALTER SEQUENCE commerce.catalog_id_seq OWNED BY commerce.catalogs.id;

CREATE INDEX catalogs_business ON commerce.catalogs (business_id, id);

ALTER TABLE commerce.shops
    ADD COLUMN catalog_id bigint,
    -- The Page the shop is linked to; '' for none (the development shop).
    ADD COLUMN page_id text NOT NULL DEFAULT '';

UPDATE commerce.shops SET catalog_id = nextval('commerce.catalog_id_seq');
INSERT INTO commerce.catalogs (id, business_id, name) SELECT catalog_id, '', name FROM commerce.shops;

ALTER TABLE commerce.shops
    ALTER COLUMN catalog_id SET NOT NULL,
    ADD FOREIGN KEY (catalog_id) REFERENCES commerce.catalogs (id);

CREATE INDEX shops_page ON commerce.shops (page_id) WHERE page_id <> '';

-- An order line keeps its product's id and price; the product may change
-- or leave the catalog later.
ALTER TABLE commerce.order_items DROP CONSTRAINT order_items_shop_id_product_id_fkey;

ALTER TABLE commerce.products
    ADD COLUMN catalog_id bigint,
    ADD COLUMN retailer_id text,
    ADD COLUMN currency text,
    ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();

UPDATE commerce.products p SET catalog_id = s.catalog_id, retailer_id = p.id::text, currency = s.currency
FROM commerce.shops s WHERE s.id = p.shop_id;

ALTER TABLE commerce.products DROP COLUMN shop_id;

ALTER TABLE commerce.products
    ALTER COLUMN catalog_id SET NOT NULL,
    ALTER COLUMN retailer_id SET NOT NULL,
    ALTER COLUMN currency SET NOT NULL,
    ADD CHECK (currency ~ '^[A-Z]{3}$'),
    ADD PRIMARY KEY (catalog_id, id),
    ADD UNIQUE (catalog_id, retailer_id),
    ADD FOREIGN KEY (catalog_id) REFERENCES commerce.catalogs (id);

CREATE SEQUENCE commerce.product_set_id_seq START WITH 7400000101;

-- A product set is a saved filter, evaluated when read: its products are
-- those of the catalog matching it now. Each rule is NULL when absent.
CREATE TABLE commerce.product_sets (
    catalog_id   bigint      NOT NULL REFERENCES commerce.catalogs (id),
    id           bigint      NOT NULL DEFAULT nextval('commerce.product_set_id_seq') UNIQUE,
    name         text        NOT NULL,
    price_lt     bigint,
    price_gt     bigint,
    available_eq boolean,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (catalog_id, id)
);

ALTER SEQUENCE commerce.product_set_id_seq OWNED BY commerce.product_sets.id;

-- The order states (orders.go holds the transition table).
ALTER TABLE commerce.orders DROP CONSTRAINT orders_status_check;
ALTER TABLE commerce.orders
    ADD CHECK (status IN ('pending_payment', 'paid', 'fulfilled', 'cancelled', 'refunded')),
    ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
