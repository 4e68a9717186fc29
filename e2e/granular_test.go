package e2e

import (
	"context"
	"net/url"
	"slices"
	"testing"

	"golang.org/x/oauth2"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/oauthtest"
)

type debugTokenAnswer struct {
	Data struct {
		IsValid        bool     `json:"is_valid"`
		Scopes         []string `json:"scopes"`
		GranularScopes []struct {
			Scope     string   `json:"scope"`
			TargetIDs []string `json:"target_ids"`
		} `json:"granular_scopes"`
	} `json:"data"`
}

type pageList struct {
	Data []struct {
		ID string `json:"id"`
	} `json:"data"`
}

func (l pageList) ids() []string {
	var out []string
	for _, p := range l.Data {
		out = append(out, p.ID)
	}
	slices.Sort(out)
	return out
}

// Granular consent played through the public API (CONTRACT §17): the
// person chooses on the consent page which of their Pages the app may act
// on; the token then acts only on those, on the gateway's Page nodes and
// on every plugin's alike (403, code 200, subcode 2069007 elsewhere);
// me/pages lists only them; debug_token shows granular_scopes; and the
// person changes the choice later, in me/authorized_apps or on the
// consent page asked again, without revoking the app: the same token
// follows.
func TestATokenActsOnlyOnThePagesThePersonChose(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	w := &graphWorld{g: g, c: c}
	owner := c.Users["owner"]
	session := signInAt(t, g.URL, owner.Username, owner.Password)
	seeded := c.Page.ID
	second := decode[struct{ ID string }](t, w.mustPost(t, session, map[string]any{"node": "me/pages", "name": "Second Shop", "category": "Shop"})).ID

	// The consent page offers both Pages, checked; the owner leaves only
	// the seeded one checked.
	cfg := oauth2.Config{ClientID: c.App.ClientID, ClientSecret: c.App.ClientSecret, RedirectURL: c.App.RedirectURI,
		Scopes:   []string{"public_profile", "pages:read", "pages:manage", "svcchat:send"},
		Endpoint: oauth2.Endpoint{AuthURL: g.URL + "/oauth/authorize", TokenURL: g.URL + "/api/oauth/token"}}
	verifier := oauth2.GenerateVerifier()
	br := oauthtest.NewBrowser(t, g.URL)
	login := br.Get(cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
	consent := br.Submit(login, login.Forms[0], url.Values{"username": {owner.Username}, "password": {owner.Password}}, "")
	if len(consent.Forms) != 1 {
		t.Fatalf("want the consent page, got %d %s", consent.Status, consent.Body)
	}
	if got := consent.Forms[0].Fields["page_id"]; !slices.Equal(got, []string{seeded, second}) {
		t.Fatalf("checked page_id = %v, want both Pages", got)
	}
	cb := br.Submit(consent, consent.Forms[0], url.Values{"page_id": {seeded}}, "allow").Location
	tok, err := cfg.Exchange(context.Background(), cb.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	token := tok.AccessToken

	// refused checks each Page-scoped node, the gateway's and two plugins'
	// (book, svcchat), on page: 2069007.
	refused := func(page string) {
		t.Helper()
		res, body := w.get(t, token, url.Values{"node": {"page/" + page}})
		wantGraphError(t, res, body, 403, 200, 2069007)
		res, body = w.get(t, token, url.Values{"node": {"page/" + page + "/posts"}})
		wantGraphError(t, res, body, 403, 200, 2069007)
		res, body = w.post(t, token, map[string]any{"node": "page/" + page + "/posts", "content": "hello", "audience": "everyone"}, nil)
		wantGraphError(t, res, body, 403, 200, 2069007)
		res, body = w.post(t, token, map[string]any{"node": "page/" + page + "/messages", "recipient_user_id": c.Users["consumer"].ID, "text": "hi"}, nil)
		wantGraphError(t, res, body, 403, 200, 2069007)
	}
	allowed := func(page string) {
		t.Helper()
		w.mustGet(t, token, "page/"+page)
		w.mustGet(t, token, "page/"+page+"/posts")
	}
	myPages := func(token string) []string {
		t.Helper()
		return decode[pageList](t, w.mustGet(t, token, "me/pages")).ids()
	}
	granular := func() map[string][]string {
		t.Helper()
		res, body := w.get(t, c.App.APIKey, url.Values{"node": {"debug_token"}, "input_token": {token}})
		if res.StatusCode != 200 {
			t.Fatalf("debug_token: %d %s", res.StatusCode, body)
		}
		d := decode[debugTokenAnswer](t, body)
		out := map[string][]string{}
		for _, g := range d.Data.GranularScopes {
			out[g.Scope] = g.TargetIDs
		}
		return out
	}

	allowed(seeded)
	refused(second)
	if got := myPages(token); !slices.Equal(got, []string{seeded}) {
		t.Fatalf("me/pages with the token = %v, want only %s", got, seeded)
	}
	if got := myPages(session); len(got) != 2 {
		t.Fatalf("me/pages with the session = %v, want both", got)
	}
	// The business lists of the token name the chosen Page alone too.
	w.mustPost(t, session, map[string]any{"node": "business/" + c.Business.ID + "/assets", "type": "PAGE", "id": second})
	businessPages := func(token string) []string {
		t.Helper()
		list := decode[struct {
			Data []struct {
				ID      string   `json:"id"`
				PageIDs []string `json:"page_ids"`
			} `json:"data"`
		}](t, w.mustGet(t, token, "me/business_portfolios")).Data
		for _, b := range list {
			if b.ID == c.Business.ID {
				slices.Sort(b.PageIDs)
				return b.PageIDs
			}
		}
		t.Fatalf("me/business_portfolios lists no %s: %v", c.Business.ID, list)
		return nil
	}
	assignedPages := func(token string) []string {
		t.Helper()
		var out []string
		for _, a := range decode[struct{ Data []businessAsset }](t, w.mustGet(t, token, "me/assigned_assets")).Data {
			if a.Type == "PAGE" {
				out = append(out, a.ID)
			}
		}
		slices.Sort(out)
		return out
	}
	if got := businessPages(token); !slices.Equal(got, []string{seeded}) {
		t.Fatalf("me/business_portfolios with the token names Pages %v, want only %s", got, seeded)
	}
	if got := assignedPages(token); !slices.Equal(got, []string{seeded}) {
		t.Fatalf("me/assigned_assets with the token lists Pages %v, want only %s", got, seeded)
	}
	if got, all := businessPages(session), myPages(session); !slices.Equal(got, all) || !slices.Equal(assignedPages(session), all) {
		t.Fatalf("with the session the business names Pages %v, want %v", got, all)
	}
	gs := granular()
	for _, sc := range []string{"pages:read", "pages:manage", "svcchat:send"} {
		if !slices.Equal(gs[sc], []string{seeded}) {
			t.Fatalf("granular_scopes = %v, want %s on %s", gs, sc, seeded)
		}
	}
	if _, ok := gs["public_profile"]; ok {
		t.Fatalf("granular_scopes lists a scope that acts on no Page: %v", gs)
	}

	// Changing the choice in me/authorized_apps: the person's session
	// only, Pages of theirs only, apps they authorized only.
	choose := func(token string, app string, pages ...string) ([]byte, int) {
		t.Helper()
		if pages == nil {
			pages = []string{}
		}
		res, body := w.post(t, token, map[string]any{"node": "me/authorized_apps/" + app, "page_ids": pages}, nil)
		return body, res.StatusCode
	}
	t.Run("refusals", func(t *testing.T) {
		res, body := w.post(t, token, map[string]any{"node": "me/authorized_apps/" + c.App.ID, "page_ids": []string{second}}, nil)
		wantGraphError(t, res, body, 403, 200, 2069001)
		res, body = w.post(t, c.App.APIKey, map[string]any{"node": "me/authorized_apps/" + c.App.ID, "page_ids": []string{second}}, nil)
		wantGraphError(t, res, body, 403, 200, 2069001)
		stranger := decode[struct{ ID string }](t, w.mustPost(t, signInAt(t, g.URL, c.Users["consumer"].Username, c.Users["consumer"].Password),
			map[string]any{"node": "me/pages", "name": "Not Yours", "category": "Shop"})).ID
		res, body = w.post(t, session, map[string]any{"node": "me/authorized_apps/" + c.App.ID, "page_ids": []string{stranger}}, nil)
		wantGraphError(t, res, body, 400, 100, 0)
		res, body = w.post(t, session, map[string]any{"node": "me/authorized_apps/999999999999", "page_ids": []string{second}}, nil)
		wantGraphError(t, res, body, 404, 100, 33)
		// Nothing changed.
		allowed(seeded)
		refused(second)
	})

	if body, status := choose(session, c.App.ID, second); status != 200 {
		t.Fatalf("change the choice: %d %s", status, body)
	}
	// The same token, not revoked, follows the new choice at once.
	allowed(second)
	refused(seeded)
	if got := myPages(token); !slices.Equal(got, []string{second}) {
		t.Fatalf("me/pages after the change = %v", got)
	}
	if gs := granular(); !slices.Equal(gs["pages:read"], []string{second}) {
		t.Fatalf("granular_scopes after the change = %v", gs)
	}
	apps := decode[struct {
		Data []struct {
			AppID string `json:"app_id"`
			Pages *struct {
				PageIDs []string `json:"page_ids"`
			} `json:"pages"`
		} `json:"data"`
	}](t, w.mustGet(t, session, "me/authorized_apps"))
	i := slices.IndexFunc(apps.Data, func(a struct {
		AppID string `json:"app_id"`
		Pages *struct {
			PageIDs []string `json:"page_ids"`
		} `json:"pages"`
	}) bool {
		return a.AppID == c.App.ID
	})
	if i < 0 || apps.Data[i].Pages == nil || !slices.Equal(apps.Data[i].Pages.PageIDs, []string{second}) {
		t.Fatalf("me/authorized_apps does not show the choice: %+v", apps)
	}
	// No Page at all.
	if body, status := choose(session, c.App.ID); status != 200 {
		t.Fatalf("choose no Page: %d %s", status, body)
	}
	refused(second)
	if got := myPages(token); len(got) != 0 {
		t.Fatalf("me/pages with no Page chosen = %v", got)
	}

	// Asked again on the consent page (auth_type=rerequest), the current
	// choice is what is checked; choosing both there is every token's.
	again := br.Get(cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("auth_type", "rerequest")))
	if len(again.Forms) != 1 || again.Forms[0].Fields.Has("page_id") {
		t.Fatalf("asked again with no Page chosen: %d, fields %v", again.Status, again.Forms)
	}
	if br.Submit(again, again.Forms[0], url.Values{"page_id": {seeded, second}}, "allow").Location == nil {
		t.Fatal("consent did not redirect")
	}
	allowed(seeded)
	allowed(second)
	if got := myPages(token); len(got) != 2 {
		t.Fatalf("me/pages with every Page chosen = %v", got)
	}

	// A node that names an object on a Page (a book post) is the plugin's:
	// it asks the gateway about the post's Page as this token, and learns
	// the token no longer reaches it.
	post := decode[struct{ ID string }](t, w.mustPost(t, token, map[string]any{"node": "page/" + second + "/posts",
		"content": "on the second Page", "audience": "everyone"})).ID
	w.mustGet(t, token, "post/"+post)
	if body, status := choose(session, c.App.ID, seeded); status != 200 {
		t.Fatalf("change the choice: %d %s", status, body)
	}
	res, body := w.get(t, token, url.Values{"node": {"post/" + post}})
	wantGraphError(t, res, body, 404, 100, 33)
}
