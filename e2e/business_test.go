package e2e

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// Business portfolios and business verification through the public API
// (CONTRACT §17, issue 31 items 1 and 2): people make businesses, put
// their own Pages, apps and ad accounts in them (one business per asset),
// give roles; staff verify them; App Review takes the advanced scopes only
// from an app of a verified business.

type businessAsset struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

type businessNode struct {
	ID                 string `json:"id"`
	Name               string `json:"name"`
	VerificationStatus string `json:"verification_status"`
	VerificationReason string `json:"verification_reason"`
}

// restBusiness is a business as the staff REST path answers it (camelCase,
// CONTRACT §1).
type restBusiness struct {
	VerificationStatus string `json:"verificationStatus"`
}

// newBusiness makes a business with session and answers its id.
func (w *lifecycleWorld) newBusiness(t *testing.T, session, name string) string {
	t.Helper()
	id := decode[struct{ ID string }](t, w.mustPost(t, session, map[string]any{"node": "me/business_portfolios", "name": name})).ID
	if id == "" {
		t.Fatal("no business id")
	}
	return id
}

func (w *lifecycleWorld) addAsset(t *testing.T, session, business, typ, id string) ([]byte, int) {
	t.Helper()
	res, body := w.post(t, session, map[string]any{"node": "business/" + business + "/assets", "type": typ, "id": id}, nil)
	return body, res.StatusCode
}

