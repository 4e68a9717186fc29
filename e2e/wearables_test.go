package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	wearablesv1 "github.com/svcplatform/svc/gen/svc/wearables/v1"
	"github.com/svcplatform/svc/gen/svc/wearables/v1/wearablesv1connect"
	"github.com/svcplatform/svc/internal/gatewaytest"
)

// wearablesWorld is a running gateway (development seed on) whose app
// subscribed to the wearables events, with the consumer's credentials.
type wearablesWorld struct {
	g        *gatewaytest.Gateway
	c        gatewaytest.Credentials
	rcv      *hookReceiver
	pusher   string // the consumer's user token with wearables:push
	session  string // the consumer's session: the glasses app
	consumer string // the consumer's user id
}

func newWearablesWorld(t *testing.T) *wearablesWorld {
	t.Helper()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	w := &wearablesWorld{g: g, c: g.Credentials(t)}
	w.consumer = w.c.Users["consumer"].ID
	w.pusher = g.UserToken(t, "consumer", "wearables:push")
	w.session = signInAt(t, g.URL, w.c.Users["consumer"].Username, w.c.Users["consumer"].Password)
	w.rcv = newHookReceiver(t, w.c.App.ClientSecret)
	body, _ := json.Marshal(map[string]any{"node": "app/" + w.c.App.ID + "/subscriptions",
		"callback_url": w.rcv.srv.URL + "/hook", "verify_token": hookVerifyToken,
		"events": []string{"wearables.card.delivered", "wearables.action.confirmed"}})
	res, b := do(t, "POST", g.URL+"/api/v1/graph", strings.NewReader(string(body)),
		map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + w.c.App.APIKey})
	if res.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", res.StatusCode, b)
	}
	return w
}

func (w *wearablesWorld) send(t *testing.T, path, token string, body any) (*http.Response, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	h := map[string]string{"Content-Type": "application/json"}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return do(t, "POST", w.g.URL+path, strings.NewReader(string(b)), h)
}

const pushPath = "/api/v1/platform/wearables/push"
const actionPath = "/api/mobile/glasses/partner/action"

func testCard(title string, actions ...string) map[string]any {
	list := []map[string]string{}
	for _, a := range actions {
		list = append(list, map[string]string{"id": a, "label": strings.ToUpper(a)})
	}
	return map[string]any{"title": title, "body": "Your order is ready at the counter.", "actions": list}
}

// push sends a card as the consumer's app token and returns its id.
func (w *wearablesWorld) push(t *testing.T, title string) string {
	t.Helper()
	res, body := w.send(t, pushPath, w.pusher, map[string]any{"userId": w.consumer, "card": testCard(title, "accept", "decline")})
	out := decode[struct{ CardID, Status string }](t, body)
	if res.StatusCode != http.StatusAccepted || out.CardID == "" || out.Status != "queued" {
		t.Fatalf("push: %d %s", res.StatusCode, body)
	}
	return out.CardID
}

