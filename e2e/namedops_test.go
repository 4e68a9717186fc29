package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// namedWorld is a running gateway with user tokens for the named operations
// of CONTRACT §12 served by the ads, commerce, extmsg and social plugins:
// the seeded Page owner (admin of the seeded business) and the consumer,
// each with every scope those operations use, one with no such scope, and
// first-party sessions of the owner and the staff user.
type namedWorld struct {
	*socialWorld
	owner, consumer, none string
	ownerSession          string
	staffSession          string
}

var namedScopes = []string{"ads_read", "ads_management", "leads_retrieval", "leads_submission", "commerce_checkout", "extmsg_business_management",
	"threads_basic", "threads_content_publish", "pages:read", "pages:manage"}

func newNamedWorld(t *testing.T) *namedWorld {
	t.Helper()
	sw := newSocialWorld(t)
	return &namedWorld{socialWorld: sw,
		owner:        sw.g.UserToken(t, "owner", namedScopes...),
		consumer:     sw.g.UserToken(t, "consumer", namedScopes...),
		none:         sw.g.UserToken(t, "consumer", "public_profile"),
		ownerSession: signIn(t, sw.graphWorld, "owner"),
		staffSession: signIn(t, sw.graphWorld, "staff"),
	}
}

// rest calls a REST path with a bearer credential ("" for none) and an
// optional JSON body.
func (w *namedWorld) rest(t *testing.T, method, path, token, body string) (*http.Response, []byte) {
	t.Helper()
	h := map[string]string{}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	if body == "" {
		return do(t, method, w.g.URL+path, nil, h)
	}
	h["Content-Type"] = "application/json"
	return do(t, method, w.g.URL+path, strings.NewReader(body), h)
}

func (w *namedWorld) restOK(t *testing.T, method, path, token, body string) map[string]any {
	t.Helper()
	res, out := w.rest(t, method, path, token, body)
	if res.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, out)
	}
	return decode[map[string]any](t, out)
}

// fixtures makes one of everything the table reads: the owner's sandbox ad
// account (provisioned on first look in development), a lead form, a reel
// and the consumer's messaging account connection.
func (w *namedWorld) fixtures(t *testing.T) (account, form, reel, messaging string) {
	t.Helper()
	accounts := w.ok(t, "GET", w.owner, "me/adaccounts", nil)["data"].([]any)
	if len(accounts) != 1 {
		t.Fatalf("me/adaccounts of the development business: %v", accounts)
	}
	acct := accounts[0].(map[string]any)
	if acct["business_id"] != "bp_"+w.c.Users["owner"].ID || acct["is_sandbox"] != true {
		t.Fatalf("the development business's ad account %v", acct)
	}
	account = acct["id"].(string)
	form = w.ok(t, "POST", w.owner, "ad_account/"+account+"/leadgen_forms", map[string]any{"name": "Tastings",
		"privacy_policy_url": "https://demo.example.com/privacy",
		"questions":          []any{map[string]any{"type": "FULL_NAME"}, map[string]any{"type": "EMAIL"}}})["id"].(string)
	video := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "video/mp4")
		rw.Header().Set("Content-Length", "10")
	}))
	t.Cleanup(video.Close)
	reel = w.ok(t, "POST", w.owner, "page/"+w.c.Page.ID+"/reels", map[string]any{"video_url": video.URL})["id"].(string)
	messaging = w.restOK(t, "POST", "/api/v1/business/extmsg/embedded-signup", w.owner,
		fmt.Sprintf(`{"businessId":"%s","appId":"%s","displayName":"Demo Coffee"}`, w.c.Business.ID, w.c.App.ID))["accountId"].(string)
	return account, form, reel, messaging
}