func TestABusinessHoldsItsPeoplesAssetsEachInOneBusinessOnly(t *testing.T) {
	t.Parallel()
	w := newLifecycleWorld(t)
	consumer := w.c.Users["consumer"]
	consumerSession := signInAt(t, w.g.URL, consumer.Username, consumer.Password)
	biz := w.newBusiness(t, w.session, "Orders Inc.")

	got := decode[businessNode](t, w.mustGet(t, w.session, "business/"+biz))
	if got.ID != biz || got.Name != "Orders Inc." || got.VerificationStatus != "unverified" {
		t.Fatalf("business/%s = %+v", biz, got)
	}

	// The owner's own assets: a new Page, the app she registered, her
	// sandbox ad account (the ads plugin's).
	page := decode[struct{ ID string }](t, w.mustPost(t, w.session, map[string]any{"node": "me/pages", "name": "Orders Corner", "category": "Shop"})).ID
	accounts := decode[struct{ Data []struct{ ID string } }](t, w.mustGet(t, w.session, "me/adaccounts"))
	if len(accounts.Data) == 0 {
		t.Fatal("the owner has no sandbox ad account")
	}
	adAccount := accounts.Data[0].ID
	for _, a := range [][2]string{{"PAGE", page}, {"APP", w.app.ID}, {"AD_ACCOUNT", adAccount}} {
		if body, status := w.addAsset(t, w.session, biz, a[0], a[1]); status != 200 {
			t.Fatalf("add %s %s: %d %s", a[0], a[1], status, body)
		}
	}
	assets := decode[struct{ Data []businessAsset }](t, w.mustGet(t, w.session, "business/"+biz+"/assets")).Data
	want := []businessAsset{{"AD_ACCOUNT", adAccount, ""}, {"APP", w.app.ID, "Orders bot"}, {"PAGE", page, "Orders Corner"}}
	if !slices.Equal(assets, want) {
		t.Fatalf("assets = %+v, want %+v", assets, want)
	}

	t.Run("an asset already in a business cannot join another, nor the same one twice", func(t *testing.T) {
		// The seeded Page is in the seed's business (made the same way).
		body, status := w.addAsset(t, w.session, biz, "PAGE", w.c.Page.ID)
		if status != 400 || !strings.Contains(string(body), "at most one business") {
			t.Fatalf("the seeded Page into a second business: %d %s", status, body)
		}
		res, body2 := w.post(t, w.session, map[string]any{"node": "business/" + biz + "/assets", "type": "APP", "id": w.app.ID}, nil)
		if e := wantGraphError(t, res, body2, 400, 100, 0); !strings.Contains(e.Error.Message, "id") {
			t.Fatalf("refusal does not name id: %s", body2)
		}
	})

	t.Run("only an asset the person owns or administers joins: not someone else's Page, app or ad account", func(t *testing.T) {
		theirs := w.newBusiness(t, consumerSession, "Casey's Shop")
		for _, a := range [][2]string{{"PAGE", page}, {"APP", w.app.ID}, {"AD_ACCOUNT", adAccount}, {"PAGE", "999999999"}} {
			res, body := w.post(t, consumerSession, map[string]any{"node": "business/" + theirs + "/assets", "type": a[0], "id": a[1]}, nil)
			wantGraphError(t, res, body, 403, 200, 2069003)
		}
		res, body := w.post(t, consumerSession, map[string]any{"node": "business/" + theirs + "/assets", "type": "CATALOG", "id": page}, nil)
		wantGraphError(t, res, body, 400, 100, 0)
	})

	t.Run("someone without a role on the business neither reads nor changes it", func(t *testing.T) {
		res, body := w.get(t, consumerSession, url.Values{"node": {"business/" + biz}})
		wantGraphError(t, res, body, 403, 200, 2069003)
		res, body = w.get(t, consumerSession, url.Values{"node": {"business/" + biz + "/assets"}})
		wantGraphError(t, res, body, 403, 200, 2069003)
		res, body = w.post(t, consumerSession, map[string]any{"node": "business/" + biz + "/assets", "type": "PAGE", "id": page}, nil)
		wantGraphError(t, res, body, 403, 200, 2069003)
		res, body = w.post(t, consumerSession, map[string]any{"node": "business/" + biz + "/roles", "user_id": consumer.ID, "role": "admin"}, nil)
		wantGraphError(t, res, body, 403, 200, 2069003)
		res, body = w.get(t, w.session, url.Values{"node": {"business/999999999"}})
		wantGraphError(t, res, body, 404, 100, 33)
		res, body = w.get(t, "", url.Values{"node": {"business/" + biz}})
		wantGraphError(t, res, body, 401, 104, 0)
	})

	t.Run("an app's token reads the business of its user, never changes it; an app key is no person", func(t *testing.T) {
		reader := w.g.UserToken(t, "owner", "pages:read")
		if got := decode[businessNode](t, w.mustGet(t, reader, "business/"+biz)); got.ID != biz {
			t.Fatalf("read with a token: %+v", got)
		}
		res, body := w.post(t, reader, map[string]any{"node": "business/" + biz + "/assets", "type": "PAGE", "id": page}, nil)
		wantGraphError(t, res, body, 403, 200, 2069001)
		res, body = w.post(t, reader, map[string]any{"node": "me/business_portfolios", "name": "By an app"}, nil)
		wantGraphError(t, res, body, 403, 200, 2069001)
		res, body = w.get(t, w.g.UserToken(t, "owner", "public_profile"), url.Values{"node": {"business/" + biz}})
		wantGraphError(t, res, body, 403, 10, 2069002)
		res, body = w.get(t, w.c.App.APIKey, url.Values{"node": {"business/" + biz}})
		wantGraphError(t, res, body, 403, 200, 2069001)
	})

	t.Run("an employee reads the business and its assets but changes nothing; the last admin stays", func(t *testing.T) {
		w.mustPost(t, w.session, map[string]any{"node": "business/" + biz + "/roles", "user_id": consumer.ID, "role": "employee"})
		if got := decode[businessNode](t, w.mustGet(t, consumerSession, "business/"+biz)); got.ID != biz {
			t.Fatalf("the employee reads %+v", got)
		}
		if n := len(decode[struct{ Data []businessAsset }](t, w.mustGet(t, consumerSession, "business/"+biz+"/assets")).Data); n != 3 {
			t.Fatalf("the employee sees %d assets", n)
		}
		res, body := w.post(t, consumerSession, map[string]any{"node": "business/" + biz + "/roles", "user_id": consumer.ID, "role": "admin"}, nil)
		wantGraphError(t, res, body, 403, 200, 2069003)
		res, body = w.post(t, consumerSession, map[string]any{"node": "business/" + biz + "/verification", "legal_name": "x", "country": "FR",
			"documents": []map[string]string{{"kind": "utility_bill", "sha256": strings.Repeat("0", 64)}}}, nil)
		wantGraphError(t, res, body, 403, 200, 2069003)
		people := decode[struct {
			Data []struct{ UserID, Name, Role string }
		}](t, w.mustGet(t, consumerSession, "business/"+biz+"/roles")).Data
		if len(people) != 2 {
			t.Fatalf("roles = %+v", people)
		}
		res, body = w.post(t, w.session, map[string]any{"node": "business/" + biz + "/roles", "user_id": w.c.Users["owner"].ID, "role": "employee"}, nil)
		wantGraphError(t, res, body, 400, 100, 0)
	})

	t.Run("me/business_portfolios lists the businesses the person has a role on, with their Pages", func(t *testing.T) {
		type portfolio struct {
			ID                 string   `json:"id"`
			Name               string   `json:"name"`
			PageIDs            []string `json:"page_ids"`
			VerificationStatus string   `json:"verification_status"`
			Role               string   `json:"role"`
		}
		list := decode[struct{ Data []portfolio }](t, w.mustGet(t, w.g.UserToken(t, "owner", "pages:read"), "me/business_portfolios")).Data
		if len(list) != 2 || list[0].ID != w.c.Business.ID || !slices.Equal(list[0].PageIDs, []string{w.c.Page.ID}) ||
			list[1].ID != biz || !slices.Equal(list[1].PageIDs, []string{page}) || list[1].Role != "admin" || list[1].VerificationStatus != "unverified" {
			t.Fatalf("the owner's portfolios = %+v", list)
		}
		mine := decode[struct{ Data []portfolio }](t, w.mustGet(t, consumerSession, "me/business_portfolios")).Data
		if !slices.ContainsFunc(mine, func(p portfolio) bool { return p.ID == biz && p.Role == "employee" }) {
			t.Fatalf("the employee's portfolios = %+v", mine)
		}
	})

	t.Run("me/assigned_assets names the business holding each asset, the ad account too", func(t *testing.T) {
		type asset struct {
			ID         string `json:"id"`
			Type       string `json:"type"`
			BusinessID string `json:"business_id"`
		}
		list := decode[struct{ Data []asset }](t, w.mustGet(t, w.g.UserToken(t, "owner", "pages:read", "ads_read"), "me/assigned_assets")).Data
		for _, want := range []asset{{page, "PAGE", biz}, {w.app.ID, "APP", biz}, {adAccount, "AD_ACCOUNT", biz}, {w.c.Page.ID, "PAGE", w.c.Business.ID}} {
			if !slices.Contains(list, want) {
				t.Errorf("me/assigned_assets lacks %+v: %+v", want, list)
			}
		}
	})

	t.Run("the business's ad account is its admins' to use, not its employees'", func(t *testing.T) {
		ads := w.g.UserToken(t, "consumer", "ads_read")
		res, body := w.get(t, ads, url.Values{"node": {"ad_account/" + adAccount}})
		wantGraphError(t, res, body, 404, 100, 33)
		w.mustPost(t, w.session, map[string]any{"node": "business/" + biz + "/roles", "user_id": consumer.ID, "role": "admin"})
		if got := decode[struct{ ID string }](t, w.mustGet(t, ads, "ad_account/"+adAccount)); got.ID != adAccount {
			t.Fatalf("the business's admin reads %+v", got)
		}
	})
}

