package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Issue #32 item 6, through the public API the console's wearables portal
// calls: a team member of the pushing app reads its cards (delivery and
// the wearer's action) and the device they reached; a person not on the
// team, and another app, are refused.
func TestTheWearablesPortalShowsTheTeamItsAppsCardsDeliveriesActionsAndDevices(t *testing.T) {
	t.Parallel()
	w := newWearablesWorld(t)
	app := w.c.App
	cardID := w.push(t, "Coffee is ready")
	w.rcv.waitForData("wearables.card.delivered", "cardId", cardID)
	if res, body := w.send(t, actionPath, w.session, map[string]string{"cardId": cardID, "actionId": "accept"}); res.StatusCode != 200 {
		t.Fatalf("partner action: %d %s", res.StatusCode, body)
	}
	owner := signInAt(t, w.g.URL, w.c.Users["owner"].Username, w.c.Users["owner"].Password)
	read := func(token, node string) (*http.Response, []byte) {
		return do(t, "GET", w.g.URL+"/api/v1/graph?"+url.Values{"node": {node}}.Encode(), nil, map[string]string{"Authorization": "Bearer " + token})
	}

	res, body := read(owner, "app/"+app.ID+"/wearables_cards")
	cards := decode[struct {
		Data []struct {
			ID          string `json:"id"`
			UserID      string `json:"user_id"`
			Status      string `json:"status"`
			DeviceID    string `json:"device_id"`
			ActionID    string `json:"action_id"`
			DeliveredAt string `json:"delivered_at"`
			ConfirmedAt string `json:"confirmed_at"`
		}
	}](t, body).Data
	if res.StatusCode != 200 || len(cards) != 1 {
		t.Fatalf("cards: %d %s", res.StatusCode, body)
	}
	if c := cards[0]; c.ID != cardID || c.UserID != w.consumer || c.Status != "confirmed" || c.DeviceID == "" || c.ActionID != "accept" ||
		c.DeliveredAt == "" || c.ConfirmedAt == "" {
		t.Fatalf("card %+v", c)
	}
	res, body = read(app.APIKey, "app/"+app.ID+"/wearables_devices")
	devices := decode[struct {
		Data []struct {
			ID        string `json:"id"`
			UserID    string `json:"user_id"`
			Simulated bool   `json:"simulated"`
			Cards     int    `json:"cards"`
		}
	}](t, body).Data
	if res.StatusCode != 200 || len(devices) != 1 || devices[0].ID != cards[0].DeviceID || !devices[0].Simulated || devices[0].Cards != 1 {
		t.Fatalf("devices: %d %s", res.StatusCode, body)
	}

	t.Run("a person not on the app's team is refused", func(t *testing.T) {
		for _, node := range []string{"wearables_cards", "wearables_devices"} {
			res, body := read(w.session, "app/"+app.ID+"/"+node)
			wantGraphError(t, res, body, http.StatusForbidden, 200, 2069004)
		}
	})
	t.Run("another app's key is refused", func(t *testing.T) {
		res, body := w.send(t, "/api/v1/graph", owner, map[string]any{"node": "me/apps", "name": "Other glasses app",
			"redirect_uris": []string{"http://127.0.0.1:9/cb"}, "products": []string{"wearables"}})
		other := decode[createdApp](t, body)
		if res.StatusCode != 200 || other.APIKey == "" {
			t.Fatalf("register: %d %s", res.StatusCode, body)
		}
		res, body = read(other.APIKey, "app/"+app.ID+"/wearables_cards")
		wantGraphError(t, res, body, http.StatusForbidden, 200, 2069004)
		res, body = read(other.APIKey, "app/"+other.ID+"/wearables_cards")
		if res.StatusCode != 200 || strings.Contains(string(body), cardID) {
			t.Fatalf("the other app's own cards: %d %s", res.StatusCode, body)
		}
	})
}
