package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/readpool"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

const base = "https://svc.example"

// namedPage is OnePage with a name, published or not.
type namedPage struct {
	plugintest.OnePage
	unpublished bool
}

func (h namedPage) PageAccess(ctx context.Context, q sdk.PageQuery) (*sdk.PageAccess, error) {
	a, err := h.OnePage.PageAccess(ctx, q)
	if err == nil && a.Exists {
		a.Name, a.Published = "Olivia's Coffee", !h.unpublished
	}
	return a, err
}

// embedSetup runs the plugin with a named Page; posts returns the ids of a
// post for everyone, for followers and for only_me, in that order.
func embedSetup(t *testing.T, unpublished bool) (*plugintest.Plugin, []string) {
	t.Helper()
	pool := plugintest.Database(t)
	p := sdk.New(sdk.Info{Name: "book", Version: version, Events: []string{EventPostCreated}})
	db, err := readpool.Open(pool, 4, p.Logger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	newService(pool, db).register(p)
	host := namedPage{OnePage: plugintest.OnePage{PageID: page, Admins: []string{pageAdmin}, LinkedApps: []string{linkedApp}}, unpublished: unpublished}
	tp := plugintest.Start(t, p, plugintest.WithHost(host))
	var ids []string
	for _, audience := range []string{"everyone", "followers", "only_me"} {
		res, err := plugintest.CallT[*bookv1.CreatePostResponse](t, tp, "/svc.book.v1.BookService/CreatePost", admin,
			&bookv1.CreatePostRequest{PageId: page, Content: "Open <b>on</b> Sunday & Monday", Audience: audience})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.GetId())
	}
	return tp, ids
}

func oembedCall(t *testing.T, tp *plugintest.Plugin, q url.Values) (*pluginv1.HttpResponse, map[string]any) {
	t.Helper()
	res, err := plugintest.CallT[*pluginv1.HttpResponse](t, tp, "/svc.book.v1.BookService/OEmbed", sdk.Principal{},
		&pluginv1.HttpRequest{Path: "/api/v1/oembed", Query: q.Encode(), BaseUrl: base})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(res.GetBody(), &doc); err != nil {
		t.Fatalf("oembed body %q: %v", res.GetBody(), err)
	}
	return res, doc
}

// envelopeOf is the §3 error of a refusal's body.
func envelopeOf(t *testing.T, doc map[string]any) (code, subcode float64, message string) {
	t.Helper()
	e, ok := doc["error"].(map[string]any)
	if !ok {
		t.Fatalf("not an error envelope: %v", doc)
	}
	for _, k := range []string{"message", "type", "code", "error_subcode", "fbtrace_id", "is_transient"} {
		if _, ok := e[k]; !ok {
			t.Errorf("the envelope lacks %s: %v", k, e)
		}
	}
	return e["code"].(float64), e["error_subcode"].(float64), e["message"].(string)
}

func TestOEmbedOfAPostForEveryoneIsARichDocumentWithTheBlockquoteAndTheScript(t *testing.T) {
	t.Parallel()
	tp, ids := embedSetup(t, false)
	postURL := base + "/posts/" + ids[0]
	res, doc := oembedCall(t, tp, url.Values{"url": {postURL}})
	if res.GetStatus() != http.StatusOK {
		t.Fatalf("status %d: %v", res.GetStatus(), doc)
	}
	want := map[string]any{"version": "1.0", "type": "rich", "provider_name": providerName, "provider_url": base,
		"author_name": "Olivia's Coffee", "url": postURL, "width": 550.0, "height": 300.0, "cache_age": 3600.0}
	for k, v := range want {
		if doc[k] != v {
			t.Errorf("%s = %v, want %v", k, doc[k], v)
		}
	}
	html, _ := doc["html"].(string)
	for _, part := range []string{`<blockquote class="svc-post" data-post-id="` + ids[0] + `">`,
		"Open &lt;b&gt;on&lt;/b&gt; Sunday &amp; Monday", `<script async src="` + base + `/embed.js"`} {
		if !strings.Contains(html, part) {
			t.Errorf("html lacks %q:\n%s", part, html)
		}
	}
	for _, secret := range []string{page, pageAdmin, linkedApp, "everyone"} {
		if strings.Contains(string(res.GetBody()), `"`+secret+`"`) {
			t.Errorf("the document reveals %q: %s", secret, res.GetBody())
		}
	}
	if res.GetHeaders()["ETag"] == "" || !strings.HasPrefix(res.GetHeaders()["Cache-Control"], "public") {
		t.Errorf("the document is not cacheable: %v", res.GetHeaders())
	}
}

