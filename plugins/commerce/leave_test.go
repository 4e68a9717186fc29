package main

import (
	"testing"

	commercev1 "github.com/svcplatform/svc/gen/svc/commerce/v1"
	"github.com/svcplatform/svc/plugins/internal/leavetest"
)

// A person who leaves takes their orders with them; another buyer's stay.
func TestAPersonWhoLeftHasNoOrdersLeft(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, who := range []string{buyer, buyer, other} {
		if _, err := call[*commercev1.CheckoutResponse](t, b, procCheckout, user(who),
			&commercev1.CheckoutRequest{MaisonId: shop, Items: cart("7100000001", 2, "7100000003", 1)}); err != nil {
			t.Fatal(err)
		}
	}
	leavetest.Leave(t, b.tp, buyer)
	leavetest.Leave(t, b.tp, buyer)
	for q, want := range map[string]int{
		`SELECT count(*) FROM commerce.orders WHERE buyer_user_id = '` + buyer + `'`: 0,
		`SELECT count(*) FROM commerce.orders`:                                       1,
		`SELECT count(*) FROM commerce.order_items`:                                  2,
	} {
		if got := b.count(t, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
}
