package e2e

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/oauthtest"
)

// pagesWorld is a gateway started empty (--no-dev-seed) and the people who
// signed up on it.
type pagesWorld struct {
	*graphWorld
	people map[string]signedUp
}

// mobile posts a JSON body to a mobile path with a session.
func (w *pagesWorld) mobile(t *testing.T, session, path, body string) (*http.Response, []byte) {
	t.Helper()
	return do(t, "POST", w.g.URL+path, strings.NewReader(body),
		map[string]string{"Authorization": "Bearer " + session, "Content-Type": "application/json"})
}

// userToken runs the OAuth code flow of app as a signed-up person (on the
// app's team, so that a development app may be authorized) and answers the
// access token.
func (w *pagesWorld) userToken(t *testing.T, app createdApp, username string, scopes ...string) string {
	t.Helper()
	cfg := oauth2.Config{ClientID: app.ClientID, ClientSecret: app.ClientSecret, RedirectURL: lifecycleRedirect, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: w.g.URL + "/oauth/authorize", TokenURL: w.g.URL + "/api/oauth/token"}}
	verifier := oauth2.GenerateVerifier()
	cb := oauthtest.NewBrowser(t, w.g.URL).Authorize(cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)),
		username, "a long enough secret", "allow")
	tok, err := cfg.Exchange(context.Background(), cb.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("token of %s: %v", username, err)
	}
	return tok.AccessToken
}

