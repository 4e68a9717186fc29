package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/auth"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// The console's plain HTML forms, for browsers without JavaScript (progressive
// enhancement). A page's forms post to the page itself with the operation
// in the hidden field "op" and the session's CSRF token in
// auth.CSRFFormField. The console checks the token with package auth's rule,
// turns the form into the JSON body the page's script would send, and sends
// it to the public API in-process, through the gateway's own HTTP handler
// (Options.API) with the browser's cookie: the same request the script
// makes, through the same authentication, validation and access checks. It
// decides nothing itself. Done, it redirects back to the page (303); refused,
// it renders the page again with the envelope's message beside the field the
// message names.

// opField is one field of a plain form and how it becomes JSON, as api.js's
// values() reads the same form: text (left out when empty), list (split on
// commas and new lines, always an array), many (the checked values of the
// checkboxes of that name, always an array).
type opField struct {
	name string
	kind fieldKind
}

type fieldKind int

const (
	text fieldKind = iota
	list
	many
)

// plainOp is one operation a plain form performs: one Graph call.
type plainOp struct {
	page   string // the page whose forms offer it
	method string // POST, or DELETE (fields go in the query)
	// node is the Graph node, from the page's app and the form.
	node   func(app string, form url.Values) string
	fields []opField
	// done is what the page says after it, or "" when the page shows the
	// answer itself (a secret shown once: rendered, never redirected).
	done string
}

func appEdge(edge string) func(string, url.Values) string {
	return func(app string, _ url.Values) string { return "app/" + app + "/" + edge }
}

func templateAction(verb string) func(string, url.Values) string {
	return func(app string, f url.Values) string {
		return "app/" + app + "/svcchat_templates/" + url.PathEscape(f.Get("template")) + "/" + verb
	}
}

// plainOps are the operations that work without JavaScript. The rest
// (keys, roles, Test Users, configuration, going live, webhooks, App
// Review, the explorer, the debugger, completions) need the page's script.
var plainOps = map[string]plainOp{
	"create-app": {page: "apps", method: http.MethodPost, node: func(string, url.Values) string { return "me/apps" },
		fields: []opField{{"name", text}, {"redirect_uris", list}, {"products", many}}},
	"add-redirect": {page: "app", method: http.MethodPost, node: appEdge("redirect_uris"),
		fields: []opField{{"uri", text}}, done: "Redirect URI added."},
	"remove-redirect": {page: "app", method: http.MethodDelete, node: appEdge("redirect_uris"),
		fields: []opField{{"uri", text}}, done: "Redirect URI removed."},
	"link-page": {page: "app", method: http.MethodPost, node: appEdge("page_links"),
		fields: []opField{{"page_id", text}, {"products", many}}, done: "Page linked."},
	"unlink-page": {page: "app", method: http.MethodDelete, node: appEdge("page_links"),
		fields: []opField{{"page_id", text}}, done: "Page unlinked."},
	"draft-template": {page: "templates", method: http.MethodPost, node: appEdge("svcchat_templates"),
		fields: []opField{{"name", text}, {"body", text}, {"params", list}}, done: "Draft saved."},
	"approve-template": {page: "templates", method: http.MethodPost, node: templateAction("approve"), done: "Template approved."},
	"submit-template":  {page: "templates", method: http.MethodPost, node: templateAction("submit"), done: "Template submitted for review."},
}

// body reads form into the JSON object (POST) or query (DELETE) of op.
func (op plainOp) body(form url.Values) map[string]any {
	out := map[string]any{}
	for _, f := range op.fields {
		switch f.kind {
		case text:
			if v := strings.TrimSpace(form.Get(f.name)); v != "" {
				out[f.name] = v
			}
		case list:
			items := []string{}
			for _, s := range strings.FieldsFunc(form.Get(f.name), func(r rune) bool { return r == ',' || r == '\n' }) {
				if s = strings.TrimSpace(s); s != "" {
					items = append(items, s)
				}
			}
			out[f.name] = items
		case many:
			out[f.name] = append([]string{}, form[f.name]...)
		}
	}
	return out
}

// refusal is a refused plain form: the envelope's message, and the field of
// the form it names ("" for none), with what the form held, to fill it again.
type refusal struct {
	Op, Field, Message string
	Code, Subcode      int
	Values             url.Values
}

