package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

type authorizedApps struct {
	Data []struct {
		AppID       string   `json:"app_id"`
		Name        string   `json:"name"`
		Scopes      []string `json:"scopes"`
		GrantedTime string   `json:"granted_time"`
	} `json:"data"`
}

func (a authorizedApps) has(appID string) bool {
	return slices.ContainsFunc(a.Data, func(x struct {
		AppID       string   `json:"app_id"`
		Name        string   `json:"name"`
		Scopes      []string `json:"scopes"`
		GrantedTime string   `json:"granted_time"`
	}) bool {
		return x.AppID == appID
	})
}

// A person sees the apps they authorized with their scopes and removes one:
// its consent and every token of theirs for it end at once (CONTRACT §16).
// Only the person's own session removes; nobody reaches another person's
// consents.
func TestAPersonListsAndRemovesTheAppsTheyAuthorized(t *testing.T) {
	t.Parallel()
	w := newLifecycleWorld(t)
	owner := w.c.Users["owner"]
	consumer := signInAt(t, w.g.URL, w.c.Users["consumer"].Username, w.c.Users["consumer"].Password)

	cfg := w.oauthConfig(w.app.ClientSecret, lifecycleRedirect, "public_profile", "pages:read")
	cb, verifier := w.authorize(t, cfg, owner.Username, owner.Password)
	tok, err := w.exchange(t, cfg, cb, verifier)
	if err != nil {
		t.Fatal(err)
	}

	list := decode[authorizedApps](t, w.mustGet(t, w.session, "me/authorized_apps"))
	var found bool
	for _, a := range list.Data {
		if a.AppID != w.app.ID {
			continue
		}
		found = true
		if a.Name != "Orders bot" || !slices.Equal(a.Scopes, []string{"pages:read", "public_profile"}) {
			t.Fatalf("authorized app = %+v", a)
		}
		if at, err := time.Parse(time.RFC3339, a.GrantedTime); err != nil || time.Since(at) > time.Minute {
			t.Fatalf("granted_time = %q (%v)", a.GrantedTime, err)
		}
	}
	if !found {
		t.Fatalf("the app just authorized is not listed: %+v", list)
	}
	// A user token with public_profile reads the same list.
	if got := decode[authorizedApps](t, w.mustGet(t, tok.AccessToken, "me/authorized_apps")); !got.has(w.app.ID) {
		t.Fatalf("the user token's list: %+v", got)
	}

	t.Run("refusals", func(t *testing.T) {
		// An app's key has no person's list.
		res, body := w.get(t, w.app.APIKey, map[string][]string{"node": {"me/authorized_apps"}})
		wantGraphError(t, res, body, 403, 200, 2069001)
		// Another person sees none of the owner's apps and cannot remove them.
		if got := decode[authorizedApps](t, w.mustGet(t, consumer, "me/authorized_apps")); got.has(w.app.ID) {
			t.Fatalf("another person's list shows the owner's app: %+v", got)
		}
		res, body = w.del(t, consumer, "me/authorized_apps/"+w.app.ID, nil)
		wantGraphError(t, res, body, 404, 100, 33)
		// Removing is the person's own session: not a token, not the app.
		res, body = w.del(t, tok.AccessToken, "me/authorized_apps/"+w.app.ID, nil)
		wantGraphError(t, res, body, 403, 200, 2069001)
		res, body = w.del(t, w.app.APIKey, "me/authorized_apps/"+w.app.ID, nil)
		wantGraphError(t, res, body, 403, 200, 2069001)
		// Unknown apps.
		for _, id := range []string{"999999999999999", "abc"} {
			res, body = w.del(t, w.session, "me/authorized_apps/"+id, nil)
			wantGraphError(t, res, body, 404, 100, 33)
		}
		// Still authorized after every refusal.
		w.mustGet(t, tok.AccessToken, "me")
	})

	res, body := w.del(t, w.session, "me/authorized_apps/"+w.app.ID, nil)
	if res.StatusCode != 200 || string(body) != `{"success":true}` {
		t.Fatalf("remove: %d %s", res.StatusCode, body)
	}
	// The access token is refused at once, its refresh token too.
	res, body = w.get(t, tok.AccessToken, map[string][]string{"node": {"me"}})
	wantGraphError(t, res, body, 401, 190, 467)
	if _, err := cfg.TokenSource(context.Background(), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err == nil {
		t.Fatal("the refresh token of a removed app still works")
	}
	if got := decode[authorizedApps](t, w.mustGet(t, w.session, "me/authorized_apps")); got.has(w.app.ID) {
		t.Fatalf("a removed app is still listed: %+v", got)
	}
	res, body = w.del(t, w.session, "me/authorized_apps/"+w.app.ID, nil)
	wantGraphError(t, res, body, 404, 100, 33)
}
