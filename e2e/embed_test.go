package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"

	"github.com/svcplatform/svc/internal/browsertest"
)

// publishFor publishes a post of the seeded Page for audience.
func (w *graphWorld) publishFor(t *testing.T, content, audience string) string {
	t.Helper()
	body := w.mustPost(t, w.owner, map[string]any{"node": "page/" + w.c.Page.ID + "/posts", "content": content, "audience": audience})
	return decode[struct{ ID string }](t, body).ID
}

// oembed asks for the oEmbed document of the public page of post id.
func (w *graphWorld) oembed(t *testing.T, q url.Values) (*http.Response, []byte) {
	t.Helper()
	return do(t, "GET", w.g.URL+"/api/v1/oembed?"+q.Encode(), nil, nil)
}

// wantNoCookie fails when an answer sets a cookie: public reads set none.
func wantNoCookie(t *testing.T, what string, res *http.Response) {
	t.Helper()
	if c := res.Header.Values("Set-Cookie"); len(c) > 0 {
		t.Errorf("%s sets cookies: %v", what, c)
	}
}

func TestAPostForEveryoneHasAPublicPageAndAnOEmbedDocumentWithoutACredential(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	id := w.publishFor(t, "Open <b>Sunday</b> & Monday", "everyone")
	postURL := w.c.BaseURL + "/posts/" + id

	res, body := do(t, "GET", w.g.URL+"/posts/"+id, nil, nil)
	page := string(body)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("public page: %d %s\n%s", res.StatusCode, res.Header.Get("Content-Type"), page)
	}
	wantNoCookie(t, "the public page", res)
	for _, part := range []string{w.c.Page.Name, "Open &lt;b&gt;Sunday&lt;/b&gt; &amp; Monday",
		`<link rel="alternate" type="application/json+oembed" href="` + w.c.BaseURL + "/api/v1/oembed?url=" + url.QueryEscape(postURL) + `"`} {
		if !strings.Contains(page, strings.ReplaceAll(part, "'", "&#39;")) {
			t.Errorf("the public page lacks %q:\n%s", part, page)
		}
	}
	if strings.Contains(page, "everyone") || strings.Contains(page, `"`+w.c.Page.ID+`"`) || strings.Contains(page, w.c.Users["owner"].Username) {
		t.Errorf("the public page reveals more than the post shows:\n%s", page)
	}
	if res.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("the public page may be framed: %v", res.Header)
	}
	etag := res.Header.Get("ETag")
	if etag == "" || !strings.HasPrefix(res.Header.Get("Cache-Control"), "public, max-age=") {
		t.Errorf("the public page is not cacheable: ETag %q, Cache-Control %q", etag, res.Header.Get("Cache-Control"))
	}
	if res, body := do(t, "GET", w.g.URL+"/posts/"+id, nil, map[string]string{"If-None-Match": etag}); res.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Errorf("revalidation with the ETag: %d, %d bytes", res.StatusCode, len(body))
	}
	res, _ = do(t, "GET", w.g.URL+"/posts/"+id+"?embed=1", nil, nil)
	if res.StatusCode != 200 || res.Header.Get("X-Frame-Options") != "" || !strings.Contains(res.Header.Get("Content-Security-Policy"), "frame-ancestors *") {
		t.Errorf("the embed view may not be framed: %d %v", res.StatusCode, res.Header)
	}

	res, body = w.oembed(t, url.Values{"url": {postURL}, "maxwidth": {"400"}})
	if res.StatusCode != 200 {
		t.Fatalf("oembed: %d %s", res.StatusCode, body)
	}
	wantNoCookie(t, "the oEmbed document", res)
	doc := decode[struct {
		Version, Type, HTML string
		ProviderName        string `json:"provider_name"`
		AuthorName          string `json:"author_name"`
		Width, Height       int
		CacheAge            int `json:"cache_age"`
	}](t, body)
	if doc.Version != "1.0" || doc.Type != "rich" || doc.ProviderName == "" || doc.AuthorName != w.c.Page.Name || doc.Width != 400 || doc.Height <= 0 || doc.CacheAge <= 0 {
		t.Errorf("oembed document: %s", body)
	}
	if !strings.Contains(doc.HTML, `<blockquote class="svc-post" data-post-id="`+id+`">`) || !strings.Contains(doc.HTML, `src="`+w.c.BaseURL+`/embed.js"`) {
		t.Errorf("oembed html is not the blockquote and the script: %s", doc.HTML)
	}
	res, body = w.oembed(t, url.Values{"url": {postURL}, "format": {"xml"}})
	wantGraphError(t, res, body, http.StatusNotImplemented, 100, 0)
	res, body = w.oembed(t, url.Values{"url": {postURL}, "maxwidth": {"wide"}})
	wantGraphError(t, res, body, http.StatusBadRequest, 100, 0)

	res, body = do(t, "GET", w.g.URL+"/embed.js", nil, nil)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") || !strings.Contains(string(body), `"`+w.c.BaseURL+`"`) {
		t.Errorf("embed.js: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	wantNoCookie(t, "embed.js", res)
}

