package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/structpb"

	commercev1 "github.com/svcplatform/svc/gen/svc/commerce/v1"
	"github.com/svcplatform/svc/plugins/commerce/internal/commercedb"
	"github.com/svcplatform/svc/sdk"
)

// maxBatch bounds the products of one items_batch call (one transaction).
const maxBatch = 1000

func catalogNotFound(field, id string) error {
	e := sdk.NotFound("Catalog " + id)
	e.Field = field
	return e
}

// catalog reads a catalog the caller may work on: one of a business on
// which the caller has a role, as the gateway decides (Host
// BusinessAccess, any role). Any other catalog, and a shop's own catalog
// (no business), does not exist for the caller.
func (s *service) catalog(ctx context.Context, call *sdk.Call, field, id string) (commercedb.CommerceCatalog, error) {
	n, ok := sdk.ParseID(id)
	if !ok {
		return commercedb.CommerceCatalog{}, catalogNotFound(field, id)
	}
	c, err := commercedb.New(s.pool).GetCatalog(ctx, n)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && c.BusinessID == "" {
		return c, catalogNotFound(field, id)
	}
	if err != nil {
		return c, err
	}
	err = call.Host().BusinessAccess(ctx, sdk.BusinessQuery{BusinessID: c.BusinessID, UserID: call.Principal().UserID,
		Need: sdk.BusinessRoleEmployee})
	if errors.Is(err, sdk.ErrBusinessRefused) {
		return c, catalogNotFound(field, id)
	}
	return c, err
}

// createCatalog makes a catalog of the business the request names; the
// gateway has checked the caller is its admin (business_role).
func (s *service) createCatalog(ctx context.Context, call *sdk.Call, req *commercev1.CreateCatalogRequest) (*commercev1.Created, error) {
	id, err := commercedb.New(s.pool).InsertCatalog(ctx, commercedb.InsertCatalogParams{BusinessID: req.GetBusinessId(), Name: req.GetName()})
	if err != nil {
		return nil, err
	}
	return &commercev1.Created{Id: sdk.FormatID(id)}, nil
}

func (s *service) listCatalogProducts(ctx context.Context, call *sdk.Call, req *commercev1.ListCatalogProductsRequest) (*commercev1.ListProductsResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	c, err := s.catalog(ctx, call, "catalog_id", req.GetCatalogId())
	if err != nil {
		return nil, err
	}
	return s.catalogPage(ctx, w, c.ID, productFilter{})
}

// Availability as the Graph writes it.
const (
	inStock    = "in stock"
	outOfStock = "out of stock"
)

func availability(available bool) string {
	if available {
		return inStock
	}
	return outOfStock
}

var currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)

// readProduct checks one product as uploaded; a refusal names the field
// under prefix (e.g. "items[3]."). It returns the row to store.
func readProduct(prefix string, in *commercev1.ProductInput) (commercedb.UpsertProductParams, error) {
	bad := func(field, why string) error {
		return sdk.Invalid(prefix+field, "Invalid parameter: %s%s %s.", prefix, field, why)
	}
	var p commercedb.UpsertProductParams
	if n := utf8.RuneCountInString(in.GetRetailerId()); n < 1 || n > 100 {
		return p, bad("retailer_id", "must be 1 to 100 characters")
	}
	if n := utf8.RuneCountInString(in.GetName()); n < 1 || n > 200 {
		return p, bad("name", "must be 1 to 200 characters")
	}
	if in.GetPrice() < 1 || in.GetPrice() > 1_000_000_000 {
		return p, bad("price", "must be 1 to 1000000000 (minor units of currency)")
	}
	if !currencyRE.MatchString(in.GetCurrency()) {
		return p, bad("currency", "must be an ISO 4217 code such as EUR")
	}
	switch in.GetAvailability() {
	case inStock:
		p.Available = true
	case outOfStock:
	default:
		return p, bad("availability", `must be "in stock" or "out of stock"`)
	}
	p.RetailerID, p.Name, p.Price, p.Currency = in.GetRetailerId(), in.GetName(), in.GetPrice(), in.GetCurrency()
	return p, nil
}

