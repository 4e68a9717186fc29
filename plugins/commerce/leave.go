package main

import (
	"context"

	"github.com/svcplatform/svc/plugins/internal/erase"
)

// userLeft erases a person who left the platform (sdk.OnUserLeft): the
// orders they placed, with their items. (Payments are sandbox ones: the
// shop keeps its own record of what was paid.) Catalogs, product sets and
// shops belong to businesses and Pages and stay. Idempotent.
func (s *service) userLeft(ctx context.Context, userID string) error {
	return erase.User(ctx, s.pool, userID,
		`DELETE FROM commerce.order_items i USING commerce.orders o
		 WHERE o.shop_id = i.shop_id AND o.id = i.order_id AND o.buyer_user_id = $1`,
		`DELETE FROM commerce.orders WHERE buyer_user_id = $1`)
}
