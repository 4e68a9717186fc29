// Package oauthtest drives the gateway's sign-in and consent pages the way
// a browser would, for tests of the OAuth code flow and the benchmarks'
// OAuth client (bench): a cookie jar, HTML
// forms parsed and submitted with their hidden fields (the CSRF token
// included), and a stop at the first redirect that leaves the gateway (the
// client's redirect URI, where nothing needs to listen).
package oauthtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// Agent is a user agent with cookies that stops at the first redirect
// leaving the gateway. Its methods return errors, for tools (the
// benchmarks' OAuth client); Browser wraps it for tests.
type Agent struct {
	Client *http.Client
}

// NewAgent returns an agent for the gateway at baseURL.
func NewAgent(baseURL string) (*Agent, error) {
	jar, _ := cookiejar.New(nil)
	base, err := url.Parse(baseURL)
	if err != nil {
		return nil, err
	}
	return &Agent{Client: &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if req.URL.Host != base.Host {
			return http.ErrUseLastResponse // the client's redirect URI: stop there
		}
		return nil
	}}}, nil
}

// Page is a fetched HTML page, or the redirect away from the gateway.
type Page struct {
	Status int
	URL    *url.URL
	// Location is set when the gateway redirected elsewhere.
	Location *url.URL
	Body     string
	Forms    []Form
}

// Form is one HTML form.
type Form struct {
	Action string
	Fields url.Values
	// Buttons are the name=value pairs of its named submit buttons.
	Buttons []url.Values
}

// Do sends a request and reads the answer.
func (a *Agent) Do(req *http.Request) (Page, error) {
	res, err := a.Client.Do(req)
	if err != nil {
		return Page{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return Page{}, err
	}
	p := Page{Status: res.StatusCode, URL: res.Request.URL, Body: string(body)}
	if loc := res.Header.Get("Location"); loc != "" && res.StatusCode >= 300 && res.StatusCode < 400 {
		p.Location, _ = res.Request.URL.Parse(loc)
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		if p.Forms, err = ParseForms(string(body)); err != nil {
			return Page{}, err
		}
	}
	return p, nil
}

// Get fetches a URL.
func (a *Agent) Get(ctx context.Context, u string) (Page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Page{}, err
	}
	return a.Do(req)
}

// Submit posts form f of page p with its fields, overridden by set, and the
// submit button whose value is button (none when "").
func (a *Agent) Submit(ctx context.Context, p Page, f Form, set url.Values, button string) (Page, error) {
	vals := url.Values{}
	for k, v := range f.Fields {
		vals[k] = v
	}
	for k, v := range set {
		vals[k] = v
	}
	if button != "" {
		found := false
		for _, b := range f.Buttons {
			for k, v := range b {
				if v[0] == button {
					vals.Set(k, v[0])
					found = true
				}
			}
		}
		if !found {
			return Page{}, fmt.Errorf("no button %q in form %+v", button, f)
		}
	}
	action, err := p.URL.Parse(f.Action)
	if err != nil {
		return Page{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, action.String(), strings.NewReader(vals.Encode()))
	if err != nil {
		return Page{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return a.Do(req)
}

// Browser is an Agent for tests: a failure fails the test.
type Browser struct {
	t      testing.TB
	agent  *Agent
	Client *http.Client
}

// NewBrowser returns a browser for the gateway at baseURL.
func NewBrowser(t testing.TB, baseURL string) *Browser {
	a, err := NewAgent(baseURL)
	if err != nil {
		t.Fatal(err)
	}
	return &Browser{t: t, agent: a, Client: a.Client}
}

// Do sends a request and reads the answer.
func (br *Browser) Do(req *http.Request) Page {
	br.t.Helper()
	p, err := br.agent.Do(req)
	if err != nil {
		br.t.Fatal(err)
	}
	return p
}

// Get fetches a URL.
func (br *Browser) Get(u string) Page {
	br.t.Helper()
	p, err := br.agent.Get(context.Background(), u)
	if err != nil {
		br.t.Fatal(err)
	}
	return p
}

// Submit posts form f of page p with its fields, overridden by set, and the
// submit button whose value is button (none when "").
func (br *Browser) Submit(p Page, f Form, set url.Values, button string) Page {
	br.t.Helper()
	next, err := br.agent.Submit(context.Background(), p, f, set, button)
	if err != nil {
		br.t.Fatal(err)
	}
	return next
}

// Authorize runs the browser side of the code flow: it opens authURL, signs
// in with username and password when the login page shows, presses the
// consent button decision ("allow" or "deny") when the consent page shows,
// and returns the URL the gateway finally redirected to.
func (br *Browser) Authorize(authURL, username, password, decision string) *url.URL {
	br.t.Helper()
	return br.AuthorizeWith(authURL, username, password, decision, nil)
}

// AuthorizeWith is Authorize that sets the consent form's fields set
// before pressing decision: {"page_id": ids} chooses those Pages (and no
// other) where the consent page asks which.
func (br *Browser) AuthorizeWith(authURL, username, password, decision string, set url.Values) *url.URL {
	br.t.Helper()
	p := br.Get(authURL)
	if p.Location != nil {
		return p.Location
	}
	if strings.HasSuffix(p.URL.Path, "/login") {
		if len(p.Forms) != 1 {
			br.t.Fatalf("login page has %d forms:\n%s", len(p.Forms), p.Body)
		}
		p = br.Submit(p, p.Forms[0], url.Values{"username": {username}, "password": {password}}, "")
		if p.Location != nil {
			return p.Location
		}
	}
	if p.Status != http.StatusOK || len(p.Forms) != 1 {
		br.t.Fatalf("expected the consent page, got %d at %s:\n%s", p.Status, p.URL, p.Body)
	}
	p = br.Submit(p, p.Forms[0], set, decision)
	if p.Location == nil {
		br.t.Fatalf("consent did not redirect: %d %s", p.Status, p.Body)
	}
	return p.Location
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// ParseForms returns the forms of an HTML document: the fields a browser
// would send as they stand (checked checkboxes only, each of them).
func ParseForms(body string) ([]Form, error) {
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	var forms []Form
	var cur *Form
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			attr := func(k string) string {
				for _, a := range n.Attr {
					if a.Key == k {
						return a.Val
					}
				}
				return ""
			}
			switch n.Data {
			case "form":
				forms = append(forms, Form{Action: attr("action"), Fields: url.Values{}})
				cur = &forms[len(forms)-1]
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
				cur = nil
				return
			case "input":
				name, typ := attr("name"), attr("type")
				switch {
				case cur == nil || name == "" || typ == "submit":
				case typ == "checkbox" || typ == "radio":
					// A browser sends the checked ones only, each.
					if hasAttr(n, "checked") {
						v := attr("value")
						if v == "" {
							v = "on"
						}
						cur.Fields.Add(name, v)
					}
				default:
					cur.Fields.Set(name, attr("value"))
				}
			case "button":
				if cur != nil && attr("name") != "" {
					cur.Buttons = append(cur.Buttons, url.Values{attr("name"): {attr("value")}})
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return forms, nil
}
