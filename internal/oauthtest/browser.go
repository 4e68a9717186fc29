// Package oauthtest drives the gateway's sign-in and consent pages the way
// a browser would, for tests of the OAuth code flow: a cookie jar, HTML
// forms parsed and submitted with their hidden fields (the CSRF token
// included), and a stop at the first redirect that leaves the gateway (the
// client's redirect URI, where nothing needs to listen).
package oauthtest

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// Browser is a user agent with cookies.
type Browser struct {
	t      testing.TB
	Client *http.Client
}

// NewBrowser returns a browser for the gateway at baseURL.
func NewBrowser(t testing.TB, baseURL string) *Browser {
	jar, _ := cookiejar.New(nil)
	base, err := url.Parse(baseURL)
	if err != nil {
		t.Fatal(err)
	}
	return &Browser{t: t, Client: &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if req.URL.Host != base.Host {
			return http.ErrUseLastResponse
		}
		return nil
	}}}
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
func (br *Browser) Do(req *http.Request) Page {
	br.t.Helper()
	res, err := br.Client.Do(req)
	if err != nil {
		br.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	p := Page{Status: res.StatusCode, URL: res.Request.URL, Body: string(body)}
	if loc := res.Header.Get("Location"); loc != "" && res.StatusCode >= 300 && res.StatusCode < 400 {
		p.Location, _ = res.Request.URL.Parse(loc)
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		p.Forms = ParseForms(br.t, string(body))
	}
	return p
}

// Get fetches a URL.
func (br *Browser) Get(u string) Page {
	br.t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		br.t.Fatal(err)
	}
	return br.Do(req)
}

// Submit posts form f of page p with its fields, overridden by set, and the
// submit button whose value is button (none when "").
func (br *Browser) Submit(p Page, f Form, set url.Values, button string) Page {
	br.t.Helper()
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
			br.t.Fatalf("no button %q in form %+v", button, f)
		}
	}
	action, _ := p.URL.Parse(f.Action)
	req, _ := http.NewRequest(http.MethodPost, action.String(), strings.NewReader(vals.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return br.Do(req)
}

// Authorize runs the browser side of the code flow: it opens authURL, signs
// in with username and password when the login page shows, presses the
// consent button decision ("allow" or "deny") when the consent page shows,
// and returns the URL the gateway finally redirected to.
func (br *Browser) Authorize(authURL, username, password, decision string) *url.URL {
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
	p = br.Submit(p, p.Forms[0], nil, decision)
	if p.Location == nil {
		br.t.Fatalf("consent did not redirect: %d %s", p.Status, p.Body)
	}
	return p.Location
}

// ParseForms returns the forms of an HTML document.
func ParseForms(t testing.TB, body string) []Form {
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
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
				if cur != nil && attr("name") != "" && attr("type") != "submit" {
					cur.Fields.Set(attr("name"), attr("value"))
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
	return forms
}
