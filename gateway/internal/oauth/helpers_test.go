package oauth_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	"github.com/svcplatform/svc/gateway/internal/oauth"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/server"
	"github.com/svcplatform/svc/internal/oauthtest"
)

func TestMain(m *testing.M) { identitytest.Main(m) }

// bundle is a gateway HTTP server on loopback with the OAuth server
// registered, over a fresh World.
type bundle struct {
	*identitytest.World
	authn  *auth.Authenticator
	as     *oauth.Server
	url    string
	client *http.Client // no cookies, no redirects followed
}

func setup(t testing.TB) *bundle {
	t.Helper()
	w := identitytest.NewWorld(t)
	return setupOn(t, w, w.IDs)
}

// setupOn serves the World through ids (which may use another pool).
func setupOn(t testing.TB, w *identitytest.World, ids *identity.Service) *bundle {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	authn := auth.New(ids, auth.Options{})
	as, err := oauth.New(context.Background(), oauth.Options{Issuer: base, Identity: ids, Auth: authn})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Options{Metrics: observe.NewMetrics(), Ready: func(context.Context) error { return nil }})
	as.Register(srv)
	srv.Handle("/api/mobile/auth/session", authn.SessionHandler())
	ts := httptest.NewUnstartedServer(srv)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	return &bundle{World: w, authn: authn, as: as, url: base, client: &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// config is an x/oauth2 client of the World's app.
func (b *bundle) config(scopes ...string) *oauth2.Config {
	return &oauth2.Config{
		ClientID: b.App.ClientID, ClientSecret: b.App.ClientSecret, RedirectURL: identitytest.RedirectURI, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: b.url + oauth.PathAuthorize, TokenURL: b.url + oauth.PathToken,
			AuthStyle: oauth2.AuthStyleInHeader},
	}
}

// browser is a user agent with cookies on the bundle's gateway.
type browser struct{ *oauthtest.Browser }

func (b *bundle) browser(t testing.TB) browser { return browser{oauthtest.NewBrowser(t, b.url)} }

// authorize runs the browser side of the code flow as who.
func (br browser) authorize(authURL string, who identitytest.Person, decision string) *url.URL {
	return br.Authorize(authURL, who.Username, who.Password, decision)
}

// postForm posts a form to the gateway with optional basic credentials.
func (b *bundle) postForm(t testing.TB, path string, vals url.Values, basicID, basicSecret string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.url+path, strings.NewReader(vals.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basicID != "" {
		req.SetBasicAuth(url.QueryEscape(basicID), url.QueryEscape(basicSecret))
	}
	res, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	body, _ := io.ReadAll(res.Body)
	if len(body) > 0 {
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("%s answered %d with non-JSON %q", path, res.StatusCode, body)
		}
	}
	return res.StatusCode, out
}

// clientPost posts with the World app's credentials in the body.
func (b *bundle) clientPost(t testing.TB, path string, vals url.Values) (int, map[string]any) {
	vals.Set("client_id", b.App.ClientID)
	vals.Set("client_secret", b.App.ClientSecret)
	return b.postForm(t, path, vals, "", "")
}

func jsonDecode(res *http.Response, v any) error { return json.NewDecoder(res.Body).Decode(v) }
