package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	commercev1 "github.com/svcplatform/svc/gen/svc/commerce/v1"
	commercesql "github.com/svcplatform/svc/plugins/commerce/sql"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func TestMain(m *testing.M) { plugintest.Main(m, "commerce", commercesql.Migrations()) }

const (
	buyer = "1000000002"
	other = "1000000003"
	shop  = "7000000001"
	// seller administers shopPage.
	seller   = "1000000001"
	shopPage = "1500000001"
	// colleague has a role on seller's business, sellerBusiness, too.
	colleague      = "1000000004"
	sellerBusiness = "6000000001"

	procGetMaison    = "/svc.commerce.v1.CommerceService/GetMaison"
	procListProducts = "/svc.commerce.v1.CommerceService/ListProducts"
	procCheckout     = "/svc.commerce.v1.CommerceService/Checkout"
	procGetOrder     = "/svc.commerce.v1.CommerceService/GetOrder"
)

func user(id string) sdk.Principal {
	return sdk.Principal{Kind: sdk.TokenKindUser, UserID: id, AppID: "2000000001", Scopes: []string{"commerce_checkout"}}
}

// gateway is the test's gateway: one Page, and one business, sellerBusiness,
// on which seller and colleague have a role; it answers what the real one
// decides for anyone else (2069003), and 404 for another business.
type gateway struct{ plugintest.OnePage }

func (gateway) BusinessAccess(_ context.Context, q sdk.BusinessQuery) error {
	if q.BusinessID != sellerBusiness {
		return sdk.NotFound("Business " + q.BusinessID)
	}
	if q.UserID != seller && q.UserID != colleague {
		return plugintest.BusinessRefusal()
	}
	return nil
}

type bundle struct {
	tp   *plugintest.Plugin
	pool *pgxpool.Pool
}

// setup runs the plugin in-process on a fresh database holding the
// development shop.
func setup(t *testing.T) *bundle {
	t.Helper()
	pool := plugintest.Database(t)
	if err := seedShop(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	p := sdk.New(sdk.Info{Name: "commerce", Version: version, Events: []string{EventOrderUpdated}})
	(&service{pool: pool}).register(p)
	host := gateway{OnePage: plugintest.OnePage{PageID: shopPage, Admins: []string{seller}}}
	return &bundle{tp: plugintest.Start(t, p, plugintest.WithHost(host)), pool: pool}
}

func call[T proto.Message](t testing.TB, b *bundle, proc string, who sdk.Principal, req proto.Message) (T, error) {
	t.Helper()
	return plugintest.CallT[T](t, b.tp, proc, who, req)
}

func (b *bundle) count(t *testing.T, query string) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(context.Background(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func cart(pairs ...any) []*commercev1.CheckoutItem {
	var out []*commercev1.CheckoutItem
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, &commercev1.CheckoutItem{ProductId: pairs[i].(string), Quantity: int32(pairs[i+1].(int))})
	}
	return out
}

func TestCheckoutPricesTheCartFromTheShopsCatalogInMinorUnits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res, err := call[*commercev1.CheckoutResponse](t, b, procCheckout, user(buyer),
		&commercev1.CheckoutRequest{MaisonId: shop, Items: cart("7100000001", 2, "7100000003", 1)})
	if err != nil {
		t.Fatal(err)
	}
	// 2 × 12.90 + 45.00 = 70.80 EUR.
	if res.GetOrderId() == "" || res.GetStatus() != "pending_payment" || res.GetTotal().GetAmount() != 7080 || res.GetTotal().GetCurrency() != "EUR" {
		t.Fatalf("checkout answered %v", res)
	}
	// The catalog changes later; the order keeps the prices it was placed at.
	if _, err := b.pool.Exec(context.Background(), `UPDATE commerce.products SET price = 9999`); err != nil {
		t.Fatal(err)
	}
	o, err := call[*commercev1.Order](t, b, procGetOrder, user(buyer), &commercev1.GetOrderRequest{OrderId: res.GetOrderId()})
	if err != nil || o.GetMaisonId() != shop || o.GetTotal().GetAmount() != 7080 || len(o.GetItems()) != 2 ||
		o.GetItems()[0].GetUnitPrice().GetAmount() != 1290 || o.GetItems()[0].GetQuantity() != 2 || o.GetStatus() != "pending_payment" {
		t.Fatalf("order %v %v", o, err)
	}
	t.Run("another person's order does not exist for the caller", func(t *testing.T) {
		_, err := call[*commercev1.Order](t, b, procGetOrder, user(other), &commercev1.GetOrderRequest{OrderId: res.GetOrderId()})
		plugintest.WantRefusal(t, err, 404, 100, 33)
	})
}

