package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	commercev1 "github.com/svcplatform/svc/gen/svc/commerce/v1"
	"github.com/svcplatform/svc/plugins/commerce/internal/commercedb"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/event"
)

// The states of an order.
const (
	StatusPendingPayment = "pending_payment"
	StatusPaid           = "paid"
	StatusFulfilled      = "fulfilled"
	StatusCancelled      = "cancelled"
	StatusRefunded       = "refunded"
)

// EventOrderUpdated is emitted, to the shop's Page's linked apps with the
// commerce product, when an order is placed and each time its status
// changes.
const EventOrderUpdated = "commerce.order.updated"

// action is what moves an order.
type action string

const (
	actionPay     action = "pay"
	actionCancel  action = "cancel"
	actionFulfill action = "fulfil"
	actionRefund  action = "refund"
)

// actor is who acts on an order; a caller may be both (a shop's admin
// buying in her own shop).
type actor uint8

const (
	// byBuyer: the person who placed the order.
	byBuyer actor = 1 << iota
	// bySeller: a person with a role on the shop's Page.
	bySeller
)

// transition is one row of the order state machine.
type transition struct {
	from   string
	action action
	to     string
	by     actor
}

// transitions is the order state machine, the only place that says how an
// order moves (as Shopify and Meta Commerce move theirs): the buyer pays
// or cancels a pending order; the seller may cancel it until it ships
// (a paid order cancelled is paid back in full), ships a paid order, and
// refunds a paid or shipped one. A declined payment is no transition: the
// order stays pending_payment. cancelled and refunded are final.
var transitions = []transition{
	{StatusPendingPayment, actionPay, StatusPaid, byBuyer},
	{StatusPendingPayment, actionCancel, StatusCancelled, byBuyer | bySeller},
	{StatusPaid, actionCancel, StatusCancelled, bySeller},
	{StatusPaid, actionFulfill, StatusFulfilled, bySeller},
	{StatusPaid, actionRefund, StatusRefunded, bySeller},
	{StatusFulfilled, actionRefund, StatusRefunded, bySeller},
}

// next is the status an order in from reaches by a, done by a caller who
// is by. A caller who may never do a refuses with 403; one who may, but
// not from this status, with 409 naming the status and those it needs.
func next(from string, a action, by actor) (string, error) {
	var froms []string
	for _, t := range transitions {
		if t.action != a || t.by&by == 0 {
			continue
		}
		if t.from == from {
			return t.to, nil
		}
		froms = append(froms, t.from)
	}
	if len(froms) == 0 {
		return "", sdk.Errorf(403, 200, 2069003, "You cannot %s this order: it needs a role on the shop's Page.", a)
	}
	return "", sdk.Errorf(409, 100, 0, "The order is %s; to %s it, it must be %s.", from, a, strings.Join(froms, " or "))
}

// actorsOf is how the caller stands to an order: its buyer, the shop's
// seller (a role on its Page, as the gateway tells), both or neither.
func (s *service) actorsOf(ctx context.Context, call *sdk.Call, o commercedb.CommerceOrder) (actor, error) {
	p := call.Principal()
	var by actor
	if p.UserID != "" && o.BuyerUserID == p.UserID {
		by |= byBuyer
	}
	shop, err := commercedb.New(s.pool).GetShop(ctx, o.ShopID)
	if err != nil {
		return 0, err
	}
	if shop.PageID != "" && p.UserID != "" {
		_, err := call.Host().PageAccess(ctx, sdk.PageQuery{PageID: shop.PageID, UserID: p.UserID, Need: sdk.PageRoleEditor})
		switch {
		case err == nil:
			by |= bySeller
		case !errors.Is(err, sdk.ErrPageRefused):
			return 0, err
		}
	}
	return by, nil
}

// Sandbox payment methods (CONTRACT §19); no money moves.
const (
	testCardOK       = "test_card_ok"
	testCardDeclined = "test_card_declined"
)

