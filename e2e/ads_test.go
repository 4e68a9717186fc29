package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// adsWorld is the chat world with user tokens for the ads API: the owner's
// (whose business has the seeded sandbox ad account), the consumer's (a
// business of their own) and one without ads_management.
type adsWorld struct {
	*chatWorld
	advertiser string
	other      string
	readOnly   string
	account    string
}

func newAdsWorld(t *testing.T) *adsWorld {
	t.Helper()
	w := &adsWorld{chatWorld: newChatWorld(t)}
	w.advertiser = w.g.UserToken(t, "owner", "ads_read", "ads_management")
	w.other = w.g.UserToken(t, "consumer", "ads_read", "ads_management")
	w.readOnly = w.g.UserToken(t, "owner", "ads_read")
	accounts := w.ok(t, "GET", w.advertiser, "me/adaccounts", nil)["data"].([]any)
	if len(accounts) == 0 {
		t.Fatal("the owner has no sandbox ad account")
	}
	w.account = accounts[0].(map[string]any)["id"].(string)
	return w
}

// call sends one Graph call with a JSON body (POST) or query (GET).
func (w *adsWorld) call(t *testing.T, method, token, node string, params map[string]any) (*http.Response, []byte) {
	t.Helper()
	if method == "POST" {
		body := map[string]any{"node": node}
		for k, v := range params {
			body[k] = v
		}
		return w.post(t, token, body, nil)
	}
	q := map[string][]string{"node": {node}}
	return w.get(t, token, q)
}

func (w *adsWorld) ok(t *testing.T, method, token, node string, params map[string]any) map[string]any {
	t.Helper()
	res, body := w.call(t, method, token, node, params)
	if res.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", method, node, res.StatusCode, body)
	}
	return decode[map[string]any](t, body)
}

// sponsored is the sponsoredAd of a session's chats list.
func (w *adsWorld) sponsored(t *testing.T, session string) map[string]any {
	t.Helper()
	res, body := do(t, "GET", w.g.URL+"/api/mobile/chat?view=list", nil, map[string]string{"Authorization": "Bearer " + session})
	if res.StatusCode != 200 {
		t.Fatalf("chats list: %d %s", res.StatusCode, body)
	}
	ad, _ := decode[map[string]any](t, body)["sponsoredAd"].(map[string]any)
	return ad
}