func TestOEmbedHonoursMaxwidthAndMaxheight(t *testing.T) {
	t.Parallel()
	tp, ids := embedSetup(t, false)
	for _, c := range []struct {
		maxwidth, maxheight string
		width, height       float64
	}{
		{"300", "", 300, 300},
		{"900", "", 550, 300}, // never wider than the view
		{"", "120", 550, 120},
		{"1", "1", 1, 1},
	} {
		q := url.Values{"url": {base + "/posts/" + ids[0]}}
		if c.maxwidth != "" {
			q.Set("maxwidth", c.maxwidth)
		}
		if c.maxheight != "" {
			q.Set("maxheight", c.maxheight)
		}
		_, doc := oembedCall(t, tp, q)
		if doc["width"] != c.width || doc["height"] != c.height {
			t.Errorf("maxwidth %q maxheight %q: %vx%v, want %vx%v", c.maxwidth, c.maxheight, doc["width"], doc["height"], c.width, c.height)
		}
	}
}

func TestOEmbedRefusesBadParametersWith400InTheEnvelope(t *testing.T) {
	t.Parallel()
	tp, ids := embedSetup(t, false)
	good := base + "/posts/" + ids[0]
	for name, q := range map[string]url.Values{
		"url":               {},
		"url relative":      {"url": {"/posts/" + ids[0]}},
		"url not http":      {"url": {"ftp://svc.example/posts/" + ids[0]}},
		"maxwidth":          {"url": {good}, "maxwidth": {"wide"}},
		"maxwidth zero":     {"url": {good}, "maxwidth": {"0"}},
		"maxheight":         {"url": {good}, "maxheight": {"-5"}},
		"maxheight too big": {"url": {good}, "maxheight": {"10001"}},
	} {
		res, doc := oembedCall(t, tp, q)
		if res.GetStatus() != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400: %v", name, res.GetStatus(), doc)
			continue
		}
		field := strings.Fields(name)[0]
		if code, _, msg := envelopeOf(t, doc); code != 100 || !strings.Contains(msg, field) {
			t.Errorf("%s: code %v, message %q (want 100, naming %s)", name, code, msg, field)
		}
	}
}

func TestOEmbedServesJSONOnlyAndAnswers501ForXML(t *testing.T) {
	t.Parallel()
	tp, ids := embedSetup(t, false)
	res, doc := oembedCall(t, tp, url.Values{"url": {base + "/posts/" + ids[0]}, "format": {"xml"}})
	if res.GetStatus() != http.StatusNotImplemented {
		t.Fatalf("format=xml: status %d, want 501: %v", res.GetStatus(), doc)
	}
	envelopeOf(t, doc)
	if res, _ := oembedCall(t, tp, url.Values{"url": {base + "/posts/" + ids[0]}, "format": {"json"}}); res.GetStatus() != http.StatusOK {
		t.Errorf("format=json: status %d", res.GetStatus())
	}
}