// fieldOf picks which of names the message is about: the longest name that
// appears in it as a whole word. It is api.js's fieldOf, for the pages
// rendered without JavaScript.
func fieldOf(message string, names []string) string {
	best := ""
	for _, n := range names {
		if n == "" || len(n) <= len(best) {
			continue
		}
		re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(n) + `($|[^A-Za-z0-9_])`)
		if re.MatchString(message) {
			best = n
		}
	}
	return best
}

// apiAnswer is the public API's answer to one in-process call.
type apiAnswer struct {
	Status int
	Body   []byte
}

// refused is the answer as a refusal of op, or nil when it succeeded.
func (a apiAnswer) refused(opName string, op plainOp, form url.Values) *refusal {
	if a.Status >= 200 && a.Status < 300 {
		return nil
	}
	var env struct {
		Error struct {
			Message string `json:"message"`
			Code    int    `json:"code"`
			Subcode int    `json:"error_subcode"`
		} `json:"error"`
	}
	_ = json.Unmarshal(a.Body, &env)
	msg := env.Error.Message
	if msg == "" {
		msg = fmt.Sprintf("HTTP %d", a.Status)
	}
	names := make([]string, 0, len(op.fields))
	for _, f := range op.fields {
		names = append(names, f.name)
	}
	return &refusal{Op: opName, Field: fieldOf(msg, names), Message: msg, Code: env.Error.Code, Subcode: env.Error.Subcode, Values: form}
}

// call sends one Graph request to the public API in-process, as the
// browser's script would: with the browser's session cookie and, for a
// change, the CSRF token the form carried, its Origin and Sec-Fetch-Site.
// It gets a context of its own (cancelled with r's): the outer request's
// context holds the outer request's authentication.
func (c *Console) call(r *http.Request, session, csrf, method, node string, body map[string]any) apiAnswer {
	u := url.URL{Path: "/api/v1/graph"}
	var payload []byte
	if method == http.MethodPost {
		b := map[string]any{"node": node}
		for k, v := range body {
			b[k] = v
		}
		payload, _ = json.Marshal(b)
	} else {
		q := url.Values{"node": {node}}
		for k, v := range body {
			switch v := v.(type) {
			case string:
				q.Set(k, v)
			case int:
				q.Set(k, fmt.Sprint(v))
			}
		}
		u.RawQuery = q.Encode()
	}
	return c.send(r, session, csrf, method, u.String(), payload)
}

// send sends one request to the public API in-process (see call).
func (c *Console) send(r *http.Request, session, csrf, method, target string, payload []byte) apiAnswer {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := context.AfterFunc(r.Context(), cancel)
	defer stop()
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(payload))
	if err != nil {
		return apiAnswer{Status: http.StatusInternalServerError}
	}
	req.Host = r.Host
	req.RemoteAddr = r.RemoteAddr
	req.TLS = r.TLS
	req.Header.Set("Accept", "application/json")
	req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: session})
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(auth.CSRFHeader, csrf)
		for _, h := range []string{"Origin", "Sec-Fetch-Site"} {
			if v := r.Header.Get(h); v != "" {
				req.Header.Set(h, v)
			}
		}
	}
	rec := &recorder{header: http.Header{}}
	c.opts.API.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return apiAnswer{Status: rec.status, Body: rec.body.Bytes()}
}

// recorder keeps an in-process answer.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }
func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}
func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

