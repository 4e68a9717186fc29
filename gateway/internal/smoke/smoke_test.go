package smoke

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestACredentialsFileLackingAFieldIsRefusedNamingIt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(path, []byte(`{"app":{"id":"1","client_id":"c"},"page":{"id":"2"},
		"users":{"owner":{"username":"o","password":"p"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), "app.client_secret") || !strings.Contains(err.Error(), "users.consumer") {
		t.Fatalf("Load: %v", err)
	}
}

func TestTheSignInAndConsentFormsAreReadWithTheirHiddenFields(t *testing.T) {
	t.Parallel()
	forms := parseForms([]byte(`<html><body><form action="/oauth/login" method="post">
<input type="hidden" name="csrf" value="t1"><input name="username"><input type="password" name="password">
<button type="submit">Sign in</button></form></body></html>`))
	if len(forms) != 1 || forms[0].action != "/oauth/login" || forms[0].fields.Get("csrf") != "t1" {
		t.Fatalf("forms %+v", forms)
	}
	if _, ok := forms[0].fields["password"]; !ok {
		t.Fatalf("no password field: %+v", forms[0])
	}
}

// The receiver answers the handshake only with its verify token and keeps
// only deliveries signed with the app's secret.
func TestTheReceiverKeepsOnlyDeliveriesSignedWithTheAppsSecret(t *testing.T) {
	t.Parallel()
	v := &receiver{secret: "s3cret", verify: "vt"}
	srv := httptest.NewServer(v)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/hook?hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=c")
	if err != nil || res.StatusCode != 403 {
		t.Fatalf("a wrong verify token: %v %v", res, err)
	}
	post := func(body, secret string) int {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(body))
		req, _ := http.NewRequest("POST", srv.URL+"/hook", strings.NewReader(body))
		req.Header.Set("X-Svc-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := post(`{"type":"page.message.received","data":{"text":"forged"}}`, "other"); got != 401 {
		t.Fatalf("a forged delivery answered %d", got)
	}
	if got := post(`{"type":"page.message.received","data":{"text":"hi"}}`, "s3cret"); got != 204 {
		t.Fatalf("a signed delivery answered %d", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := v.wait(ctx, "page.message.received", "text", "hi"); err != nil {
		t.Fatal(err)
	}
	if _, err := v.wait(ctx, "page.message.received", "text", "forged"); err == nil || !strings.Contains(err.Error(), "wrong signature") {
		t.Fatalf("the forged delivery: %v", err)
	}
}

// A run against a platform that is not there fails every step, the
// dependent ones as not run, and says so in the tally.
func TestARunAgainstNothingFailsEveryStepNamingIt(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	var out strings.Builder
	c := Credentials{Users: map[string]User{"owner": {Username: "o"}, "consumer": {Username: "c"}}}
	failed := Run(context.Background(), Options{BaseURL: srv.URL, Creds: c, StepTimeout: 5 * time.Second, Out: &out})
	if failed != 6 || !strings.HasSuffix(out.String(), "0 passed, 6 failed\n") ||
		!strings.Contains(out.String(), "FAIL me/pages: not run: needs oauth") || !strings.Contains(out.String(), "FAIL completion: POST /v1/chat/completions answered 404") {
		t.Fatalf("%d failed:\n%s", failed, out.String())
	}
}