func TestNamedOperationsAnswerTheirShapeAndTheirDocumentedRefusals(t *testing.T) {
	t.Parallel()
	w := newNamedWorld(t)
	account, form, reel, messaging := w.fixtures(t)
	const unknown = "no-such-object"
	lead := map[string]any{"field_data": []any{map[string]any{"name": "full_name", "values": []string{"Ada"}},
		map[string]any{"name": "email", "values": []string{"ada@example.com"}}}}
	cart := map[string]any{"items": []any{map[string]any{"product_id": "7100000001", "quantity": 2}}}

	graphOps := []struct {
		method, node string
		params       map[string]any
		keys         []string // the success answer's keys
		scoped       bool     // refused 2069002 to a token without the operation's scope
		unknownNode  string   // the node with an id that names nothing; "" when none
	}{
		{"GET", "me/adaccounts", nil, []string{"data", "paging"}, true, ""},
		{"POST", "me/adaccounts", map[string]any{"name": "Second"}, []string{"id"}, true, ""},
		{"GET", "ad_account/" + account, nil, []string{"business_id", "currency", "id", "is_sandbox", "name"}, true, "ad_account/" + unknown},
		{"POST", "ad_account/" + account + "/lead_campaigns", map[string]any{"name": "Spring", "leadgen_form_id": form}, []string{"id"}, true, "ad_account/" + unknown + "/lead_campaigns"},
		{"GET", "ad_account/" + account + "/lead_campaigns", nil, []string{"data", "paging"}, true, "ad_account/" + unknown + "/lead_campaigns"},
		{"POST", "ad_account/" + account + "/leadgen_forms", map[string]any{"name": "F", "privacy_policy_url": "https://demo.example.com/p",
			"questions": []any{map[string]any{"type": "PHONE"}}}, []string{"id"}, true, "ad_account/" + unknown + "/leadgen_forms"},
		{"GET", "ad_account/" + account + "/leadgen_forms", nil, []string{"data", "paging"}, true, "ad_account/" + unknown + "/leadgen_forms"},
		{"GET", "leadgen_form/" + form, nil, []string{"ad_account_id", "id", "name", "privacy_policy_url", "questions", "status"}, false, "leadgen_form/" + unknown},
		{"GET", "leadgen_form/" + form + "/leads", nil, []string{"data", "paging"}, true, "leadgen_form/" + unknown + "/leads"},
		{"GET", "maison/7000000001", nil, []string{"currency", "id", "name"}, false, "maison/" + unknown},
		{"GET", "maison/7000000001/products", nil, []string{"data", "paging"}, false, "maison/" + unknown + "/products"},
		{"POST", "maison/7000000001/checkout", cart, []string{"order_id", "status", "total"}, true, "maison/" + unknown + "/checkout"},
		{"POST", "reel/" + reel + "/likes", nil, []string{"success"}, true, "reel/" + unknown + "/likes"},
		{"POST", "reel/" + reel + "/replies", map[string]any{"text": "Lovely"}, []string{"id"}, true, "reel/" + unknown + "/replies"},
		{"GET", "reel/" + reel + "/replies", nil, []string{"data", "paging"}, true, "reel/" + unknown + "/replies"},
	}
	for _, op := range graphOps {
		t.Run(op.method+" "+op.node, func(t *testing.T) {
			out := w.ok(t, op.method, w.owner, op.node, op.params)
			for _, k := range op.keys {
				if _, ok := out[k]; !ok {
					t.Fatalf("answer %v lacks %q", out, k)
				}
			}
			res, body := w.graph(t, op.method, "", op.node, op.params)
			wantGraphError(t, res, body, 401, 104, 0)
			res, body = w.graph(t, op.method, "not-a-token", op.node, op.params)
			wantGraphError(t, res, body, 401, 190, 467)
			if op.scoped {
				res, body = w.graph(t, op.method, w.none, op.node, op.params)
				wantGraphError(t, res, body, 403, 10, 2069002)
			}
			if op.unknownNode != "" {
				res, body = w.graph(t, op.method, w.owner, op.unknownNode, op.params)
				wantGraphError(t, res, body, 404, 100, 33)
			}
		})
	}

	restOps := []struct {
		method, path, body string
		token              string
		keys               []string
	}{
		{"POST", "/api/v1/business/extmsg/embedded-signup", fmt.Sprintf(`{"businessId":"%s","appId":"%s","displayName":"Demo"}`, w.c.Business.ID, w.c.App.ID), w.owner, []string{"accountId", "status"}},
		{"POST", "/api/v1/business/extmsg/templates", `{"accountId":"` + messaging + `","name":"shipping","body":"Order {{order_id}} shipped.","params":["order_id"]}`, w.owner, []string{"accountId", "body", "id", "name", "params", "status"}},
		{"GET", "/api/v1/business/extmsg/templates?accountId=" + messaging, "", w.owner, []string{"data"}},
		{"POST", "/api/v1/business/extmsg/templates/shipping/approve", `{"accountId":"` + messaging + `"}`, w.ownerSession, []string{"status"}},
		{"GET", "/api/v1/business/admin/extmsg/template-queue", "", w.staffSession, []string{"data"}},
	}
	for _, op := range restOps {
		t.Run(op.method+" "+op.path, func(t *testing.T) {
			out := w.restOK(t, op.method, op.path, op.token, op.body)
			for _, k := range op.keys {
				if _, ok := out[k]; !ok {
					t.Fatalf("answer %v lacks %q", out, k)
				}
			}
			res, body := w.rest(t, op.method, op.path, "", op.body)
			wantGraphError(t, res, body, 401, 104, 0)
			if !strings.Contains(op.path, "/admin/") {
				res, body = w.rest(t, op.method, op.path, w.none, op.body)
				wantGraphError(t, res, body, 403, 10, 2069002)
			} else {
				res, body = w.rest(t, op.method, op.path, w.ownerSession, op.body)
				wantGraphError(t, res, body, 403, 200, 2069005)
			}
		})
	}

	t.Run("leads submitted by a person are read by the form's owner only", func(t *testing.T) {
		id := w.ok(t, "POST", w.consumer, "leadgen_form/"+form+"/leads", lead)["id"].(string)
		leads := w.ok(t, "GET", w.owner, "leadgen_form/"+form+"/leads", nil)["data"].([]any)
		if len(leads) != 1 || leads[0].(map[string]any)["id"] != id || leads[0].(map[string]any)["user_id"] != w.c.Users["consumer"].ID {
			t.Fatalf("leads %v", leads)
		}
		res, body := w.graph(t, "GET", w.consumer, "leadgen_form/"+form+"/leads", nil)
		wantGraphError(t, res, body, 404, 100, 33)
		res, body = w.graph(t, "GET", w.consumer, "ad_account/"+account, nil)
		wantGraphError(t, res, body, 404, 100, 33)
		res, body = w.graph(t, "POST", w.consumer, "leadgen_form/"+form+"/leads", lead)
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "already") {
			t.Fatalf("second lead: %s", body)
		}
		res, body = w.graph(t, "POST", w.owner, "leadgen_form/"+form+"/leads", map[string]any{"field_data": []any{map[string]any{"name": "email", "values": []string{"not-an-email"}}}})
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "field_data") {
			t.Fatalf("bad lead: %s", body)
		}
	})

	t.Run("a lead form with a bad question is refused naming it", func(t *testing.T) {
		res, body := w.graph(t, "POST", w.owner, "ad_account/"+account+"/leadgen_forms", map[string]any{"name": "F",
			"privacy_policy_url": "https://demo.example.com/p", "questions": []any{map[string]any{"type": "AGE"}}})
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "questions[0].type") {
			t.Fatalf("message does not name the question: %s", body)
		}
	})

	t.Run("checkout is idempotent with Idempotency-Key", func(t *testing.T) {
		body := map[string]any{"node": "maison/7000000001/checkout", "items": []any{map[string]any{"product_id": "7100000002", "quantity": 3}}}
		key := map[string]string{"Idempotency-Key": "checkout-e2e-1"}
		res, first := w.post(t, w.consumer, body, key)
		if res.StatusCode != 200 {
			t.Fatalf("checkout: %d %s", res.StatusCode, first)
		}
		order := decode[map[string]any](t, first)
		total := order["total"].(map[string]any)
		if order["status"] != "pending_payment" || total["amount"] != float64(5550) || total["currency"] != "EUR" {
			t.Fatalf("checkout answered %s", first)
		}
		res, again := w.post(t, w.consumer, body, key)
		if res.StatusCode != 200 || string(again) != string(first) {
			t.Fatalf("the retry answered %d %s, want the first answer %s", res.StatusCode, again, first)
		}
		if n := dbCount(t, w.db, `SELECT count(*) FROM commerce.orders WHERE id = $1`, order["order_id"]); n != 1 {
			t.Fatalf("%d orders stored for one key", n)
		}
		body["items"] = []any{map[string]any{"product_id": "7100000002", "quantity": 4}}
		res, other := w.post(t, w.consumer, body, key)
		wantGraphError(t, res, other, 400, 100, 0)
		o := w.ok(t, "GET", w.consumer, "order/"+order["order_id"].(string), nil)
		if o["maison_id"] != "7000000001" || len(o["items"].([]any)) != 1 {
			t.Fatalf("order %v", o)
		}
		res, b := w.graph(t, "GET", w.owner, "order/"+order["order_id"].(string), nil)
		wantGraphError(t, res, b, 404, 100, 33)
	})

	t.Run("a sold-out product is refused naming its line", func(t *testing.T) {
		res, body := w.graph(t, "POST", w.consumer, "maison/7000000001/checkout", map[string]any{"items": []any{
			map[string]any{"product_id": "7100000001", "quantity": 1}, map[string]any{"product_id": "7100000004", "quantity": 1}}})
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "items[1]") {
			t.Fatalf("message does not name the line: %s", body)
		}
		res, body = w.graph(t, "POST", w.consumer, "maison/7000000001/checkout", map[string]any{"items": []any{map[string]any{"product_id": "7100000001", "quantity": 100}}})
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "quantity") {
			t.Fatalf("message does not name quantity: %s", body)
		}
	})

	t.Run("reel insights count the likes and replies written", func(t *testing.T) {
		w.ok(t, "POST", w.consumer, "reel/"+reel+"/likes", nil)
		w.ok(t, "POST", w.consumer, "reel/"+reel+"/likes", nil) // again: still one like of the consumer
		w.ok(t, "POST", w.consumer, "reel/"+reel+"/replies", map[string]any{"text": "Which beans?"})
		got := insightValues(t, w.ok(t, "GET", w.owner, "reel/"+reel+"/insights", map[string]any{"metric": "likes,replies"}))
		// The table's own like and reply (the owner's) and the consumer's.
		if got["likes"] != 2 || got["replies"] != 2 {
			t.Fatalf("insights %v", got)
		}
	})

	t.Run("a development app's template is approved by the app and never reaches the staff queue", func(t *testing.T) {
		list := w.restOK(t, "GET", "/api/v1/business/extmsg/templates?accountId="+messaging, w.ownerSession, "")["data"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["status"] != "approved" {
			t.Fatalf("templates %v", list)
		}
		res, body := w.rest(t, "POST", "/api/v1/business/extmsg/templates/shipping/submit", w.owner, `{"accountId":"`+messaging+`"}`)
		wantGraphError(t, res, body, 409, 10, 2018305)
		queue := w.restOK(t, "GET", "/api/v1/business/admin/extmsg/template-queue", w.staffSession, "")["data"].([]any)
		if len(queue) != 0 {
			t.Fatalf("queue %v", queue)
		}
		res, body = w.rest(t, "POST", "/api/v1/business/admin/extmsg/template-queue", w.staffSession, `{"id":"no-such-template","decision":"approve"}`)
		wantGraphError(t, res, body, 404, 100, 33)
		res, body = w.rest(t, "POST", "/api/v1/business/extmsg/templates", w.owner, `{"accountId":"`+messaging+`","name":"x","body":"Hi {{name}}"}`)
		if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "params") {
			t.Fatalf("message does not name params: %s", body)
		}
		res, body = w.rest(t, "GET", "/api/v1/business/extmsg/templates?accountId="+messaging, w.consumer, "")
		wantGraphError(t, res, body, 404, 100, 33)
		res, body = w.rest(t, "POST", "/api/v1/business/extmsg/embedded-signup", w.consumer,
			fmt.Sprintf(`{"businessId":"%s","appId":"%s","displayName":"Mine"}`, w.c.Business.ID, w.c.App.ID))
		wantGraphError(t, res, body, 403, 200, 2069003)
	})

	// Nothing refused was stored.
	for query, want := range map[string]int{
		`SELECT count(*) FROM ads.leads`:           1,
		`SELECT count(*) FROM ads.leadgen_forms`:   2,
		`SELECT count(*) FROM ads.lead_campaigns`:  1,
		`SELECT count(*) FROM commerce.orders`:     2,
		`SELECT count(*) FROM extmsg.accounts`:     1,
		`SELECT count(*) FROM extmsg.templates`:    1,
		`SELECT count(*) FROM social.reel_replies`: 2,
		`SELECT count(*) FROM social.reel_likes`:   2,
		`SELECT count(*) FROM ads.ad_accounts`:     2,
	} {
		if n := dbCount(t, w.db, query); n != want {
			t.Errorf("%s = %d, want %d", query, n, want)
		}
	}
}

