package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	commercev1 "github.com/svcplatform/svc/gen/svc/commerce/v1"
	"github.com/svcplatform/svc/plugins/commerce/internal/commercedb"
	"github.com/svcplatform/svc/sdk"
)

// StatusPendingPayment is the status of every order checkout creates.
const StatusPendingPayment = "pending_payment"

// Bounds of a cart (also declared on the proto for the gateway's check).
const (
	maxLines    = 50
	maxQuantity = 99
)

// The development shop and its catalog (doc.go).
const devShopID = 7000000001

var devProducts = []commercedb.SeedProductParams{
	{ShopID: devShopID, ID: 7100000001, Name: "Espresso beans, 250 g", Price: 1290, Available: true},
	{ShopID: devShopID, ID: 7100000002, Name: "Ceramic cup", Price: 1850, Available: true},
	{ShopID: devShopID, ID: 7100000003, Name: "Tasting for two", Price: 4500, Available: true},
	{ShopID: devShopID, ID: 7100000004, Name: "Limited roast (sold out)", Price: 2400, Available: false},
}

// seedShop adds the development shop and its products when missing.
func seedShop(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := commercedb.New(tx)
		if err := q.SeedShop(ctx, commercedb.SeedShopParams{ID: devShopID, Name: "Maison Demo", Currency: "EUR"}); err != nil {
			return err
		}
		for _, p := range devProducts {
			if err := q.SeedProduct(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
}

type service struct {
	pool *pgxpool.Pool
}

func (s *service) register(p *sdk.Plugin) {
	m := commercev1.File_svc_commerce_v1_commerce_proto.Services().ByName("CommerceService").Methods()
	sdk.Handle(p, m.ByName("GetMaison"), s.getMaison)
	sdk.OnUserLeft(p, s.userLeft)
	sdk.Handle(p, m.ByName("ListProducts"), s.listProducts)
	sdk.Handle(p, m.ByName("Checkout"), s.checkout)
	sdk.Handle(p, m.ByName("GetOrder"), s.getOrder)
}

func (s *service) shop(ctx context.Context, id string) (commercedb.CommerceShop, error) {
	n, ok := sdk.ParseID(id)
	if !ok {
		return commercedb.CommerceShop{}, shopNotFound(id)
	}
	row, err := commercedb.New(s.pool).GetShop(ctx, n)
	if errors.Is(err, pgx.ErrNoRows) {
		return row, shopNotFound(id)
	}
	return row, err
}

func (s *service) getMaison(ctx context.Context, _ *sdk.Call, req *commercev1.GetMaisonRequest) (*commercev1.Maison, error) {
	shop, err := s.shop(ctx, req.GetMaisonId())
	if err != nil {
		return nil, err
	}
	return &commercev1.Maison{Id: sdk.FormatID(shop.ID), Name: shop.Name, Currency: shop.Currency}, nil
}

func (s *service) listProducts(ctx context.Context, _ *sdk.Call, req *commercev1.ListProductsRequest) (*commercev1.ListProductsResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	shop, err := s.shop(ctx, req.GetMaisonId())
	if err != nil {
		return nil, err
	}
	q := commercedb.New(s.pool)
	var rows []commercedb.CommerceProduct
	if w.Before != 0 {
		rows, err = q.ProductsBefore(ctx, commercedb.ProductsBeforeParams{ShopID: shop.ID, Before: w.Before, Lim: w.Fetch()})
	} else {
		rows, err = q.ProductsAfter(ctx, commercedb.ProductsAfterParams{ShopID: shop.ID, After: w.After, Lim: w.Fetch()})
	}
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(p commercedb.CommerceProduct) int64 { return p.ID })
	res := &commercev1.ListProductsResponse{Data: make([]*commercev1.Product, len(rows))}
	paging.Set(res)
	for i, r := range rows {
		res.Data[i] = &commercev1.Product{Id: sdk.FormatID(r.ID), Name: r.Name, Price: money(r.Price, shop.Currency), Available: r.Available}
	}
	return res, nil
}

// line is one priced line of a cart.
type line struct {
	ProductID int64
	Quantity  int32
	UnitPrice int64
}

// readCart checks a cart's lines: 1 to 50, each product once, quantities
// 1 to 99. It returns the product ids in the cart's order. A product id
// that names nothing cannot be told here; priceCart refuses it.
func readCart(items []*commercev1.CheckoutItem) ([]int64, error) {
	if len(items) == 0 || len(items) > maxLines {
		return nil, sdk.Invalid("items", "Invalid parameter: items must hold 1 to %d lines.", maxLines)
	}
	ids := make([]int64, len(items))
	seen := map[string]int{}
	for i, it := range items {
		field := fmt.Sprintf("items[%d]", i)
		if q := it.GetQuantity(); q < 1 || q > maxQuantity {
			return nil, sdk.Invalid(field+".quantity", "Invalid parameter: %s.quantity must be 1 to %d.", field, maxQuantity)
		}
		if j, dup := seen[it.GetProductId()]; dup {
			return nil, sdk.Invalid(field+".product_id", "Invalid parameter: %s.product_id is items[%d]'s too; give each product once with its quantity.", field, j)
		}
		seen[it.GetProductId()] = i
		id, ok := sdk.ParseID(it.GetProductId())
		if !ok {
			return nil, productNotFound(field, it.GetProductId())
		}
		ids[i] = id
	}
	return ids, nil
}

// priceCart prices each line from the catalog rows of the shop and sums
// the total. A product the shop does not have is not found; one that is
// not available is refused; both name the line.
func priceCart(items []*commercev1.CheckoutItem, ids []int64, catalog []commercedb.CommerceProduct) ([]line, int64, error) {
	byID := make(map[int64]commercedb.CommerceProduct, len(catalog))
	for _, p := range catalog {
		byID[p.ID] = p
	}
	lines := make([]line, len(items))
	var total int64
	for i, it := range items {
		field := fmt.Sprintf("items[%d]", i)
		p, ok := byID[ids[i]]
		if !ok {
			return nil, 0, productNotFound(field, it.GetProductId())
		}
		if !p.Available {
			return nil, 0, sdk.Invalid(field+".product_id", "Invalid parameter: %s.product_id: %s is not available now.", field, p.Name)
		}
		lines[i] = line{ProductID: p.ID, Quantity: it.GetQuantity(), UnitPrice: p.Price}
		// At most 50 × 99 × 10^9: no overflow, and exact as a JSON number.
		total += p.Price * int64(it.GetQuantity())
	}
	return lines, total, nil
}

// checkout stores an order of the caller priced from the shop's catalog.
func (s *service) checkout(ctx context.Context, call *sdk.Call, req *commercev1.CheckoutRequest) (*commercev1.CheckoutResponse, error) {
	ids, err := readCart(req.GetItems())
	if err != nil {
		return nil, err
	}
	shop, err := s.shop(ctx, req.GetMaisonId())
	if err != nil {
		return nil, err
	}
	p := call.Principal()
	var order commercedb.CommerceOrder
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := commercedb.New(tx)
		// Read in the transaction that stores the order: the order is
		// priced as the catalog stood when it was placed.
		catalog, err := q.ShopProducts(ctx, commercedb.ShopProductsParams{ShopID: shop.ID, Ids: ids})
		if err != nil {
			return err
		}
		lines, total, err := priceCart(req.GetItems(), ids, catalog)
		if err != nil {
			return err
		}
		order, err = q.InsertOrder(ctx, commercedb.InsertOrderParams{ShopID: shop.ID, BuyerUserID: p.UserID, AppID: p.AppID,
			Total: total, Currency: shop.Currency})
		if err != nil {
			return err
		}
		for _, l := range lines {
			if err := q.InsertOrderItem(ctx, commercedb.InsertOrderItemParams{ShopID: shop.ID, OrderID: order.ID,
				ProductID: l.ProductID, Quantity: l.Quantity, UnitPrice: l.UnitPrice}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &commercev1.CheckoutResponse{OrderId: sdk.FormatID(order.ID), Status: order.Status, Total: money(order.Total, order.Currency)}, nil
}

// getOrder reads an order to its buyer; to anyone else it does not exist.
func (s *service) getOrder(ctx context.Context, call *sdk.Call, req *commercev1.GetOrderRequest) (*commercev1.Order, error) {
	id, ok := sdk.ParseID(req.GetOrderId())
	if !ok {
		return nil, orderNotFound(req.GetOrderId())
	}
	q := commercedb.New(s.pool)
	o, err := q.GetOrder(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && o.BuyerUserID != call.Principal().UserID {
		return nil, orderNotFound(req.GetOrderId())
	}
	if err != nil {
		return nil, err
	}
	items, err := q.OrderItems(ctx, commercedb.OrderItemsParams{ShopID: o.ShopID, OrderID: o.ID})
	if err != nil {
		return nil, err
	}
	res := &commercev1.Order{Id: sdk.FormatID(o.ID), MaisonId: sdk.FormatID(o.ShopID), Status: o.Status, Total: money(o.Total, o.Currency),
		CreatedTime: o.CreatedAt.Time.UTC().Format(time.RFC3339), Items: make([]*commercev1.OrderItem, len(items))}
	for i, it := range items {
		res.Items[i] = &commercev1.OrderItem{ProductId: sdk.FormatID(it.ProductID), Quantity: it.Quantity, UnitPrice: money(it.UnitPrice, o.Currency)}
	}
	return res, nil
}

func money(minor int64, currency string) *commercev1.Money {
	return &commercev1.Money{Amount: float64(minor), Currency: currency}
}

func shopNotFound(id string) error  { return sdk.NotFound("Shop " + id) }
func orderNotFound(id string) error { return sdk.NotFound("Order " + id) }

// productNotFound names the line whose product the shop does not have.
func productNotFound(field, id string) error {
	e := sdk.NotFound("Product " + id + " of this shop")
	e.Field = field + ".product_id"
	return e
}
