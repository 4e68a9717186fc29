package main

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	commercev1 "github.com/svcplatform/svc/gen/svc/commerce/v1"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

const (
	procCreateCatalog = "/svc.commerce.v1.CommerceService/CreateCatalog"
	procCatalogProds  = "/svc.commerce.v1.CommerceService/ListCatalogProducts"
	procCreateProduct = "/svc.commerce.v1.CommerceService/CreateCatalogProduct"
	procBatch         = "/svc.commerce.v1.CommerceService/BatchCatalogProducts"
	procCreateSet     = "/svc.commerce.v1.CommerceService/CreateProductSet"
	procSetProducts   = "/svc.commerce.v1.CommerceService/ListProductSetProducts"
	procCreateMaison  = "/svc.commerce.v1.CommerceService/CreateMaison"
	procPay           = "/svc.commerce.v1.CommerceService/PayOrder"
	procCancel        = "/svc.commerce.v1.CommerceService/CancelOrder"
	procFulfill       = "/svc.commerce.v1.CommerceService/FulfillOrder"
	procRefund        = "/svc.commerce.v1.CommerceService/RefundOrder"
	catalogManagement = "catalog_management"
	manageOrders      = "commerce_manage_orders"
)

func sellerCall() sdk.Principal {
	return sdk.Principal{Kind: sdk.TokenKindUser, UserID: seller, AppID: "2000000001", Scopes: []string{catalogManagement, manageOrders}}
}

// Every row of the order state machine, written out here on its own so
// that a change of the table in orders.go shows: from × action × actor →
// to, or the refusal's HTTP status.
func TestTheOrderStateMachineMovesAsItsTableSays(t *testing.T) {
	t.Parallel()
	type want struct {
		to     string
		status int
	}
	states := []string{StatusPendingPayment, StatusPaid, StatusFulfilled, StatusCancelled, StatusRefunded}
	expect := map[string]want{
		"pending_payment pay buyer":     {StatusPaid, 0},
		"pending_payment pay seller":    {"", 403},
		"pending_payment cancel buyer":  {StatusCancelled, 0},
		"pending_payment cancel seller": {StatusCancelled, 0},
		"pending_payment fulfil buyer":  {"", 403},
		"pending_payment fulfil seller": {"", 409},
		"pending_payment refund buyer":  {"", 403},
		"pending_payment refund seller": {"", 409},
		"paid pay buyer":                {"", 409},
		"paid cancel buyer":             {"", 409},
		"paid cancel seller":            {StatusCancelled, 0},
		"paid fulfil seller":            {StatusFulfilled, 0},
		"paid refund seller":            {StatusRefunded, 0},
		"fulfilled refund seller":       {StatusRefunded, 0},
	}
	for _, from := range states {
		for _, a := range []action{actionPay, actionCancel, actionFulfill, actionRefund} {
			for _, by := range []struct {
				name string
				a    actor
			}{{"buyer", byBuyer}, {"seller", bySeller}} {
				key := fmt.Sprintf("%s %s %s", from, a, by.name)
				w, listed := expect[key]
				if !listed { // every other move is refused: 403 if the actor may never, else 409
					w = want{"", 409}
					if by.a == byBuyer && (a == actionFulfill || a == actionRefund) || by.a == bySeller && a == actionPay {
						w.status = 403
					}
				}
				t.Run(key, func(t *testing.T) {
					to, err := next(from, a, by.a)
					if w.status == 0 {
						if err != nil || to != w.to {
							t.Fatalf("%s: got %q %v, want %s", key, to, err, w.to)
						}
						return
					}
					e, ok := err.(*sdk.Error)
					if !ok || e.HTTPStatus != w.status {
						t.Fatalf("%s: got %q %v, want HTTP %d", key, to, err, w.status)
					}
					if w.status == 409 && !strings.Contains(e.Message, from) {
						t.Fatalf("a wrong transition names the order's state: %q", e.Message)
					}
				})
			}
		}
	}
}