func TestTheReferenceListsTheNamedOperationsPaths(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	spec := reference(t, w.g)
	for _, p := range []string{"/api/v1/business/extmsg/embedded-signup", "/api/v1/business/extmsg/templates",
		"/api/v1/business/extmsg/templates/{name}/approve", "/api/v1/business/admin/extmsg/template-queue"} {
		if spec.Paths.Find(p) == nil {
			t.Errorf("the reference lacks %s", p)
		}
	}
	// Graph nodes are listed beside the Graph endpoint (x-svc-nodes).
	_, raw := do(t, "GET", w.g.URL+"/api/v1/openapi.json", nil, nil)
	for _, node := range []string{"me/adaccounts", "ad_account/{ad_account_id}/lead_campaigns", "ad_account/{ad_account_id}/leadgen_forms",
		"leadgen_form/{leadgen_form_id}/leads", "maison/{maison_id}/checkout", "reel/{reel_id}/likes", "reel/{reel_id}/replies",
		"ad_account/{ad_account_id}/campaigns", "campaign/{campaign_id}/ads", "ad/{ad_id}/insights", "customaudience/{audience_id}/users",
		"ad_account/{ad_account_id}/events"} {
		if !strings.Contains(string(raw), `"`+node+`"`) {
			t.Errorf("the reference names no node %s", node)
		}
	}
}
