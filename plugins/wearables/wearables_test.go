package main

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	wearablesv1 "github.com/svcplatform/svc/gen/svc/wearables/v1"
	"github.com/svcplatform/svc/plugins/wearables/internal/wearablesdb"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func TestAPushForAnotherUserIsRefusedWith2070001AndStoresNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{SimulateDevices: true})
	_, err := plugintest.Call[*wearablesv1.PushCardResponse](ctxFor(t), b.tp, procPush, app,
		&wearablesv1.PushCardRequest{UserId: other, Card: card("ok")})
	plugintest.WantRefusal(t, err, 403, 200, SubcodeNotTheWearer)
	var n int
	if err := b.pool.QueryRow(ctxFor(t), `SELECT (SELECT count(*) FROM wearables.cards) + (SELECT count(*) FROM wearables.devices)`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows after a refused push: %d %v", n, err)
	}
}

func TestTextWithNULIsRefusedNamingTheField(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	c := card("ok")
	c.Actions[0].Label = "o\x00k"
	_, err := plugintest.Call[*wearablesv1.PushCardResponse](ctxFor(t), b.tp, procPush, app,
		&wearablesv1.PushCardRequest{UserId: wearer, Card: c})
	if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "card.actions[0].label" {
		t.Fatalf("field %q", e.Field)
	}
}

func TestAConnectedDeviceReceivesTheCardAndItsAckEmitsDeliveredOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	stream, deviceID := b.connect(t, device)
	cardID := b.push(t, "accept", "decline")
	got := stream.next(t).GetCard()
	if got.GetId() != cardID || got.GetTitle() != "Coffee is ready" || len(got.GetActions()) != 2 ||
		got.GetActions()[1].GetId() != "decline" || got.GetAppId() != appID || got.GetExpiresTime() == "" {
		t.Fatalf("streamed card %v", got)
	}
	if b.status(t, cardID) != "queued" {
		t.Fatal("a card sent but not acknowledged must stay queued")
	}
	res, err := b.ack(t, device, cardID)
	if err != nil || res.GetStatus() != "delivered" || res.GetDeviceId() != deviceID {
		t.Fatalf("ack: %v %v", res, err)
	}
	if _, err := b.ack(t, device, cardID); err != nil {
		t.Fatalf("a repeated ack: %v", err)
	}
	ev := b.events(t, EventCardDelivered)
	if len(ev) != 1 || ev[0].AppID == nil || *ev[0].AppID != appID ||
		ev[0].Data["cardId"] != cardID || ev[0].Data["userId"] != wearer || ev[0].Data["deviceId"] != deviceID {
		t.Fatalf("delivered events %+v", ev)
	}
}

func TestCardsWaitWhileNoDeviceIsConnectedAndArriveOnConnect(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{}) // no simulation: production
	first := b.push(t, "ok")
	second := b.push(t, "ok")
	stream, _ := b.connect(t, device)
	if a, c := stream.next(t).GetCard().GetId(), stream.next(t).GetCard().GetId(); a != first || c != second {
		t.Fatalf("got %s, %s; want the waiting cards oldest first: %s, %s", a, c, first, second)
	}
	// Not acknowledged: the next connection gets them again.
	stream.close()
	again, _ := b.connect(t, device)
	if id := again.next(t).GetCard().GetId(); id != first {
		t.Fatalf("after reconnecting got %s, want %s again", id, first)
	}
}

func TestASimulatedDeviceAcknowledgesCardsByItselfInDevelopment(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{SimulateDevices: true})
	cardID := b.push(t, "ok")
	b.waitStatus(t, cardID, "delivered")
	ev := b.events(t, EventCardDelivered)
	if len(ev) != 1 || ev[0].Data["cardId"] != cardID || ev[0].Data["deviceId"] == "" {
		t.Fatalf("delivered events %+v", ev)
	}
	var simulated bool
	if err := b.pool.QueryRow(ctxFor(t), `SELECT simulated FROM wearables.devices WHERE id = $1::bigint`, ev[0].Data["deviceId"]).Scan(&simulated); err != nil || !simulated {
		t.Fatalf("the delivering device is simulated=%v (%v)", simulated, err)
	}
}

