package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/oauthtest"
)

// The partner program through the public API (CONTRACT §18, issue 32
// item 4): a business admin registers the business; its tier follows
// from measured criteria (docs/PARTNERS.md), shown with each criterion.

type partnerNode struct {
	ID         string `json:"id"`
	BusinessID string `json:"business_id"`
	Tier       string `json:"tier"`
	Criteria   []struct {
		Name  string `json:"name"`
		Met   bool   `json:"met"`
		Value string `json:"value"`
	} `json:"criteria"`
}

func (p partnerNode) met(name string) bool {
	for _, c := range p.Criteria {
		if c.Name == name {
			return c.Met
		}
	}
	return false
}

func (w *lifecycleWorld) registerPartner(t *testing.T, token, business string) (*http.Response, []byte) {
	t.Helper()
	res, body := do(t, "POST", w.g.URL+"/api/v1/partners", strings.NewReader(`{"business_id":"`+business+`"}`),
		map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"})
	return res, body
}

// seedUserToken runs the code flow of the seed app as username and answers
// the user token.
func (w *lifecycleWorld) seedUserToken(t *testing.T, username, password string) string {
	t.Helper()
	cfg := oauth2.Config{ClientID: w.c.App.ClientID, ClientSecret: w.c.App.ClientSecret, RedirectURL: w.c.App.RedirectURI,
		Scopes: []string{"public_profile"}, Endpoint: oauth2.Endpoint{AuthURL: w.g.URL + "/oauth/authorize", TokenURL: w.g.URL + "/api/oauth/token"}}
	verifier := oauth2.GenerateVerifier()
	br := oauthtest.NewBrowser(t, w.g.URL)
	cb := br.Authorize(cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)), username, password, "allow")
	tok, err := w.exchange(t, cfg, cb, verifier)
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