// submit serves a plain form posted to a console page.
func (c *Console) submit(w http.ResponseWriter, r *http.Request) {
	ck, err := r.Cookie(auth.SessionCookie)
	if err != nil || ck.Value == "" || r.Header.Get("Authorization") != "" {
		http.Redirect(w, r, c.opts.LoginPath+"?next="+url.QueryEscape(r.URL.Path), http.StatusSeeOther)
		return
	}
	session := ck.Value
	p, err := c.opts.Sessions.AuthenticateToken(r.Context(), session)
	if err != nil || p == nil || !isSession(p) {
		http.Redirect(w, r, c.opts.LoginPath+"?next="+url.QueryEscape(r.URL.Path), http.StatusSeeOther)
		return
	}
	pg, appID, ok := route(strings.TrimPrefix(r.URL.Path, Path))
	if err := r.ParseForm(); err != nil || !ok {
		c.render(w, r, http.StatusNotFound, view{page: page{Name: "notfound", Title: "Not found"}, UserID: p.UserID, Staff: p.Staff,
			CSRF: auth.CSRFToken(session)})
		return
	}
	v := view{page: pg, AppID: appID, UserID: p.UserID, Staff: p.Staff, Path: r.URL.Path, CSRF: auth.CSRFToken(session)}
	opName := r.PostForm.Get("op")
	op, known := plainOps[opName]
	if !known || op.page != pg.Name {
		v.Refusal = &refusal{Message: fmt.Sprintf("This page has no form %q.", opName)}
		c.renderPlain(w, r, http.StatusBadRequest, v, session)
		return
	}
	// The form's token is checked here with the rule of package auth,
	// before anything is sent, and again by the API as X-Svc-CSRF.
	if err := auth.CheckFormCSRF(r, session); err != nil {
		e := apierr.Internal(err)
		errors.As(err, &e)
		v.Refusal = &refusal{Op: opName, Message: e.Message, Code: e.Code, Subcode: e.Subcode, Values: r.PostForm}
		c.renderPlain(w, r, e.HTTPStatus, v, session)
		return
	}
	ans := c.call(r, session, r.PostForm.Get(auth.CSRFFormField), op.method, op.node(appID, r.PostForm), op.body(r.PostForm))
	if ref := ans.refused(opName, op, r.PostForm); ref != nil {
		v.Refusal = ref
		c.renderPlain(w, r, ans.Status, v, session)
		return
	}
	if op.done == "" {
		// The answer holds secrets shown once: rendered now, never put in
		// a URL.
		var created createdApp
		_ = json.Unmarshal(ans.Body, &created)
		v.Created = &created
		c.renderPlain(w, r, http.StatusOK, v, session)
		return
	}
	http.Redirect(w, r, r.URL.Path+"?done="+url.QueryEscape(opName), http.StatusSeeOther)
}

// createdApp is POST me/apps's answer, shown once.
type createdApp struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// WebhookSecret is the client secret as Standard Webhooks libraries
	// take it (whsec_…).
	WebhookSecret string `json:"webhook_secret"`
	APIKey        string `json:"api_key"`
}

// plainData is what a page shows without JavaScript, read through the
// public API as the page's script reads it; Unavailable holds the message
// of a refused read, by section.
type plainData struct {
	Apps []struct {
		ID, Name, Mode, Role string
	}
	AppName      string
	RedirectURIs []struct {
		URI string `json:"uri"`
	}
	Links []struct {
		PageID   string   `json:"page_id"`
		PageName string   `json:"page_name"`
		Products []string `json:"products"`
	}
	Pages []struct {
		ID, Name, Role string
	}
	Templates []struct {
		Name, Body, Status string
		Params             []string
		RejectionReason    string `json:"rejection_reason"`
	}
	// Checkup is the app's data use checkup (CONTRACT §17), whose notice
	// the app page shows the team while it is due or overdue.
	Checkup *checkupData
	// Query and Hits are a docs search's (the reference page's ?q=).
	Query       string
	Hits        []docsHit
	Unavailable map[string]string
}

// checkupData is GET app/<id>/data_use_checkup's answer.
type checkupData struct {
	Status  string   `json:"status"`
	DueTime string   `json:"due_time"`
	Scopes  []string `json:"scopes"`
}

// Notice reports whether the team is to be reminded: the checkup is due
// or overdue.
func (c *checkupData) Notice() bool { return c.Status == "due" || c.Status == "overdue" }

// docsHit is one hit of the docs search, its passage cut at the **
// markers ts_headline puts around the matches.
type docsHit struct {
	Title, Path string
	Snippet     []snippetPart
}

// snippetPart is a run of a passage: matched (shown marked) or not.
type snippetPart struct {
	Text    string
	Matched bool
}

// snippetParts cuts a ts_headline passage at its ** markers, as the
// reference page's script does: every other run is a match.
func snippetParts(s string) []snippetPart {
	var out []snippetPart
	for i, part := range strings.Split(s, "**") {
		if part != "" {
			out = append(out, snippetPart{Text: part, Matched: i%2 == 1})
		}
	}
	return out
}