func (s *service) createCatalogProduct(ctx context.Context, call *sdk.Call, req *commercev1.CreateCatalogProductRequest) (*commercev1.Created, error) {
	c, err := s.catalog(ctx, call, "catalog_id", req.GetCatalogId())
	if err != nil {
		return nil, err
	}
	p, err := readProduct("", &commercev1.ProductInput{RetailerId: req.GetRetailerId(), Name: req.GetName(), Price: req.GetPrice(),
		Currency: req.GetCurrency(), Availability: req.GetAvailability()})
	if err != nil {
		return nil, err
	}
	p.CatalogID = c.ID
	row, err := commercedb.New(s.pool).UpsertProduct(ctx, p)
	if err != nil {
		return nil, err
	}
	return &commercev1.Created{Id: sdk.FormatID(row.ID)}, nil
}

// readBatch checks a batch: each valid item becomes a row to store, each
// invalid one an error naming it; a retailer_id given twice is refused
// on its second item.
func readBatch(items []*commercev1.ProductInput) ([]commercedb.UpsertProductParams, []*commercev1.ItemError) {
	var rows []commercedb.UpsertProductParams
	var errs []*commercev1.ItemError
	seen := map[string]int{}
	for i, in := range items {
		prefix := fmt.Sprintf("items[%d].", i)
		p, err := readProduct(prefix, in)
		if err == nil {
			if j, dup := seen[in.GetRetailerId()]; dup {
				err = sdk.Invalid(prefix+"retailer_id", "Invalid parameter: %sretailer_id is items[%d]'s too.", prefix, j)
			}
		}
		if err != nil {
			e := err.(*sdk.Error)
			errs = append(errs, &commercev1.ItemError{Index: int32(i), RetailerId: in.GetRetailerId(), Field: e.Field, Message: e.Message})
			continue
		}
		seen[in.GetRetailerId()] = i
		rows = append(rows, p)
	}
	return rows, errs
}