func TestAPartnersTierFollowsItsMeasuredCriteria(t *testing.T) {
	t.Parallel()
	w := newLifecycleWorld(t)
	biz := w.c.Business.ID // the seed's: it holds the seed's Page and app
	consumer := w.c.Users["consumer"]
	consumerSession := signInAt(t, w.g.URL, consumer.Username, consumer.Password)

	t.Run("the API reference documents the registration and the partner node", func(t *testing.T) {
		spec := reference(t, w.g)
		if op := spec.Paths.Find("/api/v1/partners"); op == nil || op.Post == nil {
			t.Fatal("POST /api/v1/partners is not in the reference")
		}
		if nodes, _ := json.Marshal(spec.Extensions["x-svc-nodes"]); !strings.Contains(string(nodes), "partner/{partner_id}/smoke_runs") {
			t.Fatalf("partner nodes are not in x-svc-nodes: %.300s", nodes)
		}
	})

	t.Run("only a business admin's session registers, once; unknown businesses are 404", func(t *testing.T) {
		res, body := w.registerPartner(t, w.app.APIKey, biz)
		wantGraphError(t, res, body, 403, 200, 2069001)
		res, body = w.registerPartner(t, w.seedUserToken(t, w.c.Users["owner"].Username, w.c.Users["owner"].Password), biz)
		wantGraphError(t, res, body, 403, 200, 2069001)
		res, body = w.registerPartner(t, consumerSession, biz)
		wantGraphError(t, res, body, 403, 200, 2069003)
		res, body = w.registerPartner(t, w.session, "424242")
		wantGraphError(t, res, body, 404, 100, 33)
	})

	partnerOf := func(token string) string {
		return decode[struct {
			PartnerID string `json:"partner_id"`
		}](t, w.mustGet(t, token, "business/"+biz)).PartnerID
	}
	var id string
	t.Run("a registered partner starts registered with every criterion shown unmet", func(t *testing.T) {
		if p := partnerOf(w.session); p != "" {
			t.Fatalf("business/<id> of no partner names partner %q", p)
		}
		res, body := w.registerPartner(t, w.session, biz)
		created := decode[struct{ ID, Tier string }](t, body)
		if res.StatusCode != 200 || created.ID == "" || created.Tier != "registered" {
			t.Fatalf("register: %d %s", res.StatusCode, body)
		}
		id = created.ID
		// business/<id> names its partner, to the people it answered before
		// (CONTRACT §17: anyone with a role); others are still refused.
		if p := partnerOf(w.session); p != id {
			t.Fatalf("business/<id> names partner %q, want %q", p, id)
		}
		res, body = w.get(t, consumerSession, url.Values{"node": {"business/" + biz}})
		wantGraphError(t, res, body, 403, 200, 2069003)
		res, body = w.registerPartner(t, w.session, biz)
		wantGraphError(t, res, body, 409, 100, 0)
		p := decode[partnerNode](t, w.mustGet(t, w.session, "partner/"+id))
		if p.ID != id || p.BusinessID != biz || p.Tier != "registered" || len(p.Criteria) != 5 {
			t.Fatalf("partner = %+v", p)
		}
		for _, c := range p.Criteria {
			if c.Met || c.Value == "" {
				t.Fatalf("criterion of a new partner: %+v", c)
			}
		}
		// Public tier, members-only criteria.
		other := decode[partnerNode](t, w.mustGet(t, consumerSession, "partner/"+id))
		if other.Tier != "registered" || len(other.Criteria) != 0 {
			t.Fatalf("partner as someone else sees it: %+v", other)
		}
		res, body = w.get(t, "", url.Values{"node": {"partner/" + id}})
		wantGraphError(t, res, body, 401, 104, 0)
		res, body = w.get(t, w.c.App.APIKey, url.Values{"node": {"partner/" + id}})
		wantGraphError(t, res, body, 403, 200, 2069001)
		res, body = w.get(t, w.session, url.Values{"node": {"partner/424242"}})
		wantGraphError(t, res, body, 404, 100, 33)
	})

	t.Run("an app of the business goes live through App Review: live_reviewed_app is met", func(t *testing.T) {
		if body, code := w.addAsset(t, w.session, biz, "APP", w.app.ID); code != 200 {
			t.Fatalf("add app: %d %s", code, body)
		}
		w.mustPost(t, w.session, map[string]any{"node": w.node("review"), "scopes": []string{"public_profile", "pages:read"},
			"use_case":           "Orders bot greets each customer by name from the public profile and lists the Pages the merchant manages, so she can pick which shop answers order questions in chat. Nothing is stored beyond the session.",
			"privacy_policy_url": "https://orders.example/privacy"})
		w.mustPost(t, w.session, map[string]any{"node": w.node(""), "mode": "live"})
		p := decode[partnerNode](t, w.mustGet(t, w.session, "partner/"+id))
		if !p.met("live_reviewed_app") || p.Tier != "registered" {
			t.Fatalf("after going live: %+v", p)
		}
	})

	t.Run("a smoke run is reported only by a business admin with the token of a business app", func(t *testing.T) {
		node := "partner/" + id + "/smoke_runs"
		run := map[string]any{"node": node, "passed": 6, "failed": 0, "summary": "6 passed, 0 failed"}
		res, body := w.post(t, w.c.App.APIKey, run, nil)
		wantGraphError(t, res, body, 403, 200, 2069001)
		res, body = w.post(t, w.seedUserToken(t, consumer.Username, consumer.Password), run, nil)
		wantGraphError(t, res, body, 403, 200, 2069003)
		// An app of no business: the owner's token for it is refused.
		elsewhere := decode[createdApp](t, w.mustPost(t, w.session, map[string]any{"node": "me/apps", "name": "Elsewhere",
			"redirect_uris": []string{lifecycleRedirect}, "products": []string{"svcchat"}}))
		cfg := oauth2.Config{ClientID: elsewhere.ClientID, ClientSecret: elsewhere.ClientSecret, RedirectURL: lifecycleRedirect,
			Scopes: []string{"public_profile"}, Endpoint: oauth2.Endpoint{AuthURL: w.g.URL + "/oauth/authorize", TokenURL: w.g.URL + "/api/oauth/token"}}
		owner := w.c.Users["owner"]
		cb, verifier := w.authorize(t, cfg, owner.Username, owner.Password)
		tok, err := w.exchange(t, cfg, cb, verifier)
		if err != nil {
			t.Fatal(err)
		}
		res, body = w.post(t, tok.AccessToken, run, nil)
		wantGraphError(t, res, body, 403, 200, 2069004)
		if p := decode[partnerNode](t, w.mustGet(t, w.session, "partner/"+id)); p.met("smoke_check_30d") {
			t.Fatalf("a refused report counted: %+v", p)
		}
	})

	bin := filepath.Join(gatewaytest.BinDir(t), "gateway")
	creds := filepath.Join(w.g.DataDir, "dev-credentials.json")
	t.Run("a smoke run whose report is refused fails the command and is not counted", func(t *testing.T) {
		// The consumer's business: the seed app is not one of its apps.
		theirs := w.newBusiness(t, consumerSession, "Consumer Co.")
		res, body := w.registerPartner(t, consumerSession, theirs)
		if res.StatusCode != 200 {
			t.Fatalf("register: %d %s", res.StatusCode, body)
		}
		other := decode[struct{ ID string }](t, body).ID
		var out bytes.Buffer
		cmd := exec.CommandContext(context.Background(), bin, "smoke", "--base-url", w.g.URL, "--credentials", creds, "--report-partner", other)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err == nil || !strings.Contains(out.String(), "6 passed, 0 failed\nFAIL report to partner/"+other+":") {
			t.Fatalf("smoke reported to another business's partner: %v\n%s", err, out.String())
		}
		if p := decode[partnerNode](t, w.mustGet(t, consumerSession, "partner/"+other)); p.met("smoke_check_30d") {
			t.Fatalf("a refused report counted: %+v", p)
		}
	})

	t.Run("webhook deliveries succeed and gateway smoke --report-partner passes: certified", func(t *testing.T) {
		var p partnerNode
		// Each run's webhook and session message steps are real deliveries
		// to the seed app's receiver; runs repeat until the 30-day count
		// reaches the bar (a handful).
		for i := 0; i < 6 && !p.met("webhook_success_30d"); i++ {
			var out bytes.Buffer
			cmd := exec.CommandContext(context.Background(), bin, "smoke", "--base-url", w.g.URL, "--credentials", creds, "--report-partner", id)
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil || !strings.Contains(out.String(), "6 passed, 0 failed\nreported to partner/"+id+": smoke run ") {
				t.Fatalf("smoke: %v\n%s", err, out.String())
			}
			p = decode[partnerNode](t, w.mustGet(t, w.session, "partner/"+id))
			t.Logf("after run %d: %+v", i+1, p.Criteria)
		}
		if !p.met("smoke_check_30d") || !p.met("webhook_success_30d") || p.Tier != "certified" {
			t.Fatalf("after passing smoke runs: %+v", p)
		}
		if p.met("business_verified") || p.met("webhook_volume_30d") {
			t.Fatalf("premier criteria met: %+v", p)
		}
		if other := decode[partnerNode](t, w.mustGet(t, consumerSession, "partner/"+id)); other.Tier != "certified" || len(other.Criteria) != 0 {
			t.Fatalf("as someone else: %+v", other)
		}
	})
}