func filterOf(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAFilterTakesPriceLtGtAndAvailabilityEqOnly(t *testing.T) {
	t.Parallel()
	f, err := readFilter(filterOf(t, map[string]any{"price": map[string]any{"lt": 2000, "gt": 500}, "availability": map[string]any{"eq": "in stock"}}))
	if err != nil || *f.PriceLT != 2000 || *f.PriceGT != 500 || !*f.AvailableEQ {
		t.Fatalf("filter %+v %v", f, err)
	}
	for _, c := range []struct {
		filter map[string]any
		field  string
	}{
		{map[string]any{}, "filter"},
		{map[string]any{"price": map[string]any{"eq": 5}}, "filter.price.eq"},
		{map[string]any{"price": map[string]any{"lt": 12.5}}, "filter.price.lt"},
		{map[string]any{"price": map[string]any{"lt": "cheap"}}, "filter.price.lt"},
		{map[string]any{"availability": map[string]any{"eq": "maybe"}}, "filter.availability.eq"},
		{map[string]any{"name": map[string]any{"eq": "cup"}}, "filter.name.eq"},
		{map[string]any{"price": 5}, "filter.price"},
	} {
		_, err := readFilter(filterOf(t, c.filter))
		if e, ok := err.(*sdk.Error); !ok || e.HTTPStatus != 400 || e.Field != c.field {
			t.Errorf("filter %v: %v, want a refusal naming %s", c.filter, err, c.field)
		}
	}
}

func product(rid string, price int64, avail string) *commercev1.ProductInput {
	return &commercev1.ProductInput{RetailerId: rid, Name: "Product " + rid, Price: price, Currency: "EUR", Availability: avail}
}

// A batch stores its valid items and names each refused one by index and
// field.
func TestABatchStoresItsValidItemsAndNamesEachBadOne(t *testing.T) {
	t.Parallel()
	rows, errs := readBatch([]*commercev1.ProductInput{
		product("a", 100, inStock), product("b", 0, inStock), product("c", 100, "soon"), product("a", 200, inStock),
		{RetailerId: "d", Name: "D", Price: 5, Currency: "eur", Availability: inStock}, product("", 1, inStock),
	})
	if len(rows) != 1 || rows[0].RetailerID != "a" {
		t.Fatalf("rows %+v", rows)
	}
	want := []string{"items[1].price", "items[2].availability", "items[3].retailer_id", "items[4].currency", "items[5].retailer_id"}
	if len(errs) != len(want) {
		t.Fatalf("errors %v", errs)
	}
	for i, e := range errs {
		if e.GetField() != want[i] || e.GetMessage() == "" {
			t.Errorf("error %d: %v, want %s", i, e, want[i])
		}
	}
}

// catalogWith creates a catalog of the seller's business through the
// plugin and uploads products.
func catalogWith(t *testing.T, b *bundle, items ...*commercev1.ProductInput) string {
	t.Helper()
	c, err := call[*commercev1.Created](t, b, procCreateCatalog, sellerCall(), &commercev1.CreateCatalogRequest{BusinessId: sellerBusiness, Name: "Spring"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := call[*commercev1.BatchCatalogProductsResponse](t, b, procBatch, sellerCall(), &commercev1.BatchCatalogProductsRequest{CatalogId: c.GetId(), Items: items})
	if err != nil || len(res.GetErrors()) != 0 || int(res.GetNumCreated()) != len(items) {
		t.Fatalf("batch %v %v", res, err)
	}
	return c.GetId()
}

func retailerIDs(res *commercev1.ListProductsResponse) []string {
	var out []string
	for _, p := range res.GetData() {
		out = append(out, p.GetRetailerId())
	}
	return out
}

func TestAProductSetListsTheCatalogsProductsMatchingItNow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cat := catalogWith(t, b, product("cheap", 900, inStock), product("mid", 1900, inStock), product("dear", 5000, inStock), product("gone", 500, outOfStock))
	set, err := call[*commercev1.Created](t, b, procCreateSet, sellerCall(), &commercev1.CreateProductSetRequest{CatalogId: cat, Name: "Under 20",
		Filter: filterOf(t, map[string]any{"price": map[string]any{"lt": 2000}, "availability": map[string]any{"eq": "in stock"}})})
	if err != nil {
		t.Fatal(err)
	}
	list := func() string {
		res, err := call[*commercev1.ListProductsResponse](t, b, procSetProducts, sellerCall(), &commercev1.ListProductSetProductsRequest{ProductSetId: set.GetId()})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(retailerIDs(res))
	}
	if got := list(); got != "[cheap mid]" {
		t.Fatalf("set lists %s", got)
	}
	// The catalog changes; the set follows.
	for _, p := range []*commercev1.ProductInput{product("mid", 2500, inStock), product("dear", 1500, inStock), product("gone", 500, inStock)} {
		if _, err := call[*commercev1.Created](t, b, procCreateProduct, sellerCall(), &commercev1.CreateCatalogProductRequest{CatalogId: cat,
			RetailerId: p.RetailerId, Name: p.Name, Price: p.Price, Currency: p.Currency, Availability: p.Availability}); err != nil {
			t.Fatal(err)
		}
	}
	if got := list(); got != "[cheap dear gone]" {
		t.Fatalf("after the changes the set lists %s", got)
	}
	t.Run("another business's catalog and set do not exist for the caller", func(t *testing.T) {
		stranger := sdk.Principal{Kind: sdk.TokenKindUser, UserID: other, Scopes: []string{catalogManagement}}
		_, err := call[*commercev1.ListProductsResponse](t, b, procSetProducts, stranger, &commercev1.ListProductSetProductsRequest{ProductSetId: set.GetId()})
		plugintest.WantRefusal(t, err, 404, 100, 33)
		_, err = call[*commercev1.ListProductsResponse](t, b, procCatalogProds, stranger, &commercev1.ListCatalogProductsRequest{CatalogId: cat})
		plugintest.WantRefusal(t, err, 404, 100, 33)
		_, err = call[*commercev1.Created](t, b, procCreateMaison, stranger, &commercev1.CreateMaisonRequest{PageId: shopPage, Name: "Mine", CatalogId: cat, Currency: "EUR"})
		plugintest.WantRefusal(t, err, 404, 100, 33)
	})
	t.Run("the catalog is the business's: another person with a role on it works on it", func(t *testing.T) {
		mate := sdk.Principal{Kind: sdk.TokenKindUser, UserID: colleague, Scopes: []string{catalogManagement}}
		res, err := call[*commercev1.ListProductsResponse](t, b, procCatalogProds, mate, &commercev1.ListCatalogProductsRequest{CatalogId: cat})
		if err != nil || len(res.GetData()) != 4 {
			t.Fatalf("colleague lists %v %v", res, err)
		}
	})
}

// An order of a shop on a Page moves by its buyer's payment and its
// seller's acts, and each change is one commerce.order.updated about the
// Page in the outbox, in the transaction that made it.
func TestAnOrderMovesAndEachChangeIsAnEventAboutTheShopsPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cat := catalogWith(t, b, product("cup", 1850, inStock))
	m, err := call[*commercev1.Created](t, b, procCreateMaison, sellerCall(), &commercev1.CreateMaisonRequest{PageId: shopPage, Name: "Cups", CatalogId: cat, Currency: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	page, err := call[*commercev1.ListProductsResponse](t, b, procListProducts, user(buyer), &commercev1.ListProductsRequest{MaisonId: m.GetId()})
	if err != nil || len(page.GetData()) != 1 {
		t.Fatalf("shop products %v %v", page, err)
	}
	o, err := call[*commercev1.CheckoutResponse](t, b, procCheckout, user(buyer), &commercev1.CheckoutRequest{MaisonId: m.GetId(), Items: cart(page.GetData()[0].GetId(), 2)})
	if err != nil {
		t.Fatal(err)
	}
	events := func() int {
		return plugintest.Count(t, b.pool, `SELECT count(*) FROM core.outbox WHERE type = 'commerce.order.updated' AND page_id = $1 AND data->>'orderId' = $2`, shopPage, o.GetOrderId())
	}
	buyerPays := sdk.Principal{Kind: sdk.TokenKindUser, UserID: buyer, Scopes: []string{"commerce_checkout"}}
	_, err = call[*commercev1.Order](t, b, procPay, buyerPays, &commercev1.PayOrderRequest{OrderId: o.GetOrderId(), PaymentMethod: testCardDeclined})
	plugintest.WantRefusal(t, err, 402, 100, 0)
	if n := events(); n != 1 {
		t.Fatalf("%d events after checkout and a declined payment, want 1 (the order placed)", n)
	}
	_, err = call[*commercev1.Order](t, b, procFulfill, buyerPays, &commercev1.OrderActionRequest{OrderId: o.GetOrderId()})
	plugintest.WantRefusal(t, err, 403, 200, 2069003)
	_, err = call[*commercev1.Order](t, b, procFulfill, sellerCall(), &commercev1.OrderActionRequest{OrderId: o.GetOrderId()})
	if e := plugintest.WantRefusal(t, err, 409, 100, 0); !strings.Contains(e.Message, StatusPendingPayment) {
		t.Fatalf("the refusal does not name the state: %s", e.Message)
	}
	for _, step := range []struct {
		proc string
		who  sdk.Principal
		want string
	}{{procPay, buyerPays, StatusPaid}, {procFulfill, sellerCall(), StatusFulfilled}, {procRefund, sellerCall(), StatusRefunded}} {
		res, err := call[*commercev1.Order](t, b, step.proc, step.who, &commercev1.PayOrderRequest{OrderId: o.GetOrderId(), PaymentMethod: testCardOK})
		if err != nil || res.GetStatus() != step.want {
			t.Fatalf("%s: %v %v", step.proc, res, err)
		}
	}
	if n := events(); n != 4 {
		t.Fatalf("%d events, want 4 (placed, paid, fulfilled, refunded)", n)
	}
	_, err = call[*commercev1.Order](t, b, procCancel, sellerCall(), &commercev1.OrderActionRequest{OrderId: o.GetOrderId()})
	plugintest.WantRefusal(t, err, 409, 100, 0)
	_, err = call[*commercev1.Order](t, b, procGetOrder, user(other), &commercev1.GetOrderRequest{OrderId: o.GetOrderId()})
	plugintest.WantRefusal(t, err, 404, 100, 33)
	if got, err := call[*commercev1.Order](t, b, procGetOrder, sellerCall(), &commercev1.GetOrderRequest{OrderId: o.GetOrderId()}); err != nil || got.GetStatus() != StatusRefunded {
		t.Fatalf("the seller reads %v %v", got, err)
	}
}
