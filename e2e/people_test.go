package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/svcplatform/svc/internal/browsertest"
	"github.com/svcplatform/svc/internal/gatewaytest"
	"github.com/svcplatform/svc/internal/pgtest"
)

// signUp posts to the mobile sign-up endpoint.
func signUp(t *testing.T, g *gatewaytest.Gateway, body map[string]any) (*http.Response, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	return do(t, "POST", g.URL+"/api/mobile/auth/signup", strings.NewReader(string(b)),
		map[string]string{"Content-Type": "application/json"})
}

type signedUp struct {
	UserID       string `json:"userId"`
	SessionToken string `json:"sessionToken"`
}

// mustSignUp signs a person up and answers the new user's id and session.
func mustSignUp(t *testing.T, g *gatewaytest.Gateway, username, name string) signedUp {
	t.Helper()
	res, body := signUp(t, g, map[string]any{"username": username, "password": "a long enough secret", "name": name})
	s := decode[signedUp](t, body)
	if res.StatusCode != http.StatusCreated || s.UserID == "" || s.SessionToken == "" {
		t.Fatalf("sign up %s: %d %s", username, res.StatusCode, body)
	}
	return s
}

// On a platform without the development seed, a person signs up on the
// mobile API (201, their id and a session), the session is the one of
// /api/mobile/auth/session and works on the Graph, and the password signs
// in afterwards.
func TestAPersonSignsUpOnTheMobileAPIAndUsesTheSession(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{Args: []string{"--no-dev-seed"}})
	s := mustSignUp(t, g, "nia.newcomer", "Nia Newcomer")

	res, body := do(t, "GET", g.URL+"/api/mobile/auth/session", nil, map[string]string{"Authorization": "Bearer " + s.SessionToken})
	if res.StatusCode != 200 || !strings.Contains(string(body), `"userId":"`+s.UserID+`"`) {
		t.Fatalf("the sign-up's session at /api/mobile/auth/session: %d %s", res.StatusCode, body)
	}
	w := &graphWorld{g: g}
	res, body = w.get(t, s.SessionToken, url.Values{"node": {"me"}})
	me := decode[struct{ ID, Name string }](t, body)
	if res.StatusCode != 200 || me.ID != s.UserID || me.Name != "Nia Newcomer" {
		t.Fatalf("me with the sign-up's session: %d %s", res.StatusCode, body)
	}
	if tok := signInAt(t, g.URL, "nia.newcomer", "a long enough secret"); tok == s.SessionToken {
		t.Fatal("signing in answered the sign-up's session again")
	}
}

// Every refusal of sign-up (CONTRACT §16): 400, code 100, the message
// naming the field; and 403, code 200 when the operator closed sign-up,
// where /signup shows no form and /login no link to it.
func TestSignUpRefusesBadUsernamesAndPasswordsAndClosedSignUp(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{Args: []string{"--no-dev-seed"}})
	mustSignUp(t, g, "taken", "")
	for _, tc := range []struct {
		rule, username, password, field string
	}{
		{"a username shorter than 3 characters", "ab", "a long enough secret", "username"},
		{"a username longer than 64 characters", strings.Repeat("a", 65), "a long enough secret", "username"},
		{"a username with a character outside [a-z0-9._-]", "Nia!", "a long enough secret", "username"},
		{"a taken username", "taken", "a long enough secret", "username"},
		{"a password shorter than 10 code points", "nia", "ÿÿÿÿÿÿÿÿÿ", "password"},
		{"a common password", "nia", "Password123", "password"},
		{"another common password", "nia", "qwertyuiop", "password"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			res, body := signUp(t, g, map[string]any{"username": tc.username, "password": tc.password, "name": "Nia"})
			e := wantGraphError(t, res, body, 400, 100, 0)
			if !strings.Contains(e.Error.Message, tc.field) {
				t.Fatalf("the refusal does not name %s: %s", tc.field, body)
			}
		})
	}
	// None of the refused attempts made an account.
	res, body := signUp(t, g, map[string]any{"username": "nia", "password": "a long enough secret"})
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("nia after the refusals: %d %s", res.StatusCode, body)
	}

	t.Run("closed sign-up", func(t *testing.T) {
		t.Parallel()
		closed := gatewaytest.Start(t, gatewaytest.Options{Args: []string{"--no-dev-seed"}, Env: []string{"SVC_SIGNUP=closed"}})
		res, body := signUp(t, closed, map[string]any{"username": "nia", "password": "a long enough secret"})
		wantGraphError(t, res, body, 403, 200, 0)
		res, body = do(t, "GET", closed.URL+"/signup", nil, nil)
		if res.StatusCode != 403 || strings.Contains(string(body), "<form") {
			t.Fatalf("/signup when closed: %d %s", res.StatusCode, body)
		}
		res, body = do(t, "GET", closed.URL+"/login", nil, nil)
		if res.StatusCode != 200 || strings.Contains(string(body), `href="/signup`) {
			t.Fatalf("/login links to sign-up when it is closed: %s", body)
		}
	})
}