func TestPostsNotForEveryoneHaveNeitherAPublicPageNorAnOEmbedDocument(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	public := w.publishFor(t, "For all", "everyone")
	ids := map[string]string{
		"followers": w.publishFor(t, "For followers", "followers"),
		"only_me":   w.publishFor(t, "For me", "only_me"),
		"unknown":   "987654321",
	}
	_, missing := do(t, "GET", w.g.URL+"/posts/987654321", nil, nil)
	for name, id := range ids {
		res, body := do(t, "GET", w.g.URL+"/posts/"+id, nil, nil)
		if res.StatusCode != http.StatusNotFound || string(body) != string(missing) {
			t.Errorf("%s: public page %d, or unlike a post that does not exist:\n%s", name, res.StatusCode, body)
		}
		res, body = w.oembed(t, url.Values{"url": {w.c.BaseURL + "/posts/" + id}})
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: oembed %d %s", name, res.StatusCode, body)
			continue
		}
		wantGraphError(t, res, body, http.StatusNotFound, 100, 33)
	}
	// Unpublished, the Page's posts for everyone are no longer public.
	w.mustPost(t, w.owner, map[string]any{"node": "page/" + w.c.Page.ID, "published": false})
	if res, body := do(t, "GET", w.g.URL+"/posts/"+public, nil, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("a post of an unpublished Page: %d %s", res.StatusCode, body)
	}
}

// embedHost is a page of another site that embeds posts: its own style
// sheet sets every p red and without padding, and it includes embed.js
// twice.
func embedHost(gateway string, ids ...string) string {
	var quotes strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&quotes, `<blockquote class="svc-post" data-post-id="%s"><p>quoted %s</p></blockquote>`+"\n", id, id)
	}
	return `<!doctype html><html><head><style>p{color:rgb(255,0,0);white-space:normal} body{margin:8px}</style></head><body>
<p id="own" class="text">The host's own paragraph</p>
` + quotes.String() + `<script async src="` + gateway + `/embed.js"></script>
<script async src="` + gateway + `/embed.js"></script>
</body></html>`
}

