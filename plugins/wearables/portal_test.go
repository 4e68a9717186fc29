package main

import (
	"testing"

	wearablesv1 "github.com/svcplatform/svc/gen/svc/wearables/v1"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

const (
	procAppCards   = "/svc.wearables.v1.WearablesService/ListAppCards"
	procAppDevices = "/svc.wearables.v1.WearablesService/ListAppDevices"
)

// The portal shows an app its own cards through their life (queued,
// delivered to a device, an action confirmed) and the devices they
// reached, and nothing of another app's.
func TestThePortalShowsAnAppItsCardsDeliveriesActionsAndDevicesOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	stream, deviceID := b.connect(t, device)
	confirmed := b.push(t, "ok", "later")
	if got := stream.next(t).GetCard().GetId(); got != confirmed {
		t.Fatalf("streamed %s", got)
	}
	if _, err := b.ack(t, device, confirmed); err != nil {
		t.Fatal(err)
	}
	if _, err := b.confirm(t, device, confirmed, "later"); err != nil {
		t.Fatal(err)
	}
	stream.cancel()
	waiting := b.push(t, "ok")

	key := sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: appID}
	cards, err := plugintest.Call[*wearablesv1.ListAppCardsResponse](ctxFor(t), b.tp, procAppCards, key, &wearablesv1.ListAppCardsRequest{AppId: appID})
	if err != nil || len(cards.GetData()) != 2 {
		t.Fatalf("cards %v %v", cards, err)
	}
	w, c := cards.GetData()[0], cards.GetData()[1]
	if w.GetId() != waiting || w.GetStatus() != "queued" || w.GetDeliveredAt() != "" || w.GetDeviceId() != "" {
		t.Errorf("the waiting card %v", w)
	}
	if c.GetId() != confirmed || c.GetStatus() != "confirmed" || c.GetDeviceId() != deviceID || c.GetActionId() != "later" ||
		c.GetDeliveredAt() == "" || c.GetConfirmedAt() == "" || len(c.GetActions()) != 2 || c.GetUserId() != wearer {
		t.Errorf("the confirmed card %v", c)
	}
	devices, err := plugintest.Call[*wearablesv1.ListAppDevicesResponse](ctxFor(t), b.tp, procAppDevices, key, &wearablesv1.ListAppDevicesRequest{AppId: appID})
	if err != nil || len(devices.GetData()) != 1 || devices.GetData()[0].GetId() != deviceID || devices.GetData()[0].GetCards() != 1 ||
		devices.GetData()[0].GetSimulated() {
		t.Fatalf("devices %v %v", devices, err)
	}

	other := "2000000002"
	otherKey := sdk.Principal{Kind: sdk.TokenKindAppKey, AppID: other}
	cards, err = plugintest.Call[*wearablesv1.ListAppCardsResponse](ctxFor(t), b.tp, procAppCards, otherKey, &wearablesv1.ListAppCardsRequest{AppId: other})
	if err != nil || len(cards.GetData()) != 0 {
		t.Fatalf("another app sees cards %v %v", cards, err)
	}
	devices, err = plugintest.Call[*wearablesv1.ListAppDevicesResponse](ctxFor(t), b.tp, procAppDevices, otherKey, &wearablesv1.ListAppDevicesRequest{AppId: other})
	if err != nil || len(devices.GetData()) != 0 {
		t.Fatalf("another app sees devices %v %v", devices, err)
	}
}