func TestTheShopAndItsCatalogAreReadable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m, err := call[*commercev1.Maison](t, b, procGetMaison, user(buyer), &commercev1.GetMaisonRequest{MaisonId: shop})
	if err != nil || m.GetName() != "Maison Demo" || m.GetCurrency() != "EUR" {
		t.Fatalf("maison %v %v", m, err)
	}
	page, err := call[*commercev1.ListProductsResponse](t, b, procListProducts, user(buyer), &commercev1.ListProductsRequest{MaisonId: shop, Limit: 3})
	if err != nil || len(page.GetData()) != 3 || !page.GetPaging().GetHasNext() || page.GetData()[0].GetPrice().GetAmount() != 1290 {
		t.Fatalf("products %v %v", page, err)
	}
	rest, err := call[*commercev1.ListProductsResponse](t, b, procListProducts, user(buyer), &commercev1.ListProductsRequest{MaisonId: shop, After: page.GetPaging().GetAfter()})
	if err != nil || len(rest.GetData()) != 1 || rest.GetData()[0].GetAvailable() {
		t.Fatalf("rest %v %v", rest, err)
	}
	for _, unknown := range []string{"7000009999", "maison", ""} {
		_, err := call[*commercev1.Maison](t, b, procGetMaison, user(buyer), &commercev1.GetMaisonRequest{MaisonId: unknown})
		plugintest.WantRefusal(t, err, 404, 100, 33)
	}
}

func TestABadCartIsRefusedNamingTheLineAndOrdersNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// A second shop whose product the first shop does not sell.
	if _, err := b.pool.Exec(context.Background(), `INSERT INTO commerce.catalogs (id, business_id, name) VALUES (7300000002, '', 'Other');
		INSERT INTO commerce.shops (id, name, currency, catalog_id) VALUES (7000000002, 'Other', 'USD', 7300000002);
		INSERT INTO commerce.products (catalog_id, id, retailer_id, name, price, currency) VALUES (7300000002, 7100000009, 'x', 'Elsewhere', 100, 'USD');
		INSERT INTO commerce.products (catalog_id, id, retailer_id, name, price, currency) VALUES (7300000001, 7100000010, 'usd', 'In dollars', 100, 'USD')`); err != nil {
		t.Fatal(err)
	}
	many := make([]any, 0, 102)
	for i := range 51 {
		many = append(many, fmt.Sprint(7100000100+i), 1)
	}
	cases := []struct {
		rule                  string
		items                 []*commercev1.CheckoutItem
		status, code, subcode int
		field                 string
	}{
		{"an empty cart is refused", nil, 400, 100, 0, "items"},
		{"a cart of 51 lines is refused", cart(many...), 400, 100, 0, "items"},
		{"a quantity of 0 is refused", cart("7100000001", 0), 400, 100, 0, "items[0].quantity"},
		{"a quantity of 100 is refused", cart("7100000001", 100), 400, 100, 0, "items[0].quantity"},
		{"the same product on two lines is refused", cart("7100000001", 1, "7100000002", 1, "7100000001", 2), 400, 100, 0, "items[2].product_id"},
		{"a sold-out product is refused", cart("7100000001", 1, "7100000004", 1), 400, 100, 0, "items[1].product_id"},
		{"a product of another shop is not found", cart("7100000009", 1), 404, 100, 33, "items[0].product_id"},
		{"a product priced in another currency than the shop's is refused", cart("7100000010", 1), 400, 100, 0, "items[0].product_id"},
		{"a product id that names nothing is not found", cart("7100000001", 1, "coffee", 1), 404, 100, 33, "items[1].product_id"},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			_, err := call[*commercev1.CheckoutResponse](t, b, procCheckout, user(buyer), &commercev1.CheckoutRequest{MaisonId: shop, Items: c.items})
			if e := plugintest.WantRefusal(t, err, c.status, c.code, c.subcode); e.Field != c.field {
				t.Fatalf("refusal names %q, want %q (%s)", e.Field, c.field, e.Message)
			}
		})
	}
	_, err := call[*commercev1.CheckoutResponse](t, b, procCheckout, user(buyer), &commercev1.CheckoutRequest{MaisonId: "7000009999", Items: cart("7100000001", 1)})
	plugintest.WantRefusal(t, err, 404, 100, 33)
	if n := b.count(t, `SELECT (SELECT count(*) FROM commerce.orders) + (SELECT count(*) FROM commerce.order_items)`); n != 0 {
		t.Fatalf("%d rows stored by refused checkouts", n)
	}
}

// FuzzReadCart: a cart is refused naming a field of items, or its lines
// have each product once with a quantity of 1 to 99.
func FuzzReadCart(f *testing.F) {
	f.Add("7100000001", int32(1), "7100000002", int32(99))
	f.Add("7100000001", int32(0), "7100000001", int32(1))
	f.Add("x", int32(-5), "", int32(100))
	f.Fuzz(func(t *testing.T, p1 string, q1 int32, p2 string, q2 int32) {
		items := []*commercev1.CheckoutItem{{ProductId: p1, Quantity: q1}, {ProductId: p2, Quantity: q2}}
		ids, err := readCart(items)
		if err != nil {
			e, ok := err.(*sdk.Error)
			if !ok || e.Code != 100 || e.Field == "" {
				t.Fatalf("refusal %v", err)
			}
			return
		}
		if len(ids) != 2 || p1 == p2 || q1 < 1 || q1 > 99 || q2 < 1 || q2 > 99 || ids[0] <= 0 || ids[1] <= 0 {
			t.Fatalf("accepted %v", items)
		}
	})
}