func (s *service) batchCatalogProducts(ctx context.Context, call *sdk.Call, req *commercev1.BatchCatalogProductsRequest) (*commercev1.BatchCatalogProductsResponse, error) {
	if n := len(req.GetItems()); n < 1 || n > maxBatch {
		return nil, sdk.Invalid("items", "Invalid parameter: items must hold 1 to %d products.", maxBatch)
	}
	c, err := s.catalog(ctx, call, "catalog_id", req.GetCatalogId())
	if err != nil {
		return nil, err
	}
	rows, errs := readBatch(req.GetItems())
	res := &commercev1.BatchCatalogProductsResponse{NumReceived: int32(len(req.GetItems())), Errors: errs}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := commercedb.New(tx)
		res.NumCreated, res.NumUpdated = 0, 0
		for _, p := range rows {
			p.CatalogID = c.ID
			r, err := q.UpsertProduct(ctx, p)
			if err != nil {
				return err
			}
			if r.Created {
				res.NumCreated++
			} else {
				res.NumUpdated++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// productFilter is a product set's saved filter: every rule set must hold.
// The query evaluates it (ProductSetProducts*); nil is no rule.
type productFilter struct {
	PriceLT, PriceGT *int64
	AvailableEQ      *bool
}

// readFilter reads a filter as CONTRACT §19 gives it: {"price":{"lt":N,
// "gt":N}, "availability":{"eq":"in stock"|"out of stock"}}, at least one
// rule. Anything else is refused naming the part of the filter.
func readFilter(f *structpb.Struct) (productFilter, error) {
	var out productFilter
	bad := func(field, why string) error {
		return sdk.Invalid("filter"+field, "Invalid parameter: filter%s %s.", field, why)
	}
	if len(f.GetFields()) == 0 {
		return out, bad("", `must hold a rule: price with lt or gt, availability with eq`)
	}
	for key, v := range f.GetFields() {
		ops := v.GetStructValue()
		if ops == nil || len(ops.GetFields()) == 0 {
			return out, bad("."+key, "must be an object of operators")
		}
		for op, arg := range ops.GetFields() {
			field := "." + key + "." + op
			switch key + "." + op {
			case "price.lt", "price.gt":
				n, ok := arg.GetKind().(*structpb.Value_NumberValue)
				if !ok || n.NumberValue != float64(int64(n.NumberValue)) || n.NumberValue < 0 || n.NumberValue > 1e12 {
					return out, bad(field, "must be a whole number of minor units")
				}
				p := int64(n.NumberValue)
				if op == "lt" {
					out.PriceLT = &p
				} else {
					out.PriceGT = &p
				}
			case "availability.eq":
				var b bool
				switch arg.GetStringValue() {
				case inStock:
					b = true
				case outOfStock:
				default:
					return out, bad(field, `must be "in stock" or "out of stock"`)
				}
				out.AvailableEQ = &b
			default:
				return out, bad(field, "is not a rule: price takes lt and gt, availability takes eq")
			}
		}
	}
	return out, nil
}

func (s *service) createProductSet(ctx context.Context, call *sdk.Call, req *commercev1.CreateProductSetRequest) (*commercev1.Created, error) {
	c, err := s.catalog(ctx, call, "catalog_id", req.GetCatalogId())
	if err != nil {
		return nil, err
	}
	f, err := readFilter(req.GetFilter())
	if err != nil {
		return nil, err
	}
	id, err := commercedb.New(s.pool).InsertProductSet(ctx, commercedb.InsertProductSetParams{CatalogID: c.ID, Name: req.GetName(),
		PriceLt: f.PriceLT, PriceGt: f.PriceGT, AvailableEq: f.AvailableEQ})
	if err != nil {
		return nil, err
	}
	return &commercev1.Created{Id: sdk.FormatID(id)}, nil
}

// listProductSetProducts lists the products matching the set now; a set
// of another business's catalog does not exist for the caller.
func (s *service) listProductSetProducts(ctx context.Context, call *sdk.Call, req *commercev1.ListProductSetProductsRequest) (*commercev1.ListProductsResponse, error) {
	w, err := sdk.ParseWindow(req.GetLimit(), req.GetAfter(), req.GetBefore())
	if err != nil {
		return nil, err
	}
	notFound := sdk.NotFound("Product set " + req.GetProductSetId())
	id, ok := sdk.ParseID(req.GetProductSetId())
	if !ok {
		return nil, notFound
	}
	set, err := commercedb.New(s.pool).GetProductSet(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	if _, err := s.catalog(ctx, call, "product_set_id", sdk.FormatID(set.CatalogID)); err != nil {
		return nil, notFound
	}
	return s.catalogPage(ctx, w, set.CatalogID, productFilter{PriceLT: set.PriceLt, PriceGT: set.PriceGt, AvailableEQ: set.AvailableEq})
}

// catalogPage is one page of a catalog's products matching f.
func (s *service) catalogPage(ctx context.Context, w sdk.Window, catalogID int64, f productFilter) (*commercev1.ListProductsResponse, error) {
	q := commercedb.New(s.pool)
	var rows []commercedb.CommerceProduct
	var err error
	if w.Before != 0 {
		rows, err = q.ProductSetProductsBefore(ctx, commercedb.ProductSetProductsBeforeParams{CatalogID: catalogID, Before: w.Before, Lim: w.Fetch(),
			PriceLt: f.PriceLT, PriceGt: f.PriceGT, AvailableEq: f.AvailableEQ})
	} else {
		rows, err = q.ProductSetProductsAfter(ctx, commercedb.ProductSetProductsAfterParams{CatalogID: catalogID, After: w.After, Lim: w.Fetch(),
			PriceLt: f.PriceLT, PriceGt: f.PriceGT, AvailableEq: f.AvailableEQ})
	}
	if err != nil {
		return nil, err
	}
	rows, paging := sdk.Page(w, rows, func(p commercedb.CommerceProduct) int64 { return p.ID })
	res := &commercev1.ListProductsResponse{Data: make([]*commercev1.Product, len(rows))}
	paging.Set(res)
	for i, r := range rows {
		res.Data[i] = &commercev1.Product{Id: sdk.FormatID(r.ID), RetailerId: r.RetailerID, Name: r.Name, Price: money(r.Price, r.Currency),
			Available: r.Available, Availability: availability(r.Available)}
	}
	return res, nil
}

// createMaison opens a shop on a Page (the gateway checked that the caller
// administers it) selling from a catalog of the caller's business.
func (s *service) createMaison(ctx context.Context, call *sdk.Call, req *commercev1.CreateMaisonRequest) (*commercev1.Created, error) {
	c, err := s.catalog(ctx, call, "catalog_id", req.GetCatalogId())
	if err != nil {
		return nil, err
	}
	id, err := commercedb.New(s.pool).InsertShop(ctx, commercedb.InsertShopParams{Name: req.GetName(), Currency: req.GetCurrency(),
		CatalogID: c.ID, PageID: req.GetPageId()})
	if err != nil {
		return nil, err
	}
	return &commercev1.Created{Id: sdk.FormatID(id)}, nil
}
