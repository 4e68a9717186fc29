-- The commerce plugin's schema: shops ("maisons"), their catalogs and the
-- orders people place by checkout. None of it is a Page's data: every
-- table is keyed by its shop, first in the primary key, so that a shop's
-- rows live together when sharded. Ids are unique on their own too, since
-- nodes name an object by its id alone.

CREATE SEQUENCE commerce.shop_id_seq START WITH 7000000101;

CREATE TABLE commerce.shops (
    id          bigint      PRIMARY KEY DEFAULT nextval('commerce.shop_id_seq'),
    name        text        NOT NULL,
    -- ISO 4217; every price of the shop is in it.
    currency    text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    created_at  timestamptz NOT NULL DEFAULT now()
);

ALTER SEQUENCE commerce.shop_id_seq OWNED BY commerce.shops.id;

CREATE SEQUENCE commerce.product_id_seq START WITH 7100000101;

CREATE TABLE commerce.products (
    shop_id     bigint      NOT NULL REFERENCES commerce.shops (id),
    id          bigint      NOT NULL DEFAULT nextval('commerce.product_id_seq') UNIQUE,
    name        text        NOT NULL,
    -- Minor units of the shop's currency; at most 10^9, so that no order
    -- total (50 lines of 99) leaves the range a JSON number holds exactly.
    price       bigint      NOT NULL CHECK (price > 0 AND price <= 1000000000),
    available   boolean     NOT NULL DEFAULT true,
    PRIMARY KEY (shop_id, id)
);

ALTER SEQUENCE commerce.product_id_seq OWNED BY commerce.products.id;

CREATE SEQUENCE commerce.order_id_seq START WITH 7200000001;

CREATE TABLE commerce.orders (
    shop_id       bigint      NOT NULL REFERENCES commerce.shops (id),
    id            bigint      NOT NULL DEFAULT nextval('commerce.order_id_seq') UNIQUE,
    buyer_user_id text        NOT NULL,
    -- The app whose token placed it; empty for the person's own session.
    app_id        text        NOT NULL,
    -- Payment happens outside the platform: an order waits for it.
    status        text        NOT NULL DEFAULT 'pending_payment' CHECK (status IN ('pending_payment')),
    total         bigint      NOT NULL CHECK (total > 0),
    currency      text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (shop_id, id)
);

ALTER SEQUENCE commerce.order_id_seq OWNED BY commerce.orders.id;

CREATE TABLE commerce.order_items (
    shop_id    bigint  NOT NULL,
    order_id   bigint  NOT NULL,
    product_id bigint  NOT NULL,
    quantity   integer NOT NULL CHECK (quantity BETWEEN 1 AND 99),
    -- The price when ordered; the catalog may change later.
    unit_price bigint  NOT NULL,
    PRIMARY KEY (shop_id, order_id, product_id),
    FOREIGN KEY (shop_id, order_id) REFERENCES commerce.orders (shop_id, id),
    FOREIGN KEY (shop_id, product_id) REFERENCES commerce.products (shop_id, id)
);
