package main

import (
	"errors"
	"testing"

	"github.com/svcplatform/svc/sdk"
)

// TestCardTransitions checks every row of the card state machine.
func TestCardTransitions(t *testing.T) {
	t.Parallel()
	type want struct {
		to      CardStatus
		emit    bool
		subcode int // a refusal (409, code 10) when not 0
	}
	rows := []struct {
		rule    string
		from    CardStatus
		trigger CardTrigger
		want    want
	}{
		{"a queued card acknowledged by the device is delivered and emits wearables.card.delivered", Queued, Ack, want{Delivered, true, 0}},
		{"a queued card cannot be acted on: 2070003", Queued, Confirm, want{subcode: SubcodeNotDelivered}},
		{"a queued card has no action to repeat: 2070003", Queued, ConfirmAgain, want{subcode: SubcodeNotDelivered}},
		{"a queued card past its expiry expires, silently", Queued, Expire, want{Expired, false, 0}},
		{"a delivered card acknowledged again changes nothing", Delivered, Ack, want{Delivered, false, 0}},
		{"an action on a delivered card confirms it and emits wearables.action.confirmed", Delivered, Confirm, want{Confirmed, true, 0}},
		{"a delivered card treats a repeat like a first action", Delivered, ConfirmAgain, want{Confirmed, true, 0}},
		{"a delivered card does not expire", Delivered, Expire, want{Delivered, false, 0}},
		{"a confirmed card acknowledged again changes nothing", Confirmed, Ack, want{Confirmed, false, 0}},
		{"another action on a confirmed card is refused: 2070004", Confirmed, Confirm, want{subcode: SubcodeAlreadyConfirmed}},
		{"the confirmed action taken again changes nothing and emits nothing", Confirmed, ConfirmAgain, want{Confirmed, false, 0}},
		{"a confirmed card does not expire", Confirmed, Expire, want{Confirmed, false, 0}},
		{"an expired card cannot be acknowledged: 2070002", Expired, Ack, want{subcode: SubcodeCardExpired}},
		{"an expired card cannot be acted on: 2070002", Expired, Confirm, want{subcode: SubcodeCardExpired}},
		{"an expired card has no action to repeat: 2070002", Expired, ConfirmAgain, want{subcode: SubcodeCardExpired}},
		{"an expired card expiring again stays expired", Expired, Expire, want{Expired, false, 0}},
	}
	covered := map[CardStatus]map[CardTrigger]bool{}
	for _, r := range rows {
		if covered[r.from] == nil {
			covered[r.from] = map[CardTrigger]bool{}
		}
		covered[r.from][r.trigger] = true
		t.Run(r.rule, func(t *testing.T) {
			to, emit, err := transition(r.from, r.trigger)
			if r.want.subcode != 0 {
				var e *sdk.Error
				if !errors.As(err, &e) || e.HTTPStatus != 409 || e.Code != 10 || e.Subcode != r.want.subcode {
					t.Fatalf("got %v, want 409/10/%d", err, r.want.subcode)
				}
				return
			}
			if err != nil || to != r.want.to || emit != r.want.emit {
				t.Fatalf("got %s emit=%v err=%v, want %s emit=%v", to, emit, err, r.want.to, r.want.emit)
			}
		})
	}
	// The table in code has no row this test does not check.
	for from, triggers := range cardTransitions {
		for trigger := range triggers {
			if !covered[from][trigger] {
				t.Errorf("row %s/%s of cardTransitions is not tested", from, trigger)
			}
		}
	}
}

func TestAnUnknownStatusIsAnError(t *testing.T) {
	t.Parallel()
	if _, _, err := transition("lost", Ack); err == nil {
		t.Fatal("transition from an unknown status succeeded")
	}
}