func TestARealDeviceTakesThePlaceOfTheSimulatedOne(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{SimulateDevices: true})
	b.waitStatus(t, b.push(t, "ok"), "delivered") // paired a simulated device
	stream, deviceID := b.connect(t, device)
	cardID := b.push(t, "ok")
	if got := stream.next(t).GetCard().GetId(); got != cardID {
		t.Fatalf("the real device got %s, want %s", got, cardID)
	}
	if s := b.status(t, cardID); s != "queued" {
		t.Fatalf("the simulated device still acknowledged the card: %s", s)
	}
	stream.close()
	// Gone for good: with the real device away, cards wait for it.
	later := b.push(t, "ok")
	again, sameDevice := b.connect(t, device)
	if sameDevice != deviceID {
		t.Fatalf("reconnecting paired device %s, want %s", sameDevice, deviceID)
	}
	seen := map[string]bool{}
	for len(seen) < 2 {
		seen[again.next(t).GetCard().GetId()] = true
	}
	if !seen[cardID] || !seen[later] {
		t.Fatalf("after reconnecting got %v, want %s and %s", seen, cardID, later)
	}
}

func TestPartnerActionRules(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	queued := b.push(t, "accept", "decline")
	delivered := b.push(t, "accept", "decline")
	if _, err := b.ack(t, device, delivered); err != nil {
		t.Fatal(err)
	}

	t.Run("an action the card does not offer is refused naming action_id", func(t *testing.T) {
		_, err := b.confirm(t, device, delivered, "maybe")
		if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "action_id" {
			t.Fatalf("field %q", e.Field)
		}
	})
	t.Run("another wearer's card does not exist for the caller", func(t *testing.T) {
		_, err := b.confirm(t, otherDevice, delivered, "accept")
		plugintest.WantRefusal(t, err, 404, 100, 33)
	})
	t.Run("a card id that names nothing, whatever its form, is not found", func(t *testing.T) {
		for _, id := range []string{"4999999999", "card-1", "99999999999999999999999"} {
			_, err := b.confirm(t, device, id, "accept")
			plugintest.WantRefusal(t, err, 404, 100, 33)
		}
	})
	t.Run("a card not yet on the device is refused with 2070003", func(t *testing.T) {
		_, err := b.confirm(t, device, queued, "accept")
		plugintest.WantRefusal(t, err, 409, 10, SubcodeNotDelivered)
	})
	if n := len(b.events(t, EventActionConfirmed)); n != 0 {
		t.Fatalf("refused actions emitted %d events", n)
	}
	t.Run("an offered action on a delivered card emits wearables.action.confirmed", func(t *testing.T) {
		res, err := b.confirm(t, device, delivered, "accept")
		if err != nil || res.GetStatus() != "confirmed" || res.GetActionId() != "accept" {
			t.Fatalf("confirm: %v %v", res, err)
		}
		ev := b.events(t, EventActionConfirmed)
		if len(ev) != 1 || ev[0].AppID == nil || *ev[0].AppID != appID || ev[0].Data["cardId"] != delivered ||
			ev[0].Data["actionId"] != "accept" || ev[0].Data["userId"] != wearer {
			t.Fatalf("confirmed events %+v", ev)
		}
	})
	t.Run("the same action again changes nothing and emits nothing", func(t *testing.T) {
		if _, err := b.confirm(t, device, delivered, "accept"); err != nil {
			t.Fatal(err)
		}
		if n := len(b.events(t, EventActionConfirmed)); n != 1 {
			t.Fatalf("%d events", n)
		}
	})
	t.Run("another action after a confirmation is refused with 2070004", func(t *testing.T) {
		_, err := b.confirm(t, device, delivered, "decline")
		plugintest.WantRefusal(t, err, 409, 10, SubcodeAlreadyConfirmed)
	})
}

func TestAnAckOfAnotherWearersCardIsNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	cardID := b.push(t, "ok")
	_, err := b.ack(t, otherDevice, cardID)
	plugintest.WantRefusal(t, err, 404, 100, 33)
	if b.status(t, cardID) != "queued" || len(b.events(t, EventCardDelivered)) != 0 {
		t.Fatal("a refused ack changed the card")
	}
}