// From an empty platform through real HTTP (CONTRACT §16): a person signs
// up and creates a Page (unpublished: nobody can write to it), publishes it
// with chat surfacing and the inbox merge, grants a second person editor
// and a third admin; the editor posts as the Page and replies in a thread
// but is refused the Page's settings, roles and links; the admin cannot
// grant owner; the last owner cannot leave; a removed editor is refused at
// once.
func TestAPersonCreatesAPagePublishesItAndSharesItWithAnEditorAndAnAdmin(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{Args: []string{"--no-dev-seed"}})
	w := &pagesWorld{graphWorld: &graphWorld{g: g}, people: map[string]signedUp{}}
	for _, p := range []struct{ username, name string }{
		{"olivia", "Olivia Owner"}, {"eddie", "Eddie Editor"}, {"ada", "Ada Admin"}, {"casey", "Casey Customer"},
	} {
		w.people[p.username] = mustSignUp(t, g, p.username, p.name)
	}
	olivia, eddie, ada, casey := w.people["olivia"], w.people["eddie"], w.people["ada"], w.people["casey"]

	// Creating a Page: bad input is refused naming the field.
	for _, tc := range []struct {
		rule  string
		body  map[string]any
		field string
	}{
		{"a Page needs a category", map[string]any{"node": "me/pages", "name": "Olivia's Coffee"}, "category"},
		{"a Page needs a name", map[string]any{"node": "me/pages", "category": "Coffee shop"}, "name"},
		{"a name is at most 100 code points", map[string]any{"node": "me/pages", "name": strings.Repeat("é", 101), "category": "Coffee shop"}, "name"},
		{"an unknown field is refused", map[string]any{"node": "me/pages", "name": "Olivia's Coffee", "category": "Coffee shop", "published": true}, "published"},
	} {
		res, body := w.post(t, olivia.SessionToken, tc.body, nil)
		e := wantGraphError(t, res, body, 400, 100, 0)
		if !strings.Contains(e.Error.Message, tc.field) {
			t.Fatalf("%s: the message does not name %s: %s", tc.rule, tc.field, body)
		}
	}
	res, body := w.post(t, "", map[string]any{"node": "me/pages", "name": "Olivia's Coffee", "category": "Coffee shop"}, nil)
	wantGraphError(t, res, body, 401, 104, 0)

	page := decode[struct{ ID string }](t, w.mustPost(t, olivia.SessionToken,
		map[string]any{"node": "me/pages", "name": "Olivia's Coffee", "category": "Coffee shop"})).ID
	if page == "" {
		t.Fatal("me/pages answered no id")
	}
	got := decode[struct {
		Role          string `json:"role"`
		Published     bool   `json:"published"`
		ChatSurfacing bool   `json:"chat_surfacing"`
		Merge         bool   `json:"inbox_merge_linked"`
		Category      string `json:"category"`
	}](t, w.mustGet(t, olivia.SessionToken, "page/"+page))
	if got.Role != "owner" || got.Published || got.ChatSurfacing || got.Merge || got.Category != "Coffee shop" {
		t.Fatalf("a new Page: %+v", got)
	}
	mine := decode[struct {
		Data []struct{ ID, Role string }
	}](t, w.mustGet(t, olivia.SessionToken, "me/pages"))
	if len(mine.Data) != 1 || mine.Data[0].ID != page || mine.Data[0].Role != "owner" {
		t.Fatalf("me/pages: %+v", mine)
	}
	// Unpublished, the Page receives nothing.
	res, body = w.mobile(t, casey.SessionToken, "/api/mobile/svcchat/page-messaging/messages", `{"pageId":"`+page+`","text":"Open today?"}`)
	wantGraphError(t, res, body, 403, 10, 2018304)

	w.mustPost(t, olivia.SessionToken, map[string]any{"node": "page/" + page, "published": true, "chat_surfacing": true, "inbox_merge_linked": true})
	res, body = w.post(t, olivia.SessionToken, map[string]any{"node": "page/" + page, "published": "yes"}, nil)
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "published") {
		t.Fatalf("a setting of the wrong type does not name it: %s", body)
	}

	// Roles: an editor and an admin; bad roles are refused naming the field.
	roles := "page/" + page + "/roles"
	w.mustPost(t, olivia.SessionToken, map[string]any{"node": roles, "user_id": eddie.UserID, "role": "editor"})
	w.mustPost(t, olivia.SessionToken, map[string]any{"node": roles, "user_id": ada.UserID, "role": "admin"})
	res, body = w.post(t, olivia.SessionToken, map[string]any{"node": roles, "user_id": casey.UserID, "role": "moderator"}, nil)
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "role") {
		t.Fatalf("an unknown role does not name the field: %s", body)
	}
	res, body = w.post(t, olivia.SessionToken, map[string]any{"node": roles, "user_id": "424242", "role": "editor"}, nil)
	wantGraphError(t, res, body, 404, 100, 33)
	list := decode[struct {
		Data []struct{ UserID, Name, Role string } `json:"data"`
	}](t, w.mustGet(t, eddie.SessionToken, roles))
	var people []string
	for _, p := range list.Data {
		people = append(people, p.Name+":"+p.Role)
	}
	if want := []string{"Olivia Owner:owner", "Ada Admin:admin", "Eddie Editor:editor"}; !slices.Equal(people, want) {
		t.Fatalf("roles = %v, want %v", people, want)
	}
	res, body = w.get(t, casey.SessionToken, url.Values{"node": {roles}})
	wantGraphError(t, res, body, 403, 200, 2069003)

	// The editor posts as the Page with a token of an app whose team they
	// are on, and replies in a customer's thread.
	app := decode[createdApp](t, w.mustPost(t, olivia.SessionToken, map[string]any{"node": "me/apps", "name": "Olivia's tools",
		"redirect_uris": []string{lifecycleRedirect}, "products": []string{"svcchat"}}))
	w.mustPost(t, olivia.SessionToken, map[string]any{"node": "app/" + app.ID + "/roles", "user_id": eddie.UserID, "role": "tester"})
	editorToken := w.userToken(t, app, "eddie", "pages:read", "pages:manage")
	res, body = w.post(t, editorToken, map[string]any{"node": "page/" + page + "/posts", "content": "Fresh croissants today", "audience": "everyone"}, nil)
	if res.StatusCode != 200 || decode[struct{ ID string }](t, body).ID == "" {
		t.Fatalf("the editor's post: %d %s", res.StatusCode, body)
	}
	res, body = w.post(t, editorToken, map[string]any{"node": "me/pages", "name": "Eddie's", "category": "Shop"}, nil)
	wantGraphError(t, res, body, 403, 200, 2069001) // creating a Page is first-party

	res, body = w.mobile(t, casey.SessionToken, "/api/mobile/svcchat/page-messaging/messages", `{"pageId":"`+page+`","text":"Open today?"}`)
	if res.StatusCode != 200 {
		t.Fatalf("the customer's message: %d %s", res.StatusCode, body)
	}
	conv := decode[struct{ ConversationID string }](t, body).ConversationID
	res, body = w.mobile(t, eddie.SessionToken, "/api/mobile/svcchat/page-messaging/reply", `{"conversationId":"`+conv+`","text":"Until six!"}`)
	if res.StatusCode != 200 {
		t.Fatalf("the editor's reply: %d %s", res.StatusCode, body)
	}
	res, body = w.mobile(t, casey.SessionToken, "/api/mobile/svcchat/page-messaging/reply", `{"conversationId":"`+conv+`","text":"me too"}`)
	wantGraphError(t, res, body, 403, 200, 2069003)

	// What an editor may not do: settings, roles, links, the owner's hand-over.
	for _, tc := range []struct {
		rule string
		call func() (*http.Response, []byte)
	}{
		{"an editor does not change the Page's settings", func() (*http.Response, []byte) {
			return w.post(t, editorToken, map[string]any{"node": "page/" + page, "published": false}, nil)
		}},
		{"an editor does not grant roles", func() (*http.Response, []byte) {
			return w.post(t, eddie.SessionToken, map[string]any{"node": roles, "user_id": casey.UserID, "role": "editor"}, nil)
		}},
		{"an editor does not remove others' roles", func() (*http.Response, []byte) {
			return w.del(t, eddie.SessionToken, roles+"/"+ada.UserID, nil)
		}},
		{"an editor does not link the Page to an app", func() (*http.Response, []byte) {
			return w.post(t, eddie.SessionToken, map[string]any{"node": "app/" + app.ID + "/page_links", "page_id": page, "products": []string{"svcchat"}}, nil)
		}},
		{"an editor does not hand a thread over (the owner's)", func() (*http.Response, []byte) {
			return w.mobile(t, eddie.SessionToken, "/api/mobile/svcchat/page-messaging/handover", `{"conversationId":"`+conv+`","mode":"svc_ai"}`)
		}},
	} {
		res, body := tc.call()
		if res.StatusCode != 403 || decode[graphError](t, body).Error.Subcode != 2069003 {
			t.Fatalf("%s: %d %s", tc.rule, res.StatusCode, body)
		}
	}

	// The admin: changes settings and grants editor, but not owner, and
	// does not touch the owner's role.
	w.mustPost(t, ada.SessionToken, map[string]any{"node": "page/" + page, "inbox_automation": false})
	res, body = w.post(t, ada.SessionToken, map[string]any{"node": roles, "user_id": casey.UserID, "role": "owner"}, nil)
	wantGraphError(t, res, body, 403, 200, 2069003)
	res, body = w.post(t, ada.SessionToken, map[string]any{"node": roles, "user_id": ada.UserID, "role": "owner"}, nil)
	wantGraphError(t, res, body, 403, 200, 2069003)
	res, body = w.del(t, ada.SessionToken, roles+"/"+olivia.UserID, nil)
	wantGraphError(t, res, body, 403, 200, 2069003)

	// The last owner can neither leave nor step down.
	res, body = w.del(t, olivia.SessionToken, roles+"/"+olivia.UserID, nil)
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "last owner") {
		t.Fatalf("the last owner leaving: %s", body)
	}
	res, body = w.post(t, olivia.SessionToken, map[string]any{"node": roles, "user_id": olivia.UserID, "role": "admin"}, nil)
	wantGraphError(t, res, body, 400, 100, 0)
	res, body = w.del(t, olivia.SessionToken, roles+"/"+casey.UserID, nil)
	wantGraphError(t, res, body, 404, 100, 33)

	// A removed editor is refused at once, here and in the plugins.
	if res, body := w.del(t, ada.SessionToken, roles+"/"+eddie.UserID, nil); res.StatusCode != 200 {
		t.Fatalf("the admin removing the editor: %d %s", res.StatusCode, body)
	}
	res, body = w.get(t, eddie.SessionToken, url.Values{"node": {roles}})
	wantGraphError(t, res, body, 403, 200, 2069003)
	res, body = w.post(t, editorToken, map[string]any{"node": "page/" + page + "/posts", "content": "One more", "audience": "everyone"}, nil)
	wantGraphError(t, res, body, 403, 200, 2069003)
	res, body = w.mobile(t, eddie.SessionToken, "/api/mobile/svcchat/page-messaging/reply", `{"conversationId":"`+conv+`","text":"Still here"}`)
	wantGraphError(t, res, body, 403, 200, 2069003)

	// Handing ownership over: then the first owner may leave.
	w.mustPost(t, olivia.SessionToken, map[string]any{"node": roles, "user_id": ada.UserID, "role": "owner"})
	if res, body := w.del(t, olivia.SessionToken, roles+"/"+olivia.UserID, nil); res.StatusCode != 200 {
		t.Fatalf("one of two owners leaving: %d %s", res.StatusCode, body)
	}
	res, body = w.get(t, olivia.SessionToken, url.Values{"node": {"page/" + page}, "fields": {"id,role"}})
	if res.StatusCode != 403 {
		t.Fatalf("the owner who left reads the Page: %d %s", res.StatusCode, body)
	}
}