func TestOEmbedAnswers404ForAnythingButAPublicPostOfThisPlatform(t *testing.T) {
	t.Parallel()
	tp, ids := embedSetup(t, false)
	for name, u := range map[string]string{
		"followers":     base + "/posts/" + ids[1],
		"only_me":       base + "/posts/" + ids[2],
		"unknown":       base + "/posts/987654321",
		"not an id":     base + "/posts/abc",
		"nested":        base + "/posts/" + ids[0] + "/x",
		"another host":  "https://other.example/posts/" + ids[0],
		"another path":  base + "/pages/" + ids[0],
		"another proto": "http://svc.example/posts/" + ids[0],
	} {
		res, doc := oembedCall(t, tp, url.Values{"url": {u}})
		if res.GetStatus() != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404: %v", name, res.GetStatus(), doc)
			continue
		}
		if code, sub, _ := envelopeOf(t, doc); code != 100 || sub != 33 {
			t.Errorf("%s: code %v/%v, want 100/33", name, code, sub)
		}
	}
}

func TestAPostOfAnUnpublishedPageIsNotPublic(t *testing.T) {
	t.Parallel()
	tp, ids := embedSetup(t, true)
	if res, doc := oembedCall(t, tp, url.Values{"url": {base + "/posts/" + ids[0]}}); res.GetStatus() != http.StatusNotFound {
		t.Errorf("oembed: status %d, want 404: %v", res.GetStatus(), doc)
	}
	if res := pageCall(t, tp, "/posts/"+ids[0], ""); res.GetStatus() != http.StatusNotFound {
		t.Errorf("page: status %d, want 404", res.GetStatus())
	}
}

func pageCall(t *testing.T, tp *plugintest.Plugin, path, query string) *pluginv1.HttpResponse {
	t.Helper()
	res, err := plugintest.CallT[*pluginv1.HttpResponse](t, tp, "/svc.book.v1.BookService/PublicPostPage", sdk.Principal{},
		&pluginv1.HttpRequest{Path: path, Query: query, BaseUrl: base})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestOnlyTheEmbedViewMayBeFramedAndOnlyItRunsItsScript(t *testing.T) {
	t.Parallel()
	tp, ids := embedSetup(t, false)
	page := pageCall(t, tp, "/posts/"+ids[0], "")
	h := page.GetHeaders()
	if page.GetStatus() != http.StatusOK || h["X-Frame-Options"] != "DENY" || !strings.Contains(h["Content-Security-Policy"], "frame-ancestors 'none'") {
		t.Errorf("the page may be framed: %d %v", page.GetStatus(), h)
	}
	body := string(page.GetBody())
	if strings.Contains(body, "<script") || !strings.Contains(body, `<link rel="alternate" type="application/json+oembed" href="`+base+`/api/v1/oembed?url=`+url.QueryEscape(base+"/posts/"+ids[0])) {
		t.Errorf("the page has a script or lacks oEmbed discovery:\n%s", body)
	}
	embed := pageCall(t, tp, "/posts/"+ids[0], "embed=1")
	h = embed.GetHeaders()
	if _, ok := h["X-Frame-Options"]; ok || !strings.Contains(h["Content-Security-Policy"], "frame-ancestors *") {
		t.Errorf("the embed view may not be framed: %v", h)
	}
	if !strings.Contains(string(embed.GetBody()), "<script>"+frameScript+"</script>") || !strings.Contains(h["Content-Security-Policy"], scriptHash(frameScript)) {
		t.Errorf("the embed view's script is not the one its policy allows:\n%s", embed.GetBody())
	}
	// A post not public: the same answer as one that does not exist.
	hidden, missing := pageCall(t, tp, "/posts/"+ids[1], "embed=1"), pageCall(t, tp, "/posts/987654321", "embed=1")
	if hidden.GetStatus() != http.StatusNotFound || string(hidden.GetBody()) != string(missing.GetBody()) {
		t.Errorf("a followers post answers %d, unlike a missing one:\n%s", hidden.GetStatus(), hidden.GetBody())
	}
	if strings.Contains(string(hidden.GetBody()), "<script") {
		t.Errorf("a missing post's view reports itself to embed.js")
	}
}