// verificationREST calls the staff business verification queue.
func (w *lifecycleWorld) verificationREST(t *testing.T, token, method, body string) ([]byte, int, graphError) {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}
	res, out := do(t, method, w.g.URL+"/api/developers/admin/business-verification", nil, h)
	if body != "" {
		res, out = do(t, method, w.g.URL+"/api/developers/admin/business-verification", strings.NewReader(body), h)
	}
	var e graphError
	if res.StatusCode != 200 {
		e = decode[graphError](t, out)
	}
	return out, res.StatusCode, e
}

func TestBusinessVerificationGoesThroughStaffAndGatesTheAdvancedScopesOfAppReview(t *testing.T) {
	t.Parallel()
	w := newLifecycleWorld(t)
	biz := w.newBusiness(t, w.session, "Orders Inc.")
	if body, status := w.addAsset(t, w.session, biz, "APP", w.app.ID); status != 200 {
		t.Fatalf("add the app: %d %s", status, body)
	}
	gated := []string{"ads_management", "leads_retrieval", "extmsg_business_management"}
	review := func(scope string) ([]byte, int) {
		res, body := w.post(t, w.session, map[string]any{"node": w.node("review"), "scopes": []string{scope},
			"use_case":           "Orders bot runs the merchant's lead ads and answers her customers on her business messaging account; nothing is kept beyond what each feature needs.",
			"privacy_policy_url": "https://orders.example/privacy"}, nil)
		return body, res.StatusCode
	}
	wantGate := func(t *testing.T, why string) {
		t.Helper()
		for _, scope := range gated {
			res, body := w.post(t, w.session, map[string]any{"node": w.node("review"), "scopes": []string{"public_profile", scope}, "use_case": "Orders bot."}, nil)
			if e := wantGraphError(t, res, body, 403, 200, 2069006); !strings.Contains(e.Error.Message, scope) {
				t.Errorf("%s: the refusal of %s does not name it: %s", why, scope, body)
			}
		}
	}
	status := func() businessNode { return decode[businessNode](t, w.mustGet(t, w.session, "business/"+biz)) }
	docs := []map[string]string{{"kind": "business_registration", "sha256": strings.Repeat("a1", 32)}}
	ask := func() (*businessNode, []byte, int) {
		res, body := w.post(t, w.session, map[string]any{"node": "business/" + biz + "/verification",
			"legal_name": "Orders Incorporated", "country": "FR", "documents": docs}, nil)
		if res.StatusCode != 200 {
			return nil, body, res.StatusCode
		}
		b := decode[businessNode](t, body)
		return &b, body, 200
	}

	t.Run("an app of an unverified business cannot request the advanced scopes", func(t *testing.T) {
		wantGate(t, "unverified")
		if rv := decode[reviewList](t, w.mustGet(t, w.session, w.node("review"))); rv.status("ads_management") != "not_submitted" {
			t.Fatalf("a refused request was recorded: %+v", rv)
		}
	})

	t.Run("an app in no business cannot either", func(t *testing.T) {
		res, body := w.post(t, w.session, map[string]any{"node": "me/apps", "name": "Loose app", "redirect_uris": []string{lifecycleRedirect}}, nil)
		loose := decode[createdApp](t, body).ID
		if res.StatusCode != 200 {
			t.Fatalf("register: %d %s", res.StatusCode, body)
		}
		res, body = w.post(t, w.session, map[string]any{"node": "app/" + loose + "/review", "scopes": []string{"leads_retrieval"}, "use_case": "x"}, nil)
		wantGraphError(t, res, body, 403, 200, 2069006)
	})

	t.Run("a request names its documents by kind and SHA-256 and makes the business pending, once", func(t *testing.T) {
		for _, bad := range []map[string]any{
			{"legal_name": "Orders Incorporated", "country": "France", "documents": docs},
			{"legal_name": "Orders Incorporated", "country": "FR", "documents": []map[string]string{}},
			{"legal_name": "Orders Incorporated", "country": "FR", "documents": []map[string]string{{"kind": "utility_bill", "sha256": "abc"}}},
			{"legal_name": "", "country": "FR", "documents": docs},
		} {
			bad["node"] = "business/" + biz + "/verification"
			res, body := w.post(t, w.session, bad, nil)
			wantGraphError(t, res, body, 400, 100, 0)
		}
		b, body, code := ask()
		if code != 200 || b.VerificationStatus != "pending" {
			t.Fatalf("request: %d %s", code, body)
		}
		if _, body, code := ask(); code != 400 {
			t.Fatalf("a second request while pending: %d %s", code, body)
		}
		if s := status(); s.VerificationStatus != "pending" {
			t.Fatalf("business = %+v", s)
		}
		wantGate(t, "pending")
	})

	t.Run("only staff read and decide the queue", func(t *testing.T) {
		if _, code, e := w.verificationREST(t, w.session, "GET", ""); code != 403 || e.Error.Subcode != 2069005 {
			t.Fatalf("the owner reads the queue: %d %+v", code, e)
		}
		if _, code, e := w.verificationREST(t, w.session, "POST", `{"business_id":"`+biz+`","decision":"approve"}`); code != 403 || e.Error.Subcode != 2069005 {
			t.Fatalf("the owner approves her own business: %d %+v", code, e)
		}
		if _, code, e := w.verificationREST(t, w.c.App.APIKey, "GET", ""); code != 403 || e.Error.Code != 200 {
			t.Fatalf("an app key reads the queue: %d %+v", code, e)
		}
		if s := status(); s.VerificationStatus != "pending" {
			t.Fatalf("business after refused decisions = %+v", s)
		}
	})

	t.Run("staff see the request and reject it with a reason the business sees", func(t *testing.T) {
		// REST bodies are camelCase (CONTRACT §1); either spelling is read.
		body, code, _ := w.verificationREST(t, w.staff, "GET", "")
		type doc struct{ Kind, Sha256 string }
		q := decode[struct {
			Data []struct {
				BusinessID    string `json:"businessId"`
				BusinessName  string `json:"businessName"`
				LegalName     string `json:"legalName"`
				Country       string `json:"country"`
				Documents     []doc  `json:"documents"`
				RequestedTime string `json:"requestedTime"`
			}
		}](t, body)
		if code != 200 || len(q.Data) != 1 || q.Data[0].BusinessID != biz || q.Data[0].LegalName != "Orders Incorporated" ||
			q.Data[0].Country != "FR" || len(q.Data[0].Documents) != 1 || q.Data[0].Documents[0] != (doc{"business_registration", strings.Repeat("a1", 32)}) ||
			q.Data[0].RequestedTime == "" {
			t.Fatalf("queue: %d %s", code, body)
		}
		if _, code, e := w.verificationREST(t, w.staff, "POST", `{"business_id":"`+biz+`","decision":"reject"}`); code != 400 || !strings.Contains(e.Error.Message, "reason") {
			t.Fatalf("a rejection without a reason: %d %+v", code, e)
		}
		body, code, _ = w.verificationREST(t, w.staff, "POST", `{"business_id":"`+biz+`","decision":"reject","reason":"The registration extract is older than three months."}`)
		if code != 200 || decode[restBusiness](t, body).VerificationStatus != "rejected" {
			t.Fatalf("reject: %d %s", code, body)
		}
		if s := status(); s.VerificationStatus != "rejected" || s.VerificationReason != "The registration extract is older than three months." {
			t.Fatalf("business after the rejection = %+v", s)
		}
		if _, code, e := w.verificationREST(t, w.staff, "POST", `{"business_id":"`+biz+`","decision":"approve"}`); code != 409 || e.Error.Code != 10 || e.Error.Subcode != 2018305 {
			t.Fatalf("a decision on a business that is not pending: %d %+v", code, e)
		}
		if _, code, e := w.verificationREST(t, w.staff, "POST", `{"business_id":"999999999","decision":"approve"}`); code != 404 {
			t.Fatalf("a decision on no business: %d %+v", code, e)
		}
		wantGate(t, "rejected")
	})

	t.Run("asked again and approved, the business is verified and its app requests the advanced scopes", func(t *testing.T) {
		if b, body, code := ask(); code != 200 || b.VerificationStatus != "pending" {
			t.Fatalf("a rejected business asks again: %d %s", code, body)
		}
		body, code, _ := w.verificationREST(t, w.staff, "POST", `{"businessId":"`+biz+`","decision":"approve"}`)
		if code != 200 || decode[restBusiness](t, body).VerificationStatus != "verified" {
			t.Fatalf("approve: %d %s", code, body)
		}
		if s := status(); s.VerificationStatus != "verified" || s.VerificationReason != "" {
			t.Fatalf("business after the approval = %+v", s)
		}
		if _, body, code := ask(); code != 400 {
			t.Fatalf("a verified business asks again: %d %s", code, body)
		}
		for _, scope := range gated {
			body, code := review(scope)
			if code != 200 || decode[reviewList](t, body).status(scope) != "pending" {
				t.Errorf("review of %s once verified: %d %s", scope, code, body)
			}
		}
	})
}
