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

// Bounds of a cart (also declared on the proto for the gateway's check).
const (
	maxLines    = 50
	maxQuantity = 99
)

// The development shop and its catalog (doc.go).
const (
	devShopID    = 7000000001
	devCatalogID = 7300000001
)

var devProducts = []commercedb.SeedProductParams{
	{CatalogID: devCatalogID, ID: 7100000001, RetailerID: "espresso-250", Name: "Espresso beans, 250 g", Price: 1290, Currency: "EUR", Available: true},
	{CatalogID: devCatalogID, ID: 7100000002, RetailerID: "cup", Name: "Ceramic cup", Price: 1850, Currency: "EUR", Available: true},
	{CatalogID: devCatalogID, ID: 7100000003, RetailerID: "tasting-2", Name: "Tasting for two", Price: 4500, Currency: "EUR", Available: true},
	{CatalogID: devCatalogID, ID: 7100000004, RetailerID: "limited-roast", Name: "Limited roast (sold out)", Price: 2400, Currency: "EUR", Available: false},
}

// seedShop adds the development shop and its products when missing. An
// installation whose shop predates catalogs has it already (migration
// 0002 gave it a catalog of its own).
func seedShop(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := commercedb.New(tx)
		if _, err := q.GetShop(ctx, devShopID); err == nil {
			return nil
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if err := q.SeedCatalog(ctx, commercedb.SeedCatalogParams{ID: devCatalogID, Name: "Maison Demo"}); err != nil {
			return err
		}
		if err := q.SeedShop(ctx, commercedb.SeedShopParams{ID: devShopID, Name: "Maison Demo", Currency: "EUR", CatalogID: devCatalogID}); err != nil {
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
	sdk.Handle(p, m.ByName("CreateCatalog"), s.createCatalog)
	sdk.Handle(p, m.ByName("ListCatalogProducts"), s.listCatalogProducts)
	sdk.Handle(p, m.ByName("CreateCatalogProduct"), s.createCatalogProduct)
	sdk.Handle(p, m.ByName("BatchCatalogProducts"), s.batchCatalogProducts)
	sdk.Handle(p, m.ByName("CreateProductSet"), s.createProductSet)
	sdk.Handle(p, m.ByName("ListProductSetProducts"), s.listProductSetProducts)
	sdk.Handle(p, m.ByName("CreateMaison"), s.createMaison)
	sdk.Handle(p, m.ByName("PayOrder"), s.payOrder)
	sdk.Handle(p, m.ByName("CancelOrder"), s.orderAction(actionCancel))
	sdk.Handle(p, m.ByName("FulfillOrder"), s.orderAction(actionFulfill))
	sdk.Handle(p, m.ByName("RefundOrder"), s.orderAction(actionRefund))
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
	return &commercev1.Maison{Id: sdk.FormatID(shop.ID), Name: shop.Name, Currency: shop.Currency, PageId: shop.PageID,
		CatalogId: sdk.FormatID(shop.CatalogID)}, nil
}

// listProducts lists the products of the shop's catalog.
func (s *service) listProducts(ctx context.Context, _ *sdk.Call, req *commercev1.ListProductsRequest) (*commercev1.ListProductsResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	shop, err := s.shop(ctx, req.GetMaisonId())
	if err != nil {
		return nil, err
	}
	return s.catalogPage(ctx, w, shop.CatalogID, productFilter{})
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
// the total. A product the shop's catalog does not have is not found; one
// that is not available, or priced in another currency than the shop's,
// is refused; all name the line.
func priceCart(items []*commercev1.CheckoutItem, ids []int64, catalog []commercedb.CommerceProduct, currency string) ([]line, int64, error) {
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
		if p.Currency != currency {
			return nil, 0, sdk.Invalid(field+".product_id", "Invalid parameter: %s.product_id: %s is priced in %s; this shop sells in %s.", field, p.Name, p.Currency, currency)
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
		catalog, err := q.CatalogProducts(ctx, commercedb.CatalogProductsParams{CatalogID: shop.CatalogID, Ids: ids})
		if err != nil {
			return err
		}
		lines, total, err := priceCart(req.GetItems(), ids, catalog, shop.Currency)
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
		return emitOrderUpdated(ctx, tx, shop, order, "")
	})
	if err != nil {
		return nil, err
	}
	return &commercev1.CheckoutResponse{OrderId: sdk.FormatID(order.ID), Status: order.Status, Total: money(order.Total, order.Currency)}, nil
}

// getOrder reads an order to its buyer and to the people of the shop's
// Page; to anyone else it does not exist.
func (s *service) getOrder(ctx context.Context, call *sdk.Call, req *commercev1.GetOrderRequest) (*commercev1.Order, error) {
	id, ok := sdk.ParseID(req.GetOrderId())
	if !ok {
		return nil, orderNotFound(req.GetOrderId())
	}
	q := commercedb.New(s.pool)
	o, err := q.GetOrder(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, orderNotFound(req.GetOrderId())
	}
	if err != nil {
		return nil, err
	}
	by, err := s.actorsOf(ctx, call, o)
	if err != nil {
		return nil, err
	}
	if by == 0 {
		return nil, orderNotFound(req.GetOrderId())
	}
	return s.orderProto(ctx, q, o)
}

// orderProto is an order with its lines, as the Graph shows it.
func (s *service) orderProto(ctx context.Context, q *commercedb.Queries, o commercedb.CommerceOrder) (*commercev1.Order, error) {
	items, err := q.OrderItems(ctx, commercedb.OrderItemsParams{ShopID: o.ShopID, OrderID: o.ID})
	if err != nil {
		return nil, err
	}
	res := &commercev1.Order{Id: sdk.FormatID(o.ID), MaisonId: sdk.FormatID(o.ShopID), Status: o.Status, Total: money(o.Total, o.Currency),
		CreatedTime: o.CreatedAt.Time.UTC().Format(time.RFC3339), UpdatedTime: o.UpdatedAt.Time.UTC().Format(time.RFC3339),
		Items: make([]*commercev1.OrderItem, len(items))}
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
