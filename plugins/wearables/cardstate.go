package main

import (
	"fmt"
	"net/http"

	"github.com/svcplatform/svc/sdk"
)

// CardStatus is where a card is on its way to the wearer.
type CardStatus string

// Card statuses, as stored in wearables.cards.status.
const (
	// Queued: pushed, not yet acknowledged by the wearer's device.
	Queued CardStatus = "queued"
	// Delivered: the device acknowledged it.
	Delivered CardStatus = "delivered"
	// Confirmed: the wearer took one of its actions.
	Confirmed CardStatus = "confirmed"
	// Expired: it waited past its expiry, or newer cards displaced it.
	Expired CardStatus = "expired"
)

// CardTrigger is something that happens to a card.
type CardTrigger string

// Card triggers.
const (
	// Ack: the wearer's device acknowledges the card.
	Ack CardTrigger = "ack"
	// Confirm: the wearer takes an action the card offers.
	Confirm CardTrigger = "confirm"
	// ConfirmAgain: the wearer takes the action already confirmed again.
	ConfirmAgain CardTrigger = "confirm again"
	// Expire: the card's expiry passed, or the per-user bound displaced it.
	Expire CardTrigger = "expire"
)

// Subcodes of the wearables refusals (CONTRACT §3 leaves them to us; the
// 2070xxx range is this product's).
const (
	// SubcodeNotTheWearer: a token may push cards to its own user only.
	SubcodeNotTheWearer = 2070001
	// SubcodeCardExpired: the card expired before it was delivered.
	SubcodeCardExpired = 2070002
	// SubcodeNotDelivered: the card has not reached the device yet.
	SubcodeNotDelivered = 2070003
	// SubcodeAlreadyConfirmed: another action of the card was confirmed.
	SubcodeAlreadyConfirmed = 2070004
)

// cardRule is one row of the card transition table: the next status and
// whether the change emits its event, or the refusal.
type cardRule struct {
	to      CardStatus
	emit    bool
	refusal func() *sdk.Error
}

func errExpired() *sdk.Error {
	return sdk.Errorf(http.StatusConflict, 10, SubcodeCardExpired,
		"The card expired before it reached the wearer's device.")
}

func errNotDelivered() *sdk.Error {
	return sdk.Errorf(http.StatusConflict, 10, SubcodeNotDelivered,
		"The card has not reached the wearer's device yet.")
}

func errAlreadyConfirmed() *sdk.Error {
	return sdk.Errorf(http.StatusConflict, 10, SubcodeAlreadyConfirmed,
		"Another action of this card was confirmed already.")
}

// cardTransitions is the whole state machine of a card. A repeated
// acknowledgement or confirmation changes nothing and emits nothing, so
// devices and wearers may retry. The table is total: every status meets
// every trigger.
var cardTransitions = map[CardStatus]map[CardTrigger]cardRule{
	Queued: {
		Ack:          {to: Delivered, emit: true},
		Confirm:      {refusal: errNotDelivered},
		ConfirmAgain: {refusal: errNotDelivered},
		Expire:       {to: Expired},
	},
	Delivered: {
		Ack:          {to: Delivered},
		Confirm:      {to: Confirmed, emit: true},
		ConfirmAgain: {to: Confirmed, emit: true},
		Expire:       {to: Delivered}, // only waiting cards expire
	},
	Confirmed: {
		Ack:          {to: Confirmed},
		Confirm:      {refusal: errAlreadyConfirmed},
		ConfirmAgain: {to: Confirmed},
		Expire:       {to: Confirmed},
	},
	Expired: {
		Ack:          {refusal: errExpired},
		Confirm:      {refusal: errExpired},
		ConfirmAgain: {refusal: errExpired},
		Expire:       {to: Expired},
	},
}

// transition applies trigger to a card in status from. It answers the next
// status and whether to emit the trigger's event, or the refusal to return.
func transition(from CardStatus, trigger CardTrigger) (to CardStatus, emit bool, err error) {
	rule, ok := cardTransitions[from][trigger]
	if !ok {
		return from, false, fmt.Errorf("card status %q meets %q: no such transition", from, trigger)
	}
	if rule.refusal != nil {
		return from, false, rule.refusal()
	}
	return rule.to, rule.emit, nil
}
