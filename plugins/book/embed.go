package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/plugins/book/internal/bookdb"
	"github.com/svcplatform/svc/sdk"
)

// Embeds (CONTRACT §18): the public page of a post, its oEmbed document and
// embed.js, served on the gateway's port through plain HTTP paths this
// plugin declares (svc.plugin.v1.http_path), so the gateway names no
// product. What is public is decided here, in one place (publicPost): a
// post whose audience is everyone, of a Page that exists and is published.
// Everything else answers exactly as a post that does not exist, so that
// nothing of it leaks. The answers show the Page's name, the text and the
// time only: no ids but the post's own, no audience, no author user, no
// app.

// providerName is the oEmbed provider_name.
const providerName = "svc"

// The oEmbed frame's widths, in CSS pixels: the default, and the narrowest
// the embed view lays out (a smaller maxwidth is honoured all the same).
const (
	embedWidth  = 550
	embedHeight = 300 // an estimate: embed.js sizes the frame to the post
)

// Cache lifetimes: a post never changes once public (there is no edit),
// so its page and document are cached; a miss is cached briefly, as a
// post may become visible when its Page is published.
const (
	cachePage    = "public, max-age=300"
	cacheMissing = "public, max-age=60"
	cacheOEmbed  = "public, max-age=3600"
	oembedAge    = 3600
)

// publicView is what anyone may see of a public post.
type publicView struct {
	ID       string
	PageName string
	Content  string
	Created  time.Time
}