func TestAnExpiredCardIsNotSentAndCannotBeAcknowledged(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	lapsed := b.push(t, "ok")
	fresh := b.push(t, "ok")
	// Time passes for one card: its expiry is now behind it.
	if _, err := b.pool.Exec(ctxFor(t), `UPDATE wearables.cards SET expires_at = now() - interval '1 second' WHERE id = $1::bigint`, lapsed); err != nil {
		t.Fatal(err)
	}
	stream, _ := b.connect(t, device)
	if got := stream.next(t).GetCard().GetId(); got != fresh {
		t.Fatalf("the device got %s, want only %s", got, fresh)
	}
	_, err := b.ack(t, device, lapsed)
	plugintest.WantRefusal(t, err, 409, 10, SubcodeCardExpired)
	if n, err := wearablesdb.New(b.pool).ExpireLapsedCards(ctxFor(t)); err != nil || n != 1 {
		t.Fatalf("the sweep expired %d cards (%v), want 1", n, err)
	}
	if b.status(t, lapsed) != "expired" {
		t.Fatal("the sweep did not store the expiry")
	}
}

func TestNewerCardsDisplaceTheOldestBeyondTheBound(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{MaxWaiting: 2})
	oldest := b.push(t, "ok")
	middle := b.push(t, "ok")
	newest := b.push(t, "ok")
	if b.status(t, oldest) != "expired" || b.status(t, middle) != "queued" || b.status(t, newest) != "queued" {
		t.Fatalf("statuses %s %s %s", b.status(t, oldest), b.status(t, middle), b.status(t, newest))
	}
}

func TestTheCardTTLSetsTheExpiry(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	cardID := b.push(t, "ok")
	var ttl time.Duration
	if err := b.pool.QueryRow(ctxFor(t), `SELECT extract(epoch FROM expires_at - created_at)::bigint * 1000000000 FROM wearables.cards WHERE id = $1::bigint`, cardID).Scan(&ttl); err != nil {
		t.Fatal(err)
	}
	if ttl != 24*time.Hour {
		t.Fatalf("a card waits %v, want 24h", ttl)
	}
}

// FuzzPushCard pushes arbitrary card text: whatever the content, the plugin
// answers a card or a refusal naming a field, never an internal error, and
// the text it stores comes back byte for byte.
func FuzzPushCard(f *testing.F) {
	f.Add("Coffee", "Ready ☕", "ok", "OK")
	f.Add("\x00", "body", "a", "b")
	f.Add("title", "\xff\xfe invalid UTF-8", "id", "label")
	f.Add("👩‍👩‍👧", strings.Repeat("é", 1000), "x", "y")
	b := setup(f, Options{})
	f.Fuzz(func(t *testing.T, title, body, actionID, label string) {
		for _, s := range []string{title, body, actionID, label} {
			if !utf8.ValidString(s) {
				return // no client can send it: protobuf and JSON strings are UTF-8
			}
		}
		res, err := plugintest.Call[*wearablesv1.PushCardResponse](ctxFor(t), b.tp, procPush, app,
			&wearablesv1.PushCardRequest{UserId: wearer, Card: &wearablesv1.CardContent{
				Title: title, Body: body, Actions: []*wearablesv1.CardAction{{Id: actionID, Label: label}}}})
		if err != nil {
			wantField(t, err)
			return
		}
		var gotTitle, gotBody string
		if err := b.pool.QueryRow(ctxFor(t), `SELECT title, body FROM wearables.cards WHERE id = $1::bigint`, res.GetCardId()).Scan(&gotTitle, &gotBody); err != nil {
			t.Fatal(err)
		}
		if gotTitle != title || gotBody != body {
			t.Fatalf("stored %q %q, pushed %q %q", gotTitle, gotBody, title, body)
		}
	})
}

// wantField checks err is a 400/code 100 refusal naming a field.
func wantField(t *testing.T, err error) {
	t.Helper()
	var e *sdk.Error
	if !errors.As(err, &e) || e.HTTPStatus != 400 || e.Code != 100 || e.Field == "" || !strings.Contains(e.Message, e.Field) {
		t.Fatalf("got %v, want a refusal naming a field", err)
	}
}

func TestConcurrentPushesOfOneUserAllSucceedWhileTheSimulatedDeviceDelivers(t *testing.T) {
	t.Parallel()
	// A small bound makes every push expire older cards while the simulated
	// device acknowledges others: the paths that once deadlocked.
	b := setup(t, Options{SimulateDevices: true, MaxWaiting: 3})
	errs := make(chan error, 8*40)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 40 {
				_, err := plugintest.Call[*wearablesv1.PushCardResponse](ctxFor(t), b.tp, procPush, app,
					&wearablesv1.PushCardRequest{UserId: wearer, Card: card("ok")})
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a concurrent push failed: %v", err)
		}
	}
}
