package oauth_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/oauth"
)

// signInOnLoginPage posts the /login form as a browser and answers the
// status.
func (b *bundle) signInOnLoginPage(t *testing.T, username, password string) int {
	t.Helper()
	br := b.browser(t)
	p := br.Get(b.url + oauth.PathLogin)
	vals := url.Values{}
	for k, v := range p.Forms[0].Fields {
		vals[k] = v
	}
	vals.Set("username", username)
	vals.Set("password", password)
	req, _ := http.NewRequest(http.MethodPost, b.url+oauth.PathLogin, strings.NewReader(vals.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := br.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

// signInOnSessionAPI posts to the mobile session API (the console's too)
// and answers the status and the error code, if any.
func (b *bundle) signInOnSessionAPI(t *testing.T, username, password string) (status, code int) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"username": username, "password": password})
	res, err := http.Post(b.url+"/api/mobile/auth/session", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var e struct {
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	_ = json.NewDecoder(res.Body).Decode(&e)
	return res.StatusCode, e.Error.Code
}

// Many users share one address behind carrier NAT: their sign-ins must not
// lock each other out, whichever surface they use.
func TestSuccessfulSignInsFromOneAddressAreNeverThrottled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range 25 {
		if status := b.signInOnLoginPage(t, b.Owner.Username, b.Owner.Password); status != http.StatusOK {
			t.Fatalf("login page sign-in %d: status %d, want 200", i+1, status)
		}
		if status, code := b.signInOnSessionAPI(t, b.Consumer.Username, b.Consumer.Password); status != http.StatusOK {
			t.Fatalf("session API sign-in %d: status %d (code %d), want 200", i+1, status, code)
		}
	}
}

// A hundred failures from one address within 15 minutes make its next
// failures 429 (code 4) on every surface; a right password from the same
// address still signs in.
func TestAHundredFailedSignInsFromOneAddressMakeItsNextFailuresThrottled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range 100 {
		// A different account each time: no account lock is reached.
		if status, code := b.signInOnSessionAPI(t, fmt.Sprintf("sprayed%d", i), "wrong guess"); status != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d (code %d), want 401", i+1, status, code)
		}
	}
	if status, code := b.signInOnSessionAPI(t, "one-more", "wrong guess"); status != http.StatusTooManyRequests || code != 4 {
		t.Fatalf("failure 101 on the session API: status %d code %d, want 429 code 4", status, code)
	}
	if status := b.signInOnLoginPage(t, "one-more", "wrong guess"); status != http.StatusTooManyRequests {
		t.Fatalf("failure 102 on the login page: status %d, want 429", status)
	}
	if status, code := b.signInOnSessionAPI(t, b.Consumer.Username, b.Consumer.Password); status != http.StatusOK {
		t.Fatalf("a right password from the throttled address: status %d (code %d), want 200", status, code)
	}
	if status := b.signInOnLoginPage(t, b.Owner.Username, b.Owner.Password); status != http.StatusOK {
		t.Fatalf("a right password on the login page from the throttled address: status %d, want 200", status)
	}
}