// read fills into the "data" (or whole, when whole) of a GET of node.
func (c *Console) read(r *http.Request, session string, d *plainData, section, node string, query map[string]any, into any, whole bool) {
	ans := c.call(r, session, "", http.MethodGet, node, query)
	if ref := ans.refused("", plainOp{}, nil); ref != nil {
		d.Unavailable[section] = ref.Message
		return
	}
	if whole {
		_ = json.Unmarshal(ans.Body, into)
		return
	}
	var list struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(ans.Body, &list) == nil && list.Data != nil {
		_ = json.Unmarshal(list.Data, into)
	}
}

// load reads what page pg shows without JavaScript.
func (c *Console) load(r *http.Request, session string, pg page, app string) *plainData {
	d := &plainData{Unavailable: map[string]string{}}
	appNode := "app/" + app
	switch pg.Name {
	case "apps":
		c.read(r, session, d, "apps", "me/apps", map[string]any{"limit": 100}, &d.Apps, false)
	case "app":
		var a struct{ Name string }
		c.read(r, session, d, "overview", appNode, nil, &a, true)
		d.AppName = a.Name
		d.Checkup = &checkupData{}
		c.read(r, session, d, "checkup", appNode+"/data_use_checkup", nil, d.Checkup, true)
		c.read(r, session, d, "redirects", appNode+"/redirect_uris", nil, &d.RedirectURIs, false)
		c.read(r, session, d, "links", appNode+"/page_links", map[string]any{"limit": 100}, &d.Links, false)
		c.read(r, session, d, "pages", "me/pages", map[string]any{"limit": 100}, &d.Pages, false)
		// Only an owner or admin links a Page: an editor's Pages are not offered.
		d.Pages = slices.DeleteFunc(d.Pages, func(p struct{ ID, Name, Role string }) bool {
			return p.Role != "owner" && p.Role != "admin"
		})
	case "templates":
		var a struct{ Name string }
		c.read(r, session, d, "overview", appNode, nil, &a, true)
		d.AppName = a.Name
		c.read(r, session, d, "templates", appNode+"/svcchat_templates", map[string]any{"limit": 100}, &d.Templates, false)
	case "reference":
		q := r.URL.Query().Get("q")
		if q == "" {
			return nil
		}
		d.Query = q
		ans := c.send(r, session, "", http.MethodGet, "/api/developers/docs/search?"+url.Values{"q": {q}}.Encode(), nil)
		if ref := ans.refused("", plainOp{}, nil); ref != nil {
			d.Unavailable["docs"] = ref.Message
			return d
		}
		var res struct {
			Data []struct{ Title, Path, Snippet string }
		}
		_ = json.Unmarshal(ans.Body, &res)
		for _, h := range res.Data {
			d.Hits = append(d.Hits, docsHit{Title: h.Title, Path: h.Path, Snippet: snippetParts(h.Snippet)})
		}
	default:
		return nil
	}
	return d
}

// renderPlain renders v with the page's data read anew.
func (c *Console) renderPlain(w http.ResponseWriter, r *http.Request, status int, v view, session string) {
	if c.opts.API != nil {
		v.Plain = c.load(r, session, v.page, v.AppID)
	}
	c.render(w, r, status, v)
}

// plainFuncs are the template functions of the plain forms.
var plainFuncs = template.FuncMap{
	// plainFields are the hidden fields of a plain form doing op.
	"plainFields": func(v view, op string) template.HTML {
		return template.HTML(`<input type="hidden" name="` + auth.CSRFFormField + `" value="` + template.HTMLEscapeString(v.CSRF) +
			`" data-plain><input type="hidden" name="op" value="` + template.HTMLEscapeString(op) + `" data-plain>`)
	},
	// refusedField is the refusal of op about field ("" for the form), or nil.
	"refusedField": func(v view, op, field string) *refusal {
		if v.Refusal != nil && v.Refusal.Op == op && v.Refusal.Field == field {
			return v.Refusal
		}
		return nil
	},
	// submitted is what field held when op was refused, to fill it again.
	"submitted": func(v view, op, field string) string {
		if v.Refusal != nil && v.Refusal.Op == op && v.Refusal.Values != nil {
			return v.Refusal.Values.Get(field)
		}
		return ""
	},
	"join": strings.Join,
}

// isSession: the console is signed in with a first-party session only.
func isSession(p *auth.Principal) bool { return p.Kind == pluginv1.TokenKind_TOKEN_KIND_SESSION }