// A person in a real browser follows /login's link to /signup, fills the
// form in, and lands signed in where /login would have sent them (next):
// the browser's session cookie is the new person's. The form has the login
// page's security headers and refuses a submission without its CSRF token.
func TestAPersonInABrowserSignsUpFromTheLoginPagesLink(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})

	res, body := do(t, "GET", g.URL+"/signup", nil, nil)
	if res.StatusCode != 200 || res.Header.Get("Content-Security-Policy") == "" || res.Header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("/signup: %d, headers %v", res.StatusCode, res.Header)
	}
	if !strings.Contains(string(body), `name="csrf_token"`) {
		t.Fatalf("/signup has no CSRF token: %s", body)
	}
	res, body = do(t, "POST", g.URL+"/signup", strings.NewReader(url.Values{"username": {"forged"},
		"password": {"a long enough secret"}}.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if res.StatusCode != 403 {
		t.Fatalf("a sign-up without the CSRF token: %d %s", res.StatusCode, body)
	}

	b := browsertest.New(t)
	b.Do("open the login page", chromedp.Navigate(g.URL+"/login?next="+url.QueryEscape("/developers/console")),
		chromedp.WaitVisible(chromedp.ID("signup")))
	b.Do("follow its sign-up link", chromedp.Click(chromedp.ID("signup")), chromedp.WaitVisible(chromedp.ID("password")))
	b.Shot("signup")
	b.Do("try a common password",
		chromedp.SendKeys(chromedp.ID("name"), "Bea Browser"),
		chromedp.SendKeys(chromedp.ID("username"), "bea"),
		chromedp.SendKeys(chromedp.ID("password"), "basketball"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("error")))
	if msg := browsertest.Get(b, "read the refusal", chromedp.Text(chromedp.ID("error"))); !strings.Contains(msg, "common") {
		t.Fatalf("refusal of a common password: %q", msg)
	}
	// The form keeps the name and username; the password is typed again.
	if v := browsertest.Get(b, "read the kept username", chromedp.Value(chromedp.ID("username"))); v != "bea" {
		t.Fatalf("the refused form lost the username: %q", v)
	}
	b.Do("choose a better one",
		chromedp.SendKeys(chromedp.ID("password"), "bea's long browser secret"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)))
	var path string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		loc := browsertest.Get(b, "read the location", chromedp.Location())
		if u, err := url.Parse(loc); err == nil && strings.HasPrefix(u.Path, "/developers/console") {
			path = u.Path
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if path == "" {
		t.Fatal("the sign-up did not continue to next (/developers/console)")
	}
	b.Shot("continued")
	b.Do("read the browser's session", chromedp.Navigate(g.URL+"/api/mobile/auth/session"))
	session := browsertest.Get(b, "read the session", chromedp.Text(chromedp.CSS("body")))
	var s struct{ UserID string }
	if err := json.Unmarshal([]byte(session), &s); err != nil || s.UserID == "" {
		t.Fatalf("the browser is not signed in: %q", session)
	}
	_, body = (&graphWorld{g: g}).get(t, signInAt(t, g.URL, "bea", "bea's long browser secret"), url.Values{"node": {"me"}})
	me := decode[struct{ ID, Name string }](t, body)
	if me.ID != s.UserID || me.Name != "Bea Browser" {
		t.Fatalf("the browser's session is %s, bea is %+v", s.UserID, me)
	}
}

// staffQueue calls the staff App Review queue with a session.
func staffQueue(t *testing.T, g *gatewaytest.Gateway, session string) int {
	t.Helper()
	res, _ := do(t, "GET", g.URL+"/api/developers/admin/app-review", nil, map[string]string{"Authorization": "Bearer " + session})
	return res.StatusCode
}

// setStaff calls the admin API's staff endpoint with token.
func setStaff(t *testing.T, g *gatewaytest.Gateway, token, userID, body string) (*http.Response, []byte) {
	t.Helper()
	h := map[string]string{"Content-Type": "application/json"}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return do(t, "POST", g.URL+"/api/admin/users/"+userID+"/staff", strings.NewReader(body), h)
}

// The operator grants staff with the admin token: the person's session,
// already used (and cached) before, is staff at the next request; revoked,
// it is refused again at once.
func TestTheOperatorGrantsAndRevokesStaffWithTheAdminAPI(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	p := mustSignUp(t, g, "sam.soon.staff", "Sam")
	if got := staffQueue(t, g, p.SessionToken); got != 403 {
		t.Fatalf("the staff queue before the grant: %d", got)
	}
	res, body := setStaff(t, g, c.AdminToken, p.UserID, `{"staff":true}`)
	granted := decode[struct {
		ID    string `json:"id"`
		Staff bool   `json:"staff"`
	}](t, body)
	if res.StatusCode != 200 || granted.ID != p.UserID || !granted.Staff {
		t.Fatalf("grant: %d %s", res.StatusCode, body)
	}
	if got := staffQueue(t, g, p.SessionToken); got != 200 {
		t.Fatalf("the staff queue right after the grant: %d", got)
	}
	res, body = setStaff(t, g, c.AdminToken, p.UserID, `{"staff":false}`)
	if res.StatusCode != 200 || !strings.Contains(string(body), `"id":"`+p.UserID+`"`) || strings.Contains(string(body), `"staff":true`) {
		t.Fatalf("revoke: %d %s", res.StatusCode, body)
	}
	if got := staffQueue(t, g, p.SessionToken); got != 403 {
		t.Fatalf("the staff queue right after the revocation: %d", got)
	}
	res, body = setStaff(t, g, c.AdminToken, p.UserID, `{}`)
	if e := wantGraphError(t, res, body, 400, 100, 0); !strings.Contains(e.Error.Message, "staff") {
		t.Fatalf("a body without staff: %s", body)
	}
	res, body = setStaff(t, g, c.AdminToken, "999999999", `{"staff":true}`)
	wantGraphError(t, res, body, 404, 100, 33)
}

// No credential but the operator's admin token grants staff: not a user's
// session (not even a staff member's), not a user token, not an app key;
// without a credential it is 401.
func TestAUserOrAppCredentialCannotGrantStaff(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := g.Credentials(t)
	p := mustSignUp(t, g, "mallory", "Mallory")
	for _, tc := range []struct{ who, token string }{
		{"the person's own session", p.SessionToken},
		{"a staff member's session", signInAt(t, g.URL, c.Users["staff"].Username, c.Users["staff"].Password)},
		{"a user access token", g.UserToken(t, "owner", "public_profile")},
		{"an app key", c.App.APIKey},
	} {
		t.Run(tc.who, func(t *testing.T) {
			res, body := setStaff(t, g, tc.token, p.UserID, `{"staff":true}`)
			wantGraphError(t, res, body, 403, 200, 2069006)
		})
	}
	res, body := setStaff(t, g, "", p.UserID, `{"staff":true}`)
	wantGraphError(t, res, body, 401, 104, 0)
	if got := staffQueue(t, g, p.SessionToken); got != 403 {
		t.Fatalf("the person became staff: %d", got)
	}
}

// `gateway admin staff --user <id>` grants staff from the command line,
// beside the running gateway, on the installation's database; `--revoke`
// takes it back. The running gateway sees each within its cache bound.
func TestGatewayAdminStaffGrantsAndRevokesStaffOnTheCommandLine(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	g := gatewaytest.Start(t, gatewaytest.Options{DatabaseURL: db, Args: []string{"--no-dev-seed"}})
	p := mustSignUp(t, g, "cli.staff", "Cli")
	env := []string{"SVC_DATABASE_URL=" + db}
	dir := t.TempDir()

	out, errOut, ok := gatewayCommand(t, dir, env, "admin", "staff", "--user", p.UserID)
	if !ok || !strings.Contains(out, p.UserID) {
		t.Fatalf("gateway admin staff: ok=%v stdout=%q stderr=%s", ok, out, errOut)
	}
	waitUntil(t, 5*time.Second, "the grant to be seen", func() bool { return staffQueue(t, g, p.SessionToken) == 200 })
	if _, errOut, ok := gatewayCommand(t, dir, env, "admin", "staff", "--user", p.UserID, "--revoke"); !ok {
		t.Fatalf("gateway admin staff --revoke: %s", errOut)
	}
	waitUntil(t, 5*time.Second, "the revocation to be seen", func() bool { return staffQueue(t, g, p.SessionToken) == 403 })
	if _, errOut, ok := gatewayCommand(t, dir, env, "admin", "staff", "--user", "999999999"); ok || !strings.Contains(errOut, "999999999") {
		t.Fatalf("an unknown user: ok=%v %s", ok, errOut)
	}
	if out, _, ok := gatewayCommand(t, dir, nil, "help"); !ok || !strings.Contains(out, "admin staff --user") {
		t.Fatalf("gateway help does not list admin staff:\n%s", out)
	}
}