func (w *adsWorld) insights(t *testing.T, ad string) map[string]string {
	t.Helper()
	data := w.ok(t, "GET", w.advertiser, "ad/"+ad+"/insights", nil)["data"].([]any)
	out := map[string]string{}
	for k, v := range data[0].(map[string]any) {
		out[k] = fmt.Sprint(v)
	}
	return out
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// An advertiser plays the whole loop through the public API: the seeded
// sponsored item is a campaign it can pause; a new ad for a custom
// audience uploaded by hashes reaches the chats list of the person in it
// and no one else; every serve is an impression, a click is counted, a
// conversion by the clicker is attributed once however often its event_id
// is sent.
func TestAnAdIsServedToItsAudienceAndItsInsightsMoveWithServesClicksAndConversions(t *testing.T) {
	t.Parallel()
	w := newAdsWorld(t)

	// 1. The seeded sponsored item is the owner's campaign, made through
	// the API: served to the consumer until the owner pauses it.
	if ad := w.sponsored(t, w.consumer); ad == nil || ad["title"] != "Demo Coffee beans, 20% off" || ad["pageId"] != w.c.Page.ID {
		t.Fatalf("the seeded sponsored item is %v", ad)
	}
	campaigns := w.ok(t, "GET", w.advertiser, "ad_account/"+w.account+"/campaigns", nil)["data"].([]any)
	if len(campaigns) != 1 || campaigns[0].(map[string]any)["status"] != "ACTIVE" {
		t.Fatalf("campaigns %v", campaigns)
	}
	seeded := campaigns[0].(map[string]any)["id"].(string)
	w.ok(t, "POST", w.advertiser, "campaign/"+seeded, map[string]any{"status": "PAUSED"})
	if ad := w.sponsored(t, w.consumer); ad != nil {
		t.Fatalf("a paused campaign is served: %v", ad)
	}

	// 2. A custom audience from hashes: the consumer's user id matches; an
	// email hash matches no one (people have no email on the platform).
	aud := w.ok(t, "POST", w.advertiser, "ad_account/"+w.account+"/customaudiences", map[string]any{"name": "Regulars"})["id"].(string)
	up := w.ok(t, "POST", w.advertiser, "customaudience/"+aud+"/users", map[string]any{"schema": "USER_ID",
		"data": []string{w.consumerID, "not a user id"}})
	if up["num_received"] != "2" && up["num_received"] != float64(2) || fmt.Sprint(up["num_invalid_entries"]) != "1" {
		t.Fatalf("upload %v", up)
	}
	w.ok(t, "POST", w.advertiser, "customaudience/"+aud+"/users", map[string]any{"schema": "EMAIL_SHA256",
		"data": []string{sha256Hex("casey@example.com")}})
	if got := w.ok(t, "GET", w.advertiser, "customaudience/"+aud, nil); fmt.Sprint(got["approximate_count"]) != "1" {
		t.Fatalf("approximate_count on a sandbox account: %v", got)
	}

	// 3. A campaign and its ad for the audience.
	campaign := w.ok(t, "POST", w.advertiser, "ad_account/"+w.account+"/campaigns", map[string]any{"name": "Regulars",
		"objective": "TRAFFIC", "status": "ACTIVE", "daily_budget": 10_000})["id"].(string)
	ad := w.ok(t, "POST", w.advertiser, "campaign/"+campaign+"/ads", map[string]any{"name": "Loyalty", "audience_id": aud,
		"creative": map[string]any{"title": "Your tenth cup is on us", "body": "For our regulars.", "link_url": "https://example.com/loyalty", "page_id": w.c.Page.ID}})["id"].(string)

	// 4. Served to the consumer, three times; not to the owner.
	for range 3 {
		if got := w.sponsored(t, w.consumer); got == nil || got["adId"] != ad || got["title"] != "Your tenth cup is on us" || got["linkUrl"] != "https://example.com/loyalty" {
			t.Fatalf("the consumer's sponsored item is %v", got)
		}
	}
	if got := w.sponsored(t, w.owner); got != nil {
		t.Fatalf("the owner, outside the audience, is served %v", got)
	}
	if in := w.insights(t, ad); in["impressions"] != "3" || in["clicks"] != "0" || in["conversions"] != "0" {
		t.Fatalf("insights after three serves %v", in)
	}

	// 5. The consumer clicks; the owner cannot click an ad not for them.
	click := func(session string) (*http.Response, []byte) {
		return do(t, "POST", w.g.URL+"/api/mobile/ads/"+ad+"/click", strings.NewReader("{}"),
			map[string]string{"Authorization": "Bearer " + session, "Content-Type": "application/json"})
	}
	if res, body := click(w.consumer); res.StatusCode != 200 {
		t.Fatalf("click: %d %s", res.StatusCode, body)
	}
	res, body := click(w.owner)
	wantGraphError(t, res, body, 404, 100, 33)
	in := w.insights(t, ad)
	spend, _ := strconv.ParseFloat(in["spend"], 64)
	if in["clicks"] != "1" || !strings.HasPrefix(in["ctr"], "33.33") || spend <= 0 || spend > 0.02 {
		t.Fatalf("insights after a click %v", in)
	}

	// 6. Conversions: the clicker's purchase, sent twice with one
	// event_id, counts once; the owner's (no click) counts for no ad.
	now := time.Now().Unix()
	purchase := func(id, userID string) map[string]any {
		return map[string]any{"event_name": "Purchase", "event_time": now, "event_id": id, "action_source": "website",
			"user_data": map[string]any{"external_id": []string{sha256Hex(userID)}}, "custom_data": map[string]any{"value": 4.5, "currency": "USD"}}
	}
	for range 2 {
		got := w.ok(t, "POST", w.advertiser, "ad_account/"+w.account+"/events", map[string]any{"data": []any{
			purchase("order-77", w.consumerID), purchase("order-78", w.c.Users["owner"].ID)}})
		if fmt.Sprint(got["events_received"]) != "2" {
			t.Fatalf("events %v", got)
		}
	}
	if in := w.insights(t, ad); in["conversions"] != "1" || in["impressions"] != "3" {
		t.Fatalf("insights after conversions %v", in)
	}
}

// The ads API refuses what the contract refuses: another business's ad
// account, a token without the scope, batches over their limits (naming
// the field).
func TestTheAdsAPIRefusesOtherBusinessesMissingScopesAndOversizedBatches(t *testing.T) {
	t.Parallel()
	w := newAdsWorld(t)
	campaign := map[string]any{"name": "X", "objective": "LEADS", "daily_budget": 500}
	res, body := w.call(t, "POST", w.other, "ad_account/"+w.account+"/campaigns", campaign)
	wantGraphError(t, res, body, 404, 100, 33)
	res, body = w.call(t, "POST", w.readOnly, "ad_account/"+w.account+"/campaigns", campaign)
	wantGraphError(t, res, body, 403, 10, 2069002)
	res, body = w.call(t, "POST", w.advertiser, "ad_account/"+w.account+"/campaigns", map[string]any{"name": "X", "objective": "SALES", "daily_budget": 500})
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "objective") {
		t.Fatalf("refusal %s", body)
	}

	aud := w.ok(t, "POST", w.advertiser, "ad_account/"+w.account+"/customaudiences", map[string]any{"name": "Big"})["id"].(string)
	many := make([]string, 10_001)
	for i := range many {
		many[i] = strconv.Itoa(1_000_000 + i)
	}
	res, body = w.call(t, "POST", w.advertiser, "customaudience/"+aud+"/users", map[string]any{"schema": "USER_ID", "data": many})
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "data") {
		t.Fatalf("refusal %s", body)
	}
	res, body = w.call(t, "GET", w.other, "customaudience/"+aud, nil)
	wantGraphError(t, res, body, 404, 100, 33)

	ev := map[string]any{"event_name": "Lead", "event_time": time.Now().Unix(), "action_source": "chat",
		"user_data": map[string]any{"external_id": []string{sha256Hex("1")}}}
	events := make([]any, 1001)
	for i := range events {
		events[i] = ev
	}
	res, body = w.call(t, "POST", w.advertiser, "ad_account/"+w.account+"/events", map[string]any{"data": events})
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "data") {
		t.Fatalf("refusal %s", body)
	}
	res, body = w.call(t, "POST", w.other, "ad_account/"+w.account+"/events", map[string]any{"data": events[:1]})
	wantGraphError(t, res, body, 404, 100, 33)
	res, body = w.call(t, "POST", w.readOnly, "ad_account/"+w.account+"/events", map[string]any{"data": events[:1]})
	wantGraphError(t, res, body, 403, 10, 2069002)
	// Every node: no token 401; an id that names nothing 404 (the same
	// answer as another business's object); writes need ads_management.
	for _, op := range []struct {
		method, node string
		params       map[string]any
	}{
		{"GET", "ad_account/%s/campaigns", nil},
		{"POST", "ad_account/%s/campaigns", campaign},
		{"GET", "campaign/%s/ads", nil},
		{"POST", "campaign/%s/ads", map[string]any{"name": "A", "creative": map[string]any{"title": "T", "link_url": "https://example.com"}}},
		{"POST", "campaign/%s", map[string]any{"status": "PAUSED"}},
		{"POST", "ad/%s", map[string]any{"status": "PAUSED"}},
		{"GET", "ad/%s/insights", nil},
		{"POST", "ad_account/%s/customaudiences", map[string]any{"name": "A"}},
		{"GET", "customaudience/%s", nil},
		{"POST", "customaudience/%s/users", map[string]any{"schema": "USER_ID", "data": []string{"1"}}},
		{"POST", "ad_account/%s/events", map[string]any{"data": events[:1]}},
	} {
		node := fmt.Sprintf(op.node, "8999999999")
		res, body := w.call(t, op.method, "", node, op.params)
		wantGraphError(t, res, body, 401, 104, 0)
		res, body = w.call(t, op.method, w.advertiser, node, op.params)
		wantGraphError(t, res, body, 404, 100, 33)
		if op.method == "POST" {
			res, body = w.call(t, op.method, w.readOnly, node, op.params)
			wantGraphError(t, res, body, 403, 10, 2069002)
		}
	}
	res, body = do(t, "POST", w.g.URL+"/api/mobile/ads/8999999999/click", strings.NewReader("{}"),
		map[string]string{"Authorization": "Bearer " + w.consumer, "Content-Type": "application/json"})
	wantGraphError(t, res, body, 404, 100, 33)
	res, body = do(t, "POST", w.g.URL+"/api/mobile/ads/8999999999/click", strings.NewReader("{}"),
		map[string]string{"Authorization": "Bearer " + w.advertiser, "Content-Type": "application/json"})
	if res.StatusCode != 403 {
		t.Fatalf("a user token clicking: %d %s", res.StatusCode, body)
	}
	// A session cannot ask the serve for someone else: it serves the
	// signed-in person only, and an app's token cannot call it at all.
	res, body = do(t, "POST", w.g.URL+"/svc.ads.v1.AdsService/ServeSponsoredAd", strings.NewReader("{}"),
		map[string]string{"Authorization": "Bearer " + w.advertiser, "Content-Type": "application/json", "Connect-Protocol-Version": "1"})
	if res.StatusCode != 403 {
		t.Fatalf("a user token serving an ad: %d %s", res.StatusCode, body)
	}
}
