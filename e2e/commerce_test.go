package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// waitForOrder returns the delivery of commerce.order.updated saying order
// is in status.
func (r *hookReceiver) waitForOrder(order, status string) hookDelivery {
	r.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r.mu.Lock()
		for _, d := range r.got {
			if d.body.Type == "commerce.order.updated" && d.body.Data["orderId"] == order && d.body.Data["status"] == status {
				r.mu.Unlock()
				return d
			}
		}
		r.mu.Unlock()
		if time.Now().After(deadline) {
			r.t.Fatalf("no commerce.order.updated for order %s in status %s delivered", order, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func productNames(t *testing.T, out map[string]any) string {
	t.Helper()
	var names []string
	for _, p := range out["data"].([]any) {
		names = append(names, p.(map[string]any)["retailer_id"].(string))
	}
	return strings.Join(names, ",")
}

// The shop story of issue 33 through the public API: a business's catalog
// filled by a batch (a bad item refused by name), a product set that
// follows its catalog, a shop on the seeded Page selling from it, and an
// order a person places from the app, paid (declined first), fulfilled and
// refunded, each change a signed webhook to the Page's app with commerce.
func TestAShopSellsFromItsBusinessCatalogAndEachOrderChangeReachesThePagesApp(t *testing.T) {
	t.Parallel()
	gw := newGraphWorld(t)
	w := &socialWorld{graphWorld: gw}
	app, page := w.c.App, w.c.Page.ID
	seller := w.g.UserToken(t, "owner", "catalog_management", "commerce_manage_orders")
	stranger := w.g.UserToken(t, "consumer", "catalog_management", "commerce_manage_orders", "commerce_checkout")
	noScope := w.g.UserToken(t, "owner", "public_profile", "commerce_checkout")
	buyer := signIn(t, gw, "consumer")

	// The app may not hear of orders before it has commerce on the Page.
	rcv := newHookReceiver(t, app.ClientSecret)
	subscribe := map[string]any{"callback_url": rcv.srv.URL + "/hook", "verify_token": hookVerifyToken, "events": []string{"commerce.order.updated"}}
	res, body := w.graph(t, "POST", app.APIKey, "app/"+app.ID+"/subscriptions", subscribe)
	wantGraphError(t, res, body, 400, 100, 0)
	w.ok(t, "POST", signIn(t, gw, "owner"), "app/"+app.ID+"/page_links", map[string]any{"page_id": page, "products": []string{"svcchat", "commerce"}})
	w.ok(t, "POST", app.APIKey, "app/"+app.ID+"/subscriptions", subscribe)

	// The seeded business, Demo Coffee Co., whose admin is the owner.
	business := w.c.Business.ID
	res, body = w.graph(t, "POST", noScope, "business/"+business+"/catalogs", map[string]any{"name": "Spring"})
	wantGraphError(t, res, body, 403, 10, 2069002)
	res, body = w.graph(t, "POST", stranger, "business/"+business+"/catalogs", map[string]any{"name": "Spring"})
	wantGraphError(t, res, body, 403, 200, 2069003)
	res, body = w.graph(t, "POST", seller, "business/9999999999/catalogs", map[string]any{"name": "Spring"})
	wantGraphError(t, res, body, 404, 100, 33)
	catalog := w.ok(t, "POST", seller, "business/"+business+"/catalogs", map[string]any{"name": "Spring"})["id"].(string)

	item := func(rid string, price int, avail string) map[string]any {
		return map[string]any{"retailer_id": rid, "name": "Item " + rid, "price": price, "currency": "EUR", "availability": avail}
	}
	batch := w.ok(t, "POST", seller, "catalog/"+catalog+"/items_batch", map[string]any{"items": []any{
		item("beans", 1290, "in stock"), item("cup", 1850, "in stock"), item("grinder", 8900, "in stock"),
		item("roast", 900, "out of stock"), item("kettle", -5, "in stock")}})
	errs, _ := batch["errors"].([]any)
	if batch["num_received"] != 5.0 || batch["num_created"] != 4.0 || len(errs) != 1 || errs[0].(map[string]any)["field"] != "items[4].price" ||
		errs[0].(map[string]any)["retailer_id"] != "kettle" {
		t.Fatalf("batch answered %v", batch)
	}
	if got := productNames(t, w.ok(t, "GET", seller, "catalog/"+catalog+"/products", nil)); got != "beans,cup,grinder,roast" {
		t.Fatalf("catalog holds %s", got)
	}

	set := w.ok(t, "POST", seller, "catalog/"+catalog+"/product_sets", map[string]any{"name": "Under 20",
		"filter": map[string]any{"price": map[string]any{"lt": 2000}}})["id"].(string)
	if got := productNames(t, w.ok(t, "GET", seller, "product_set/"+set+"/products", nil)); got != "beans,cup,roast" {
		t.Fatalf("set lists %s", got)
	}
	w.ok(t, "POST", seller, "catalog/"+catalog+"/products", item("cup", 2450, "in stock"))
	w.ok(t, "POST", seller, "catalog/"+catalog+"/products", item("grinder", 1990, "in stock"))
	if got := productNames(t, w.ok(t, "GET", seller, "product_set/"+set+"/products", nil)); got != "beans,grinder,roast" {
		t.Fatalf("after the price changes the set lists %s", got)
	}
	res, body = w.graph(t, "GET", stranger, "product_set/"+set+"/products", nil)
	wantGraphError(t, res, body, 404, 100, 33)
	res, body = w.graph(t, "GET", stranger, "catalog/"+catalog+"/products", nil)
	wantGraphError(t, res, body, 404, 100, 33)

	// The shop, on the seeded Page, selling from the catalog.
	res, body = w.graph(t, "POST", stranger, "page/"+page+"/maisons", map[string]any{"name": "Demo Coffee Shop", "catalog_id": catalog, "currency": "EUR"})
	wantGraphError(t, res, body, 403, 200, 2069003)
	theirBusiness := w.ok(t, "POST", buyer, "me/business_portfolios", map[string]any{"name": "Consumer Goods"})["id"].(string)
	theirs := w.ok(t, "POST", stranger, "business/"+theirBusiness+"/catalogs", map[string]any{"name": "Theirs"})["id"].(string)
	res, body = w.graph(t, "POST", seller, "page/"+page+"/maisons", map[string]any{"name": "Demo Coffee Shop", "catalog_id": theirs, "currency": "EUR"})
	wantGraphError(t, res, body, 404, 100, 33)
	shop := w.ok(t, "POST", seller, "page/"+page+"/maisons", map[string]any{"name": "Demo Coffee Shop", "catalog_id": catalog, "currency": "EUR"})["id"].(string)
	if m := w.ok(t, "GET", buyer, "maison/"+shop, nil); m["page_id"] != page || m["catalog_id"] != catalog {
		t.Fatalf("maison %v", m)
	}
	ids := map[string]string{}
	for _, p := range w.ok(t, "GET", buyer, "maison/"+shop+"/products", nil)["data"].([]any) {
		ids[p.(map[string]any)["retailer_id"].(string)] = p.(map[string]any)["id"].(string)
	}

	// A person orders in the app, and pays: declined, then accepted.
	placed := w.ok(t, "POST", buyer, "maison/"+shop+"/checkout", map[string]any{"items": []any{
		map[string]any{"product_id": ids["grinder"], "quantity": 2}, map[string]any{"product_id": ids["beans"], "quantity": 1}}})
	order := placed["order_id"].(string)
	if placed["status"] != "pending_payment" || placed["total"].(map[string]any)["amount"] != float64(2*1990+1290) {
		t.Fatalf("checkout answered %v", placed)
	}
	first := rcv.waitForOrder(order, "pending_payment")
	if first.body.PageID == nil || *first.body.PageID != page || first.body.Data["maisonId"] != shop || first.body.AppID != app.ID {
		t.Fatalf("placed event %+v", first.body)
	}
	res, body = w.graph(t, "POST", buyer, "order/"+order+"/pay", map[string]any{"payment_method": "test_card_declined"})
	wantGraphError(t, res, body, 402, 100, 0)
	if o := w.ok(t, "GET", buyer, "order/"+order, nil); o["status"] != "pending_payment" {
		t.Fatalf("after a declined payment the order is %v", o["status"])
	}
	res, body = w.graph(t, "POST", seller, "order/"+order+"/shipments", nil)
	if e := wantGraphError(t, res, body, 409, 100, 0); !strings.Contains(e.Error.Message, "pending_payment") {
		t.Fatalf("a wrong transition does not name the state: %s", body)
	}
	steps := []struct {
		token, edge string
		params      map[string]any
		status      string
	}{
		{buyer, "pay", map[string]any{"payment_method": "test_card_ok"}, "paid"},
		{seller, "shipments", nil, "fulfilled"},
		{seller, "refunds", nil, "refunded"},
	}
	for _, s := range steps {
		if o := w.ok(t, "POST", s.token, "order/"+order+"/"+s.edge, s.params); o["status"] != s.status {
			t.Fatalf("%s: order is %v, want %s", s.edge, o["status"], s.status)
		}
		if d := rcv.waitForOrder(order, s.status); d.body.Data["previousStatus"] == "" {
			t.Fatalf("%s event %+v", s.status, d.body)
		}
	}
	if got := fmt.Sprint(w.ok(t, "GET", seller, "order/"+order, nil)["status"]); got != "refunded" {
		t.Fatalf("the seller reads the order as %s", got)
	}

	// Refusals: a final state, a buyer acting as seller, a token without
	// the scope, a stranger.
	res, body = w.graph(t, "POST", seller, "order/"+order+"/cancellations", nil)
	if e := wantGraphError(t, res, body, 409, 100, 0); !strings.Contains(e.Error.Message, "refunded") {
		t.Fatalf("cancel a refunded order: %s", body)
	}
	res, body = w.graph(t, "POST", buyer, "order/"+order+"/refunds", nil)
	wantGraphError(t, res, body, 403, 200, 2069003)
	res, body = w.graph(t, "POST", noScope, "order/"+order+"/refunds", nil)
	wantGraphError(t, res, body, 403, 10, 2069002)
	other := signIn(t, gw, "staff")
	res, body = w.graph(t, "GET", other, "order/"+order, nil)
	wantGraphError(t, res, body, 404, 100, 33)
}

// A catalog is its business's (CONTRACT §17): the business's admins make
// catalogs, its employees work on them but make none, and a person made
// employee reaches the catalogs the admins made before.
func TestABusinessCatalogIsMadeByItsAdminsAndWorkedOnByItsEmployees(t *testing.T) {
	t.Parallel()
	gw := newGraphWorld(t)
	w := &socialWorld{graphWorld: gw}
	business := w.c.Business.ID
	admin := w.g.UserToken(t, "owner", "catalog_management")
	employee := w.g.UserToken(t, "consumer", "catalog_management")
	catalog := w.ok(t, "POST", admin, "business/"+business+"/catalogs", map[string]any{"name": "Spring"})["id"].(string)
	res, body := w.graph(t, "GET", employee, "catalog/"+catalog+"/products", nil)
	wantGraphError(t, res, body, 404, 100, 33)

	w.ok(t, "POST", signIn(t, gw, "owner"), "business/"+business+"/roles", map[string]any{"user_id": w.c.Users["consumer"].ID, "role": "employee"})
	res, body = w.graph(t, "POST", employee, "business/"+business+"/catalogs", map[string]any{"name": "Mine"})
	wantGraphError(t, res, body, 403, 200, 2069003)
	w.ok(t, "POST", employee, "catalog/"+catalog+"/products", map[string]any{"retailer_id": "beans", "name": "Beans", "price": 1290, "currency": "EUR", "availability": "in stock"})
	if got := productNames(t, w.ok(t, "GET", admin, "catalog/"+catalog+"/products", nil)); got != "beans" {
		t.Fatalf("the admin reads %s", got)
	}
}
