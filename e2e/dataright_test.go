package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
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

// parseSignedRequest is an app's check of Meta's signed request, as Meta's
// documentation writes parse_signed_request: split at the dot, decode the
// signature and the payload (base64url), and compare the signature with
// HMAC-SHA256 of the encoded payload keyed by the app secret.
func parseSignedRequest(signedRequest, secret string) (map[string]any, error) {
	encodedSig, payload, ok := strings.Cut(signedRequest, ".")
	if !ok {
		return nil, errors.New("no dot")
	}
	sig, err := base64.RawURLEncoding.DecodeString(encodedSig)
	if err != nil {
		return nil, err
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return nil, err
	}
	var data map[string]any
	if err := json.Unmarshal(raw, &data); err != nil {
		return nil, err
	}
	if data["algorithm"] != "HMAC-SHA256" {
		return nil, fmt.Errorf("algorithm %v", data["algorithm"])
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(payload))
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return nil, errors.New("bad signature")
	}
	return data, nil
}

type deletionRequests struct {
	Data []struct {
		AppID            string `json:"app_id"`
		Status           string `json:"status"`
		ConfirmationCode string `json:"confirmation_code"`
		URL              string `json:"url"`
		RequestedTime    string `json:"requested_time"`
	} `json:"data"`
}

// deletionReceiver is an app's data deletion callback: it verifies each
// signed request with the app's secret and answers a confirmation code.
type deletionReceiver struct {
	*httptest.Server
	users chan string
}

func newDeletionReceiver(t *testing.T, secret string) *deletionReceiver {
	r := &deletionReceiver{users: make(chan string, 16)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			http.Error(w, "not a form post", 400)
			return
		}
		data, err := parseSignedRequest(req.PostFormValue("signed_request"), secret)
		if err != nil {
			t.Errorf("signed request refused: %v", err)
			http.Error(w, err.Error(), 400)
			return
		}
		user, _ := data["user_id"].(string)
		if issued, _ := data["issued_at"].(float64); time.Since(time.Unix(int64(issued), 0)) > time.Minute {
			t.Errorf("issued_at %v", data["issued_at"])
		}
		r.users <- user
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"url":"https://orders.example/deletion?id=del-%s","confirmation_code":"del-%s"}`, user, user)
	}))
	t.Cleanup(r.Close)
	return r
}

// An app names a data deletion callback; when a person removes the app,
// the platform calls it with Meta's signed request, which the app verifies
// with its secret, and the app's confirmation is shown to the person.
func TestRemovingAnAppCallsItsDataDeletionCallback(t *testing.T) {
	t.Parallel()
	w := newLifecycleWorld(t)
	owner := w.c.Users["owner"]
	consumer := signInAt(t, w.g.URL, w.c.Users["consumer"].Username, w.c.Users["consumer"].Password)
	recv := newDeletionReceiver(t, w.app.ClientSecret)

	t.Run("the callback URL follows the webhooks' address rules and only a team Admin's session sets it", func(t *testing.T) {
		for _, bad := range []string{"ftp://orders.example/x", "http://example.com/deletion", "https://169.254.169.254/x", "not a url"} {
			res, body := w.post(t, w.session, map[string]any{"node": w.node(""), "data_deletion_callback_url": bad}, nil)
			if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "data_deletion_callback_url") {
				t.Fatalf("%s: refusal does not name the field: %s", bad, body)
			}
		}
		res, body := w.post(t, consumer, map[string]any{"node": w.node(""), "data_deletion_callback_url": recv.URL}, nil)
		wantGraphError(t, res, body, 403, 200, 2069004)
		res, body = w.post(t, w.app.APIKey, map[string]any{"node": w.node(""), "data_deletion_callback_url": recv.URL}, nil)
		wantGraphError(t, res, body, 403, 200, 2069001)
	})
	body := w.mustPost(t, w.session, map[string]any{"node": w.node(""), "data_deletion_callback_url": recv.URL + "/deletion"})
	if set := decode[struct {
		Success bool
		Mode    string
	}](t, body); !set.Success || set.Mode != "development" {
		t.Fatalf("set the callback: %s", body)
	}

	cfg := w.oauthConfig(w.app.ClientSecret, lifecycleRedirect, "public_profile")
	cb, verifier := w.authorize(t, cfg, owner.Username, owner.Password)
	tok, err := w.exchange(t, cfg, cb, verifier)
	if err != nil {
		t.Fatal(err)
	}
	ownerID := decode[struct{ ID string }](t, w.mustGet(t, w.session, "me")).ID
	if res, body := w.del(t, w.session, "me/authorized_apps/"+w.app.ID, nil); res.StatusCode != 200 {
		t.Fatalf("remove: %d %s", res.StatusCode, body)
	}
	select {
	case got := <-recv.users:
		if got != ownerID {
			t.Fatalf("the callback names user %q, want %q", got, ownerID)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the app's data deletion callback was not called")
	}
	var list deletionRequests
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		list = decode[deletionRequests](t, w.mustGet(t, w.session, "me/data_deletion_requests"))
		if len(list.Data) == 1 && list.Data[0].Status == "confirmed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the confirmation is not shown: %+v", list)
		}
	}
	if d := list.Data[0]; d.AppID != w.app.ID || d.ConfirmationCode != "del-"+ownerID ||
		d.URL != "https://orders.example/deletion?id=del-"+ownerID || d.RequestedTime == "" {
		t.Fatalf("deletion request = %+v", d)
	}

	t.Run("nobody else sees a person's deletion requests", func(t *testing.T) {
		if got := decode[deletionRequests](t, w.mustGet(t, consumer, "me/data_deletion_requests")); len(got.Data) != 0 {
			t.Fatalf("another person sees %+v", got)
		}
		res, body := w.get(t, w.app.APIKey, map[string][]string{"node": {"me/data_deletion_requests"}})
		wantGraphError(t, res, body, 403, 200, 2069001)
		// The removed app's own token is revoked.
		res, body = w.get(t, tok.AccessToken, map[string][]string{"node": {"me/data_deletion_requests"}})
		wantGraphError(t, res, body, 401, 190, 467)
	})
}