func TestAWearablesPushReachesTheDeviceAndTheAppsWebhook(t *testing.T) {
	t.Parallel()
	w := newWearablesWorld(t)
	app := w.c.App

	// With no glasses connected, the consumer's simulated device takes the
	// card and the app's webhook hears of it, signed.
	simulated := w.push(t, "Coffee is ready")
	got := w.rcv.waitForData("wearables.card.delivered", "cardId", simulated)
	if got.body.AppID != app.ID || got.body.Data["userId"] != w.consumer || got.body.Data["deviceId"] == "" || got.body.PageID != nil {
		t.Fatalf("delivered event %+v", got.body)
	}
	simulatedDevice := got.body.Data["deviceId"]

	// The wearer takes an action from the glasses app's session.
	res, body := w.send(t, actionPath, w.session, map[string]string{"cardId": simulated, "actionId": "accept"})
	if res.StatusCode != 200 || !strings.Contains(string(body), `"status":"confirmed"`) {
		t.Fatalf("partner action: %d %s", res.StatusCode, body)
	}
	confirmed := w.rcv.waitForData("wearables.action.confirmed", "cardId", simulated)
	if confirmed.body.AppID != app.ID || confirmed.body.Data["actionId"] != "accept" || confirmed.body.Data["userId"] != w.consumer {
		t.Fatalf("confirmed event %+v", confirmed.body)
	}

	// A real device connects over Connect streaming and takes the
	// simulated device's place.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := wearablesv1connect.NewDeviceServiceClient(http.DefaultClient, w.g.URL)
	req := connect.NewRequest(&wearablesv1.StreamCardsRequest{})
	req.Header().Set("Authorization", "Bearer "+w.session)
	stream, err := client.StreamCards(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if !stream.Receive() {
		t.Fatalf("stream: %v", stream.Err())
	}
	deviceID := stream.Msg().GetConnected().GetDeviceId()
	if deviceID == "" || deviceID == simulatedDevice {
		t.Fatalf("connected as %q (the simulated device was %s)", deviceID, simulatedDevice)
	}
	cardID := w.push(t, "Your table is ready")
	if !stream.Receive() {
		t.Fatalf("stream: %v", stream.Err())
	}
	card := stream.Msg().GetCard()
	if card.GetId() != cardID || card.GetTitle() != "Your table is ready" || len(card.GetActions()) != 2 || card.GetAppId() != app.ID {
		t.Fatalf("streamed %v", stream.Msg())
	}
	ack := connect.NewRequest(&wearablesv1.AckCardRequest{CardId: cardID})
	ack.Header().Set("Authorization", "Bearer "+w.session)
	acked, err := client.AckCard(ctx, ack)
	if err != nil || acked.Msg.GetStatus() != "delivered" || acked.Msg.GetDeviceId() != deviceID {
		t.Fatalf("ack: %v %v", acked, err)
	}
	delivered := w.rcv.waitForData("wearables.card.delivered", "cardId", cardID)
	if delivered.body.Data["deviceId"] != deviceID || delivered.body.AppID != app.ID {
		t.Fatalf("delivered event %+v", delivered.body)
	}
	cancel()
	stream.Close()

	// Cards pushed while the real device is away wait for it.
	waiting := w.push(t, "While you were away")
	rest := connect.NewRequest(&wearablesv1.StreamCardsRequest{})
	rest.Header().Set("Authorization", "Bearer "+w.session)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel2()
	again, err := client.StreamCards(ctx2, rest)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if !again.Receive() || again.Msg().GetConnected().GetDeviceId() != deviceID {
		t.Fatalf("reconnect: %v %v", again.Msg(), again.Err())
	}
	if !again.Receive() || again.Msg().GetCard().GetId() != waiting {
		t.Fatalf("after reconnecting: %v %v, want card %s", again.Msg(), again.Err(), waiting)
	}
	// The REST form of the acknowledgement, with no body.
	res, body = do(t, "POST", w.g.URL+"/api/mobile/glasses/cards/"+waiting+"/ack", nil, map[string]string{"Authorization": "Bearer " + w.session})
	if res.StatusCode != 200 || !strings.Contains(string(body), `"deviceId":"`+deviceID+`"`) {
		t.Fatalf("REST ack: %d %s", res.StatusCode, body)
	}
	w.rcv.waitForData("wearables.card.delivered", "cardId", waiting)

	// Stopping the gateway ends the open stream (the stop does not wait
	// for it), telling the device to reconnect.
	w.g.Stop(t)
	if again.Receive() {
		t.Fatalf("after the stop the stream sent %v", again.Msg())
	}
	if code := connect.CodeOf(again.Err()); code != connect.CodeUnavailable {
		t.Fatalf("the stream ended with %v, want unavailable", again.Err())
	}
}

func TestWearablesRefusalsFollowTheContract(t *testing.T) {
	t.Parallel()
	w := newWearablesWorld(t)
	owner := w.c.Users["owner"]
	noScope := w.g.UserToken(t, "consumer", "public_profile")
	ownerSession := signInAt(t, w.g.URL, owner.Username, owner.Password)
	card := w.push(t, "Refusals")
	w.rcv.waitForData("wearables.card.delivered", "cardId", card)

	valid := func() map[string]any { return map[string]any{"userId": w.consumer, "card": testCard("Hi", "ok")} }
	with := func(change func(m map[string]any)) map[string]any { m := valid(); change(m); return m }
	cases := []struct {
		rule                  string
		path, token           string
		body                  any
		status, code, subcode int
		names                 string // the field the message must name
	}{
		{"a push without a token is refused with 104", pushPath, "", valid(), 401, 104, 0, ""},
		{"a push without wearables:push is refused with 2069002", pushPath, noScope, valid(), 403, 10, 2069002, ""},
		{"a push with the app key is refused: a user token is needed", pushPath, w.c.App.APIKey, valid(), 403, 200, 2069001, ""},
		{"a push to another user is refused with 2070001", pushPath, w.pusher,
			with(func(m map[string]any) { m["userId"] = owner.ID }), 403, 200, 2070001, "user_id"},
		{"a title over 100 code points is refused naming it", pushPath, w.pusher,
			with(func(m map[string]any) { m["card"] = testCard(strings.Repeat("é", 101), "ok") }), 400, 100, 0, "card.title"},
		{"a card without actions is refused naming them", pushPath, w.pusher,
			with(func(m map[string]any) { m["card"] = testCard("Hi") }), 400, 100, 0, "card.actions"},
		{"a card with five actions is refused naming them", pushPath, w.pusher,
			with(func(m map[string]any) { m["card"] = testCard("Hi", "a", "b", "c", "d", "e") }), 400, 100, 0, "card.actions"},
		{"a card with duplicate action ids is refused naming them", pushPath, w.pusher,
			with(func(m map[string]any) { m["card"] = testCard("Hi", "a", "a") }), 400, 100, 0, "card.actions"},
		{"an unknown field is refused naming it", pushPath, w.pusher,
			with(func(m map[string]any) { m["priority"] = "high" }), 400, 100, 0, "priority"},
		{"a push with no card is refused naming it", pushPath, w.pusher,
			map[string]any{"userId": w.consumer}, 400, 100, 0, "card"},
		{"a partner action without a session is refused with 104", actionPath, "",
			map[string]string{"cardId": card, "actionId": "accept"}, 401, 104, 0, ""},
		{"a partner action with an app token is refused: a session is needed", actionPath, w.pusher,
			map[string]string{"cardId": card, "actionId": "accept"}, 403, 200, 2069001, ""},
		{"an action the card does not offer is refused naming action_id", actionPath, w.session,
			map[string]string{"cardId": card, "actionId": "maybe"}, 400, 100, 0, "action_id"},
		{"another wearer's card does not exist", actionPath, ownerSession,
			map[string]string{"cardId": card, "actionId": "accept"}, 404, 100, 33, ""},
		{"a card id that names nothing does not exist", actionPath, w.session,
			map[string]string{"cardId": "not-a-card", "actionId": "accept"}, 404, 100, 33, ""},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			res, body := w.send(t, c.path, c.token, c.body)
			e := wantGraphError(t, res, body, c.status, c.code, c.subcode)
			if c.names != "" && !strings.Contains(e.Error.Message, c.names) {
				t.Fatalf("message %q does not name %s", e.Error.Message, c.names)
			}
		})
	}
	t.Run("the catalog and parity are generated from the loaded plugins' manifests", func(t *testing.T) {
		res, body := do(t, "GET", w.g.URL+"/api/developers/platform/catalog", nil, nil)
		catalog := decode[struct {
			Data []struct {
				Name, Kind, Version string
				Nodes, Events       []string
			}
		}](t, body)
		found := map[string]bool{}
		for _, e := range catalog.Data {
			found[e.Kind+" "+e.Name] = true
			switch e.Name {
			case "wearables":
				if e.Version == "" || strings.Join(e.Events, ",") != "wearables.card.delivered,wearables.action.confirmed" {
					t.Errorf("wearables entry %+v", e)
				}
			case "book":
				if !strings.Contains(strings.Join(e.Nodes, ","), "POST page/{page_id}/posts") || strings.Join(e.Events, ",") != "book.post.created" {
					t.Errorf("book entry %+v", e)
				}
			}
		}
		if res.StatusCode != 200 || !found["plugin wearables"] || !found["plugin book"] || !found["plugin core"] || !found["sdk svc plugin SDK"] || !found["sdk svc Go API client"] || !found["sdk svc TypeScript client"] {
			t.Fatalf("catalog: %d %s", res.StatusCode, body)
		}
		res, body = do(t, "GET", w.g.URL+"/api/v1/business/parity", nil, nil)
		parity := decode[struct {
			Data []struct{ Product, Surface, Name, Status string }
		}](t, body)
		if res.StatusCode != 200 {
			t.Fatalf("parity: %d %s", res.StatusCode, body)
		}
		want := map[string]bool{
			"wearables rest POST /api/v1/platform/wearables/push":       false,
			"wearables rest POST /api/mobile/glasses/partner/action":    false,
			"wearables rpc /svc.wearables.v1.DeviceService/StreamCards": false,
			"wearables event wearables.card.delivered":                  false,
			"book graph GET page/{page_id}/posts":                       false,
		}
		for _, e := range parity.Data {
			key := e.Product + " " + e.Surface + " " + e.Name
			if _, ok := want[key]; ok {
				want[key] = e.Status == "serving"
			}
		}
		for key, ok := range want {
			if !ok {
				t.Errorf("parity lacks %q serving: %s", key, body)
			}
		}
	})

	t.Run("the chat app lists the camera lenses with a session only", func(t *testing.T) {
		res, body := do(t, "GET", w.g.URL+"/api/mobile/lenses", nil, map[string]string{"Authorization": "Bearer " + w.session})
		lenses := decode[struct {
			Data []struct{ ID, Name, IconURL string }
		}](t, body)
		if res.StatusCode != 200 || len(lenses.Data) != 3 || lenses.Data[0].Name != "Sunny" || !strings.Contains(string(body), `"iconUrl":"data:image/svg+xml,`) {
			t.Fatalf("lenses: %d %s", res.StatusCode, body)
		}
		res, body = do(t, "GET", w.g.URL+"/api/mobile/lenses", nil, nil)
		wantGraphError(t, res, body, 401, 104, 0)
		res, body = do(t, "GET", w.g.URL+"/api/mobile/lenses", nil, map[string]string{"Authorization": "Bearer " + w.pusher})
		wantGraphError(t, res, body, 403, 200, 2069001)
	})

	// Nothing refused reached the app.
	res, body := w.send(t, actionPath, w.session, map[string]string{"cardId": card, "actionId": "accept"})
	if res.StatusCode != 200 {
		t.Fatalf("the valid action after the refusals: %d %s", res.StatusCode, body)
	}
	w.rcv.waitForData("wearables.action.confirmed", "cardId", card)
	w.rcv.mu.Lock()
	defer w.rcv.mu.Unlock()
	for _, d := range w.rcv.got {
		if d.body.Type == "wearables.action.confirmed" && d.body.Data["actionId"] != "accept" {
			t.Fatalf("a refused action was delivered: %+v", d.body)
		}
	}
}
