-- name: GetShop :one
SELECT * FROM commerce.shops WHERE id = @id;

-- name: ProductsAfter :many
SELECT * FROM commerce.products WHERE shop_id = @shop_id AND id > @after ORDER BY id LIMIT @lim;

-- name: ProductsBefore :many
SELECT * FROM commerce.products WHERE shop_id = @shop_id AND id < @before ORDER BY id DESC LIMIT @lim;

-- name: ShopProducts :many
-- The products of a shop among ids, as checkout prices them.
SELECT * FROM commerce.products WHERE shop_id = @shop_id AND id = ANY(@ids::bigint[]);

-- name: InsertOrder :one
INSERT INTO commerce.orders (shop_id, buyer_user_id, app_id, total, currency)
VALUES (@shop_id, @buyer_user_id, @app_id, @total, @currency)
RETURNING *;

-- name: InsertOrderItem :exec
INSERT INTO commerce.order_items (shop_id, order_id, product_id, quantity, unit_price)
VALUES (@shop_id, @order_id, @product_id, @quantity, @unit_price);

-- name: GetOrder :one
SELECT * FROM commerce.orders WHERE id = @id;

-- name: OrderItems :many
SELECT * FROM commerce.order_items WHERE shop_id = @shop_id AND order_id = @order_id ORDER BY product_id;

-- name: SeedShop :exec
-- The development shop, with fixed ids so that guides can name them.
INSERT INTO commerce.shops (id, name, currency) VALUES (@id, @name, @currency)
ON CONFLICT (id) DO NOTHING;

-- name: SeedProduct :exec
INSERT INTO commerce.products (shop_id, id, name, price, available)
VALUES (@shop_id, @id, @name, @price, @available)
ON CONFLICT (id) DO NOTHING;