// publicPost reads post id and reports it when it is public; ok is false
// for a post that does not exist or is not public, which the caller
// answers as not found.
func (s *service) publicPost(ctx context.Context, call *sdk.Call, id string) (v publicView, ok bool, err error) {
	n, valid := sdk.ParseID(id)
	if !valid {
		return v, false, nil
	}
	var row bookdb.BookPost
	err = s.db.Read(ctx, func(db *pgxpool.Pool) (err error) {
		row, err = bookdb.New(db).GetPost(ctx, n)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return v, false, nil
	}
	if err != nil || row.Audience != "everyone" {
		return v, false, err
	}
	page, err := call.Host().PageAccess(ctx, sdk.PageQuery{PageID: row.PageID})
	if err != nil || !page.Exists || !page.Published {
		return v, false, err
	}
	return publicView{ID: sdk.FormatID(row.ID), PageName: page.Name, Content: row.Content, Created: row.CreatedAt.Time.UTC()}, true, nil
}

// postURL is the public page of post id.
func postURL(base, id string) string { return base + "/posts/" + id }

// The public page's security headers. The page itself is never framed;
// its embed view (?embed=1), which embed.js frames in a sandbox, may be
// framed by any origin and runs one script, the one that reports its
// height (frameScript), allowed by its hash.
var (
	pageCSP  = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
	embedCSP = "default-src 'none'; style-src 'unsafe-inline'; script-src '" + scriptHash(frameScript) +
		"'; frame-ancestors *; base-uri 'none'; form-action 'none'"
)

// frameScript, in the embed view, tells the page that framed it (embed.js)
// that the post is shown, and its height. A post that is not public has
// no such script: embed.js then leaves the blockquote as it is.
const frameScript = `(function(){var b=document.body;function s(){parent.postMessage({svcPost:b.getAttribute("data-post-id"),height:Math.ceil(document.documentElement.getBoundingClientRect().height)},"*")}s();addEventListener("load",s);addEventListener("resize",s)})();`

func scriptHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

//go:embed embed/post.html
var postHTML string

var postPage = template.Must(template.New("post").Parse(postHTML))

// pageData fills post.html.
type pageData struct {
	Found     bool
	Embed     bool
	Post      publicView
	URL       string
	OEmbedURL string
	Time      string // RFC 3339
	Day       string // for people: "2 Jan 2026"
	Script    template.JS
}

// publicPostPage answers GET /posts/<id>[?embed=1].
func (s *service) publicPostPage(ctx context.Context, call *sdk.Call, req *pluginv1.HttpRequest) (*pluginv1.HttpResponse, error) {
	id := strings.TrimPrefix(req.GetPath(), "/posts/")
	q, _ := url.ParseQuery(req.GetQuery()) // a bad query is no embed view
	d := pageData{Embed: q.Get("embed") == "1"}
	v, ok, err := s.publicPost(ctx, call, id)
	if err != nil {
		return nil, err
	}
	status, cache := http.StatusNotFound, cacheMissing
	if ok {
		status, cache = http.StatusOK, cachePage
		u := postURL(req.GetBaseUrl(), v.ID)
		d.Found, d.Post, d.URL = true, v, u
		d.OEmbedURL = req.GetBaseUrl() + "/api/v1/oembed?" + url.Values{"url": {u}}.Encode()
		d.Time, d.Day = v.Created.Format(time.RFC3339), v.Created.Format("2 Jan 2006")
		if d.Embed {
			d.Script = template.JS(frameScript)
		}
	}
	var b bytes.Buffer
	if err := postPage.Execute(&b, d); err != nil {
		return nil, err
	}
	h := map[string]string{"Content-Type": "text/html; charset=utf-8", "Cache-Control": cache,
		"Referrer-Policy": "strict-origin-when-cross-origin"}
	if d.Embed {
		h["Content-Security-Policy"] = embedCSP
	} else {
		h["Content-Security-Policy"] = pageCSP
		h["X-Frame-Options"] = "DENY"
	}
	return answer(status, b.Bytes(), h), nil
}

// answer is an HttpResponse with a strong ETag of its body.
func answer(status int, body []byte, h map[string]string) *pluginv1.HttpResponse {
	sum := sha256.Sum256(body)
	h["ETag"] = `"` + hex.EncodeToString(sum[:12]) + `"`
	return &pluginv1.HttpResponse{Status: int32(status), Body: body, Headers: h}
}

// oembed is the oEmbed 1.0 document of a post (type rich).
type oembed struct {
	Version      string `json:"version"`
	Type         string `json:"type"`
	ProviderName string `json:"provider_name"`
	ProviderURL  string `json:"provider_url"`
	AuthorName   string `json:"author_name"`
	URL          string `json:"url"`
	HTML         string `json:"html"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	CacheAge     int    `json:"cache_age"`
}

// maxDimension bounds maxwidth and maxheight.
const maxDimension = 10000

// snippetRunes bounds the text of the html snippet's blockquote, shown
// until embed.js replaces it (and by readers without script).
const snippetRunes = 500

// oEmbed answers GET /api/v1/oembed?url=…[&maxwidth=…][&maxheight=…][&format=json].
func (s *service) oEmbed(ctx context.Context, call *sdk.Call, req *pluginv1.HttpRequest) (*pluginv1.HttpResponse, error) {
	q, err := url.ParseQuery(req.GetQuery())
	if err != nil {
		return refusal(call, sdk.Invalid("url", "Invalid parameter: the query string is malformed.")), nil
	}
	if f := q.Get("format"); f != "" && f != "json" {
		// oEmbed 1.0 §2.3.5: a format the provider does not serve is 501.
		return refusal(call, sdk.Errorf(http.StatusNotImplemented, 100, 0, "Invalid parameter: format %q is not supported; only json is.", f)), nil
	}
	width, height := embedWidth, embedHeight
	for _, p := range []struct {
		name string
		to   *int
	}{{"maxwidth", &width}, {"maxheight", &height}} {
		raw := q.Get(p.name)
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > maxDimension {
			return refusal(call, sdk.Invalid(p.name, "Invalid parameter: %s must be a whole number of pixels from 1 to %d.", p.name, maxDimension)), nil
		}
		*p.to = min(*p.to, n)
	}
	raw := q.Get("url")
	if raw == "" {
		return refusal(call, sdk.Invalid("url", "Invalid parameter: url is required.")), nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return refusal(call, sdk.Invalid("url", "Invalid parameter: url must be an absolute http(s) URL.")), nil
	}
	base := req.GetBaseUrl()
	id, ours := postIDOf(base, u)
	notFound := sdk.NotFound("Post at " + raw)
	if !ours {
		return refusal(call, notFound), nil
	}
	v, ok, err := s.publicPost(ctx, call, id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return refusal(call, notFound), nil
	}
	doc := oembed{Version: "1.0", Type: "rich", ProviderName: providerName, ProviderURL: base,
		AuthorName: v.PageName, URL: postURL(base, v.ID), Width: width, Height: height, CacheAge: oembedAge}
	doc.HTML = snippet(base, v)
	body, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return answer(http.StatusOK, body, map[string]string{"Content-Type": "application/json; charset=utf-8",
		"Cache-Control": cacheOEmbed, "Access-Control-Allow-Origin": "*"}), nil
}

// postIDOf is the post id of u when u is a public post page of base (the
// same scheme, host and path prefix; its query and fragment ignored).
func postIDOf(base string, u *url.URL) (string, bool) {
	b, err := url.Parse(base)
	if err != nil || !strings.EqualFold(u.Scheme, b.Scheme) || !strings.EqualFold(u.Host, b.Host) {
		return "", false
	}
	id, ok := strings.CutPrefix(u.Path, b.Path+"/posts/")
	if !ok || id == "" || strings.Contains(id, "/") {
		return "", false
	}
	return id, true
}

// snippet is the oEmbed html: the post as a blockquote, readable as it is,
// and the script that turns it into the rendered post (as Twitter's and
// Meta's embeds do).
func snippet(base string, v publicView) string {
	text := v.Content
	if utf8.RuneCountInString(text) > snippetRunes {
		r := []rune(text)
		text = string(r[:snippetRunes]) + "…"
	}
	var b strings.Builder
	b.WriteString(`<blockquote class="svc-post" data-post-id="`)
	b.WriteString(v.ID)
	b.WriteString(`"><p>`)
	b.WriteString(html.EscapeString(text))
	b.WriteString(`</p>&mdash; `)
	b.WriteString(html.EscapeString(v.PageName))
	b.WriteString(` <a href="`)
	b.WriteString(html.EscapeString(postURL(base, v.ID)))
	b.WriteString(`">`)
	b.WriteString(v.Created.Format("2 Jan 2006"))
	b.WriteString(`</a></blockquote>`)
	b.WriteString("\n")
	b.WriteString(`<script async src="`)
	b.WriteString(html.EscapeString(base + "/embed.js"))
	b.WriteString(`" charset="utf-8"></script>`)
	return b.String()
}

// refusal answers e in the Graph error envelope (CONTRACT §3), not to be
// cached (no headers: the gateway writes it as JSON with no-store).
func refusal(call *sdk.Call, e *sdk.Error) *pluginv1.HttpResponse {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": e.Message, "type": e.Type, "code": e.Code, "error_subcode": e.Subcode,
		"fbtrace_id": call.TraceID(), "is_transient": e.Transient,
	}})
	return &pluginv1.HttpResponse{Status: int32(e.HTTPStatus), Body: body}
}

//go:embed embed/embed.js
var embedJS string

// embedScript answers GET /embed.js: the script with the gateway's
// address in it.
func (s *service) embedScript(_ context.Context, _ *sdk.Call, req *pluginv1.HttpRequest) (*pluginv1.HttpResponse, error) {
	base, err := json.Marshal(req.GetBaseUrl())
	if err != nil {
		return nil, err
	}
	body := strings.Replace(embedJS, `"{{BASE}}"`, string(base), 1)
	return answer(http.StatusOK, []byte(body), map[string]string{"Content-Type": "text/javascript; charset=utf-8",
		"Cache-Control": cachePage}), nil
}
