-- name: GetShop :one
SELECT * FROM commerce.shops WHERE id = @id;

-- name: InsertShop :one
INSERT INTO commerce.shops (name, currency, catalog_id, page_id)
VALUES (@name, @currency, @catalog_id, @page_id)
RETURNING id;

-- name: CatalogProducts :many
-- The products of a catalog among ids, as checkout prices them.
SELECT * FROM commerce.products WHERE catalog_id = @catalog_id AND id = ANY(@ids::bigint[]);

-- name: GetCatalog :one
SELECT * FROM commerce.catalogs WHERE id = @id;

-- name: InsertCatalog :one
INSERT INTO commerce.catalogs (business_id, name) VALUES (@business_id, @name) RETURNING id;

-- name: UpsertProduct :one
-- A product by its retailer_id: added, or updated in place. created is
-- true for a new row (xmax is 0 only for a row this statement inserted).
INSERT INTO commerce.products (catalog_id, retailer_id, name, price, currency, available)
VALUES (@catalog_id, @retailer_id, @name, @price, @currency, @available)
ON CONFLICT (catalog_id, retailer_id) DO UPDATE
SET name = excluded.name, price = excluded.price, currency = excluded.currency,
    available = excluded.available, updated_at = now()
RETURNING id, (xmax = 0)::boolean AS created;

-- name: InsertProductSet :one
INSERT INTO commerce.product_sets (catalog_id, name, price_lt, price_gt, available_eq)
VALUES (@catalog_id, @name, @price_lt, @price_gt, @available_eq)
RETURNING id;

-- name: GetProductSet :one
SELECT * FROM commerce.product_sets WHERE id = @id;

-- name: ProductSetProductsAfter :many
-- The set's filter evaluated now: its one definition (filter.go parses it).
SELECT p.* FROM commerce.products p
WHERE p.catalog_id = @catalog_id AND p.id > @after
  AND (sqlc.narg('price_lt')::bigint IS NULL OR p.price < sqlc.narg('price_lt'))
  AND (sqlc.narg('price_gt')::bigint IS NULL OR p.price > sqlc.narg('price_gt'))
  AND (sqlc.narg('available_eq')::boolean IS NULL OR p.available = sqlc.narg('available_eq'))
ORDER BY p.id LIMIT @lim;

-- name: ProductSetProductsBefore :many
SELECT p.* FROM commerce.products p
WHERE p.catalog_id = @catalog_id AND p.id < @before
  AND (sqlc.narg('price_lt')::bigint IS NULL OR p.price < sqlc.narg('price_lt'))
  AND (sqlc.narg('price_gt')::bigint IS NULL OR p.price > sqlc.narg('price_gt'))
  AND (sqlc.narg('available_eq')::boolean IS NULL OR p.available = sqlc.narg('available_eq'))
ORDER BY p.id DESC LIMIT @lim;

-- name: InsertOrder :one
INSERT INTO commerce.orders (shop_id, buyer_user_id, app_id, total, currency)
VALUES (@shop_id, @buyer_user_id, @app_id, @total, @currency)
RETURNING *;

-- name: InsertOrderItem :exec
INSERT INTO commerce.order_items (shop_id, order_id, product_id, quantity, unit_price)
VALUES (@shop_id, @order_id, @product_id, @quantity, @unit_price);

-- name: GetOrder :one
SELECT * FROM commerce.orders WHERE id = @id;

-- name: LockOrder :one
-- An order under its row lock, so that its changes (and their events) are
-- serialised.
SELECT * FROM commerce.orders WHERE id = @id FOR UPDATE;

-- name: SetOrderStatus :one
UPDATE commerce.orders SET status = @status, updated_at = now()
WHERE shop_id = @shop_id AND id = @id
RETURNING *;

-- name: OrderItems :many
SELECT * FROM commerce.order_items WHERE shop_id = @shop_id AND order_id = @order_id ORDER BY product_id;

-- name: SeedCatalog :exec
-- The development shop's catalog, shop and products, with fixed ids so
-- that guides can name them.
INSERT INTO commerce.catalogs (id, business_id, name) VALUES (@id, '', @name)
ON CONFLICT (id) DO NOTHING;

-- name: SeedShop :exec
INSERT INTO commerce.shops (id, name, currency, catalog_id) VALUES (@id, @name, @currency, @catalog_id)
ON CONFLICT (id) DO NOTHING;

-- name: SeedProduct :exec
INSERT INTO commerce.products (catalog_id, id, retailer_id, name, price, currency, available)
VALUES (@catalog_id, @id, @retailer_id, @name, @price, @currency, @available)
ON CONFLICT (id) DO NOTHING;