func (s *service) payOrder(ctx context.Context, call *sdk.Call, req *commercev1.PayOrderRequest) (*commercev1.Order, error) {
	switch req.GetPaymentMethod() {
	case testCardOK, testCardDeclined:
	default:
		return nil, sdk.Invalid("payment_method", "Invalid parameter: payment_method must be %s or %s.", testCardOK, testCardDeclined)
	}
	return s.move(ctx, call, req.GetOrderId(), actionPay, func(o commercedb.CommerceOrder) error {
		if req.GetPaymentMethod() == testCardDeclined {
			e := sdk.Errorf(402, 100, 0, "The payment was declined (%s); order %s is still %s.", testCardDeclined, req.GetOrderId(), o.Status)
			e.Field = "payment_method"
			return e
		}
		return nil
	})
}

// orderAction is the handler of a move with no parameters of its own.
func (s *service) orderAction(a action) func(context.Context, *sdk.Call, *commercev1.OrderActionRequest) (*commercev1.Order, error) {
	return func(ctx context.Context, call *sdk.Call, req *commercev1.OrderActionRequest) (*commercev1.Order, error) {
		return s.move(ctx, call, req.GetOrderId(), a, nil)
	}
}

// move applies a to an order under its row lock and emits the change in
// the same transaction. check, when set, may refuse the move after the
// state machine allowed it (a declined payment). An order the caller is
// neither buyer nor seller of does not exist.
func (s *service) move(ctx context.Context, call *sdk.Call, orderID string, a action, check func(commercedb.CommerceOrder) error) (*commercev1.Order, error) {
	id, ok := sdk.ParseID(orderID)
	if !ok {
		return nil, orderNotFound(orderID)
	}
	o, err := commercedb.New(s.pool).GetOrder(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, orderNotFound(orderID)
	}
	if err != nil {
		return nil, err
	}
	// Asked outside the transaction: the host call must not hold the lock.
	by, err := s.actorsOf(ctx, call, o)
	if err != nil {
		return nil, err
	}
	if by == 0 {
		return nil, orderNotFound(orderID)
	}
	var res *commercev1.Order
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := commercedb.New(tx)
		o, err := q.LockOrder(ctx, id)
		if err != nil {
			return err
		}
		to, err := next(o.Status, a, by)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(o); err != nil {
				return err
			}
		}
		from := o.Status
		if o, err = q.SetOrderStatus(ctx, commercedb.SetOrderStatusParams{ShopID: o.ShopID, ID: o.ID, Status: to}); err != nil {
			return err
		}
		shop, err := q.GetShop(ctx, o.ShopID)
		if err != nil {
			return err
		}
		if err := emitOrderUpdated(ctx, tx, shop, o, from); err != nil {
			return err
		}
		res, err = s.orderProto(ctx, q, o)
		return err
	})
	return res, err
}

// orderUpdatedData is the data of commerce.order.updated.
type orderUpdatedData struct {
	OrderID  string `json:"orderId"`
	MaisonID string `json:"maisonId"`
	PageID   string `json:"pageId"`
	Status   string `json:"status"`
	// PreviousStatus is empty for an order just placed.
	PreviousStatus string `json:"previousStatus"`
	Total          struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
	} `json:"total"`
	UpdatedTime string `json:"updatedTime"`
}

// emitOrderUpdated writes commerce.order.updated for o, in tx, which made
// the change. A shop of no Page (the development shop) has no one to tell.
// The order's events share an ordering key; its row lock (or its
// insertion) serialises them.
func emitOrderUpdated(ctx context.Context, tx pgx.Tx, shop commercedb.CommerceShop, o commercedb.CommerceOrder, from string) error {
	if shop.PageID == "" {
		return nil
	}
	d := orderUpdatedData{OrderID: sdk.FormatID(o.ID), MaisonID: sdk.FormatID(shop.ID), PageID: shop.PageID, Status: o.Status,
		PreviousStatus: from, UpdatedTime: o.UpdatedAt.Time.UTC().Format("2006-01-02T15:04:05Z")}
	d.Total.Amount, d.Total.Currency = o.Total, o.Currency
	_, err := event.Emit(ctx, tx, event.Event{Type: EventOrderUpdated, PageID: shop.PageID, Data: d,
		OrderingKey: fmt.Sprintf("commerce.order:%d", o.ID)})
	return err
}