func TestAnEmbeddedPostRendersOnAnotherSiteIsolatedAndWithoutCookies(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	public := w.publishFor(t, "Fresh bread at seven", "everyone")
	private := w.publishFor(t, "Only for followers", "followers")
	gw := w.g.URL // http://127.0.0.1:<port>
	host := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = rw.Write([]byte(embedHost(gw, public, private)))
	}))
	defer host.Close()
	// The host page is on localhost: another site than the gateway's
	// 127.0.0.1, so the frame is cross-site (its own process).
	hostURL := strings.Replace(host.URL, "127.0.0.1", "localhost", 1)

	b := browsertest.New(t)
	b.Do("open the host page", chromedp.Navigate(hostURL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`iframe[data-svc-post-frame="`+public+`"]`)))
	b.Shot("embedded")
	states := browsertest.Get(b, "read the blockquotes' states", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('blockquote.svc-post')].map((q) => q.dataset.postId + ':' + q.dataset.svcEmbed + ':' + getComputedStyle(q).display)`))
	if want := []string{public + ":rendered:none", private + ":loading:block"}; fmt.Sprint(states) != fmt.Sprint(want) &&
		fmt.Sprint(states) != fmt.Sprint([]string{public + ":rendered:none", private + ":unavailable:block"}) {
		t.Errorf("blockquotes = %v, want the public one replaced and the private one as it is", states)
	}
	frames := browsertest.Get(b, "count the frames", chromedp.Evaluate[int](`document.querySelectorAll('iframe[data-svc-post-frame="`+public+`"]').length`))
	if frames != 1 {
		t.Errorf("embed.js included twice made %d frames of one post", frames)
	}
	// The private post's frame reports nothing and is removed; its
	// blockquote stays as it was.
	browsertest.Get(b, "wait for the private post's frame to go", chromedp.PollFunction[bool](
		`() => !document.querySelector('iframe[data-svc-post-frame="`+private+`"]')`, chromedp.WithPollingTimeout(10*time.Second)))
	if q := browsertest.Get(b, "read the private blockquote", chromedp.Evaluate[string](
		`(() => { const q = document.querySelector('blockquote[data-post-id="`+private+`"]'); return q.dataset.svcEmbed + ':' + getComputedStyle(q).display + ':' + q.textContent })()`)); q != "unavailable:block:quoted "+private {
		t.Errorf("the private post's blockquote = %q, want it as it was", q)
	}
	// The embed's styles leave the host's alone.
	own := browsertest.Get(b, "read the host's paragraph style", chromedp.Evaluate[string](
		`(() => { const s = getComputedStyle(document.getElementById('own')); return [s.color, s.whiteSpace, s.boxSizing, getComputedStyle(document.body).padding].join('|') })()`))
	if own != "rgb(255, 0, 0)|normal|content-box|0px" {
		t.Errorf("the host's own styles changed: %s", own)
	}
	globals := browsertest.Get(b, "list the page's globals", chromedp.Evaluate[[]string](
		`Object.keys(window).filter((k) => /svc|embed|mount|scan/i.test(k))`))
	if len(globals) != 0 {
		t.Errorf("embed.js leaks globals: %v", globals)
	}

	// Inside the frame: the post, in the embed's styles, not the host's.
	frameCtx := frameOf(t, b.Context(), gw+"/posts/"+public+"?embed=1")
	ctx, cancel := context.WithTimeout(frameCtx, 20*time.Second)
	defer cancel()
	inside, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`(() => { const p = document.querySelector('.text'); return p.textContent + '|' + getComputedStyle(p).color + '|' + self.origin + '|' + (() => { try { document.cookie = 'x=1'; return 'cookies' } catch (e) { return 'no cookies' } })() })()`))
	if err != nil {
		t.Fatalf("read the frame: %v", err)
	}
	if inside != "Fresh bread at seven|rgb(28, 30, 33)|null|no cookies" {
		t.Errorf("inside the frame = %q, want the post's text in the embed's colour, in a sandbox (an opaque origin, which can hold no cookie)", inside)
	}

	// The gateway set no cookie, on any origin.
	cookies, err := chromedp.CallBrowser(b.Context(), storage.GetCookies, storage.GetCookiesParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cookies.Cookies) != 0 {
		t.Errorf("cookies after embedding: %+v", cookies.Cookies)
	}
}

// frameOf attaches to the cross-site frame loaded from url, which Chrome
// runs as a target of its own.
func frameOf(t *testing.T, ctx context.Context, url string) context.Context {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range infos {
			if info.Type == "iframe" && info.URL == url {
				fctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(info.TargetID))
				t.Cleanup(cancel)
				return fctx
			}
		}
		if time.Now().After(deadline) {
			var seen []string
			for _, info := range infos {
				seen = append(seen, string(info.Type)+" "+info.URL)
			}
			t.Fatalf("no frame target for %s among %v", url, seen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A method bound to a plain HTTP path gets its path, query and public URL
// from the gateway; over RPC a caller could choose them, so it is served
// at its path only (the completions stream method too).
func TestAMethodBoundToAnHTTPPathIsRefusedOverRPC(t *testing.T) {
	t.Parallel()
	w := newGraphWorld(t)
	id := w.publishFor(t, "Reached at its path only", "everyone")
	connectJSON := map[string]string{"Content-Type": "application/json", "Connect-Protocol-Version": "1",
		"Authorization": "Bearer " + w.c.App.APIKey}
	for _, procedure := range []string{"/svc.book.v1.BookService/OEmbed", "/svc.book.v1.BookService/PublicPostPage",
		"/svc.completions.v1.CompletionsService/ChatCompletion"} {
		res, body := do(t, "POST", w.g.URL+procedure,
			strings.NewReader(`{"path":"/posts/`+id+`","query":"url=https%3A%2F%2Fevil.example%2Fposts%2F`+id+`","base_url":"https://evil.example"}`), connectJSON)
		if res.StatusCode != http.StatusNotFound || strings.Contains(string(body), "evil.example") || !strings.Contains(string(body), "served at") {
			t.Errorf("%s over Connect: %d %s", procedure, res.StatusCode, body)
		}
	}
	// The stream method of ChatCompletion: Connect's streaming envelope.
	res, body := do(t, "POST", w.g.URL+"/svc.completions.v1.CompletionsService/StreamChatCompletion",
		strings.NewReader("\x00\x00\x00\x00\x02{}"), map[string]string{"Content-Type": "application/connect+json",
			"Connect-Protocol-Version": "1", "Authorization": "Bearer " + w.c.App.APIKey})
	if !strings.Contains(string(body), "served at POST /v1/chat/completions only") {
		t.Errorf("StreamChatCompletion over Connect: %d %q", res.StatusCode, body)
	}
	// At their paths they still answer.
	if res, body := w.oembed(t, url.Values{"url": {w.c.BaseURL + "/posts/" + id}}); res.StatusCode != 200 {
		t.Errorf("oembed at its path: %d %s", res.StatusCode, body)
	}
}
