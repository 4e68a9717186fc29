package console

import (
	"bytes"
	"context"
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/web"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Path is where the console is served.
const Path = "/developers/console"

// staticPath serves the console's own scripts.
const staticPath = Path + "/static/"

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// pageNames are the console's pages; each is templates/<name>.html (which
// defines "body") inside templates/layout.html, with static/<name>.js.
var pageNames = []string{"apps", "app", "review", "templates", "webhooks", "completions", "debugger",
	"explorer", "callback", "reference", "staff-templates", "staff-review", "pages", "page", "account", "notfound",
	"business", "staff-business", "lenses", "wearables", "staff-lenses"}

// templates holds one parsed template set per page.
var templates = func() map[string]*template.Template {
	m := map[string]*template.Template{}
	for _, n := range pageNames {
		m[n] = template.Must(template.New("layout.html").Funcs(plainFuncs).ParseFS(templateFiles, "templates/layout.html", "templates/"+n+".html"))
	}
	return m
}()

// Options configure the console.
type Options struct {
	// LoginPath is the sign-in page (default /login).
	LoginPath string
	// API is the gateway's own HTTP handler, through which the plain
	// forms (pages without JavaScript) call the public API in-process,
	// as a browser's script would over the network. Without it, pages
	// need JavaScript.
	API http.Handler
	// Sessions resolves the session cookie of a plain form's post (whose
	// request the gateway's authentication refused for want of the CSRF
	// header, which a form cannot send).
	Sessions interface {
		AuthenticateToken(ctx context.Context, token string) (*auth.Principal, error)
	}
}

// Console serves the developer console.
type Console struct {
	opts Options
}

// New returns the console.
func New(opts Options) *Console {
	if opts.LoginPath == "" {
		opts.LoginPath = "/login"
	}
	return &Console{opts: opts}
}

// Register adds the console's pages, its scripts and the shared web UI
// assets to mux.
func (c *Console) Register(mux interface {
	Handle(pattern string, h http.Handler)
}) {
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic(err)
	}
	mux.Handle("GET "+staticPath, web.Handler(sub))
	mux.Handle("GET "+web.Prefix, web.Handler(web.Assets()))
	mux.Handle("GET "+Path, http.HandlerFunc(c.serve))
	mux.Handle("GET "+Path+"/", http.HandlerFunc(c.serve))
	if c.opts.API != nil && c.opts.Sessions != nil {
		mux.Handle("POST "+Path, http.HandlerFunc(c.submit))
		mux.Handle("POST "+Path+"/", http.HandlerFunc(c.submit))
	}
}

// page is one console page: its template, title and script.
type page struct {
	Name  string // template name and script name
	Title string
	// Nav is the side navigation entry that is current.
	Nav string
	// AppTab is the app sub-page that is current ("" outside an app).
	AppTab string
	// Staff: only platform staff see the page's data (the API decides;
	// the side navigation shows it to staff only).
	Staff bool
}

// route maps a console path (after Path) to its page and the app or Page id
// in it (a Page's for the "page" page, an app's otherwise).
func route(rest string) (page, string, bool) {
	rest = strings.Trim(rest, "/")
	parts := strings.Split(rest, "/")
	switch {
	case rest == "" || rest == "apps":
		return page{Name: "apps", Title: "Apps", Nav: "apps"}, "", true
	case parts[0] == "apps" && len(parts) > 1 && parts[1] == "":
		return page{}, "", false
	case parts[0] == "apps" && len(parts) == 2:
		return page{Name: "app", Title: "App settings", Nav: "apps", AppTab: "settings"}, parts[1], true
	case parts[0] == "apps" && len(parts) == 3:
		tabs := map[string]page{
			"review":      {Name: "review", Title: "App Review", Nav: "apps", AppTab: "review"},
			"templates":   {Name: "templates", Title: "Message templates", Nav: "apps", AppTab: "templates"},
			"webhooks":    {Name: "webhooks", Title: "Webhooks", Nav: "apps", AppTab: "webhooks"},
			"completions": {Name: "completions", Title: "Completions", Nav: "apps", AppTab: "completions"},
			"lenses":      {Name: "lenses", Title: "Lenses", Nav: "apps", AppTab: "lenses"},
			"wearables":   {Name: "wearables", Title: "Wearables portal", Nav: "apps", AppTab: "wearables"},
		}
		p, ok := tabs[parts[2]]
		return p, parts[1], ok
	case rest == "pages":
		return page{Name: "pages", Title: "Pages", Nav: "pages"}, "", true
	case parts[0] == "pages" && len(parts) == 2 && parts[1] != "":
		return page{Name: "page", Title: "Page settings", Nav: "pages"}, parts[1], true
	case rest == "account":
		return page{Name: "account", Title: "Your account", Nav: "account"}, "", true
	case rest == "debugger":
		return page{Name: "debugger", Title: "Token debugger", Nav: "debugger"}, "", true
	case rest == "explorer":
		return page{Name: "explorer", Title: "Graph explorer", Nav: "explorer"}, "", true
	case rest == "explorer/callback":
		return page{Name: "callback", Title: "Graph explorer: sign-in", Nav: "explorer"}, "", true
	case rest == "reference":
		return page{Name: "reference", Title: "API reference", Nav: "reference"}, "", true
	case rest == "staff/templates":
		return page{Name: "staff-templates", Title: "Template queue", Nav: "staff-templates", Staff: true}, "", true
	case rest == "staff/review":
		return page{Name: "staff-review", Title: "App Review queue", Nav: "staff-review", Staff: true}, "", true
	case rest == "business":
		return page{Name: "business", Title: "Business", Nav: "business"}, "", true
	case rest == "staff/business-verification":
		return page{Name: "staff-business", Title: "Business verification queue", Nav: "staff-business", Staff: true}, "", true
	case rest == "staff/lenses":
		return page{Name: "staff-lenses", Title: "Lens review queue", Nav: "staff-lenses", Staff: true}, "", true
	}
	return page{}, "", false
}

// view is the data of every page template.
type view struct {
	page
	AppID string
	// PageID is the Page of the Page settings page.
	PageID string
	UserID string
	Staff  bool
	CSRF   string
	Path   string
	// Plain is the page's data for a browser without JavaScript (the
	// page's script replaces it); nil on pages that need JavaScript.
	Plain *plainData
	// Refusal is a refused plain form, shown beside its field.
	Refusal *refusal
	// Done says what the plain form just did; Created is a new app's
	// answer, its secrets shown once.
	Done    string
	Created *createdApp
}

func (c *Console) serve(w http.ResponseWriter, r *http.Request) {
	p, session := c.sessionUser(r)
	if p == nil {
		http.Redirect(w, r, c.opts.LoginPath+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	pg, id, ok := route(strings.TrimPrefix(r.URL.Path, Path))
	if !ok {
		c.render(w, r, http.StatusNotFound, view{page: page{Name: "notfound", Title: "Not found"}, UserID: p.UserID, Staff: p.Staff,
			CSRF: auth.CSRFToken(session)})
		return
	}
	// The page's scripts send the session's CSRF token back in
	// auth.CSRFHeader on every state change (the rule is package auth's).
	v := view{page: pg, UserID: p.UserID, Staff: p.Staff, Path: r.URL.Path,
		CSRF: auth.CSRFToken(session)}
	if pg.Name == "page" {
		v.PageID = id
	} else {
		v.AppID = id
	}
	if op, ok := plainOps[r.URL.Query().Get("done")]; ok && op.page == pg.Name {
		v.Done = op.done
	}
	c.renderPlain(w, r, http.StatusOK, v, session)
}

// sessionUser is the console session of the request, a first-party
// session presented as the session cookie, and the cookie's value; or nil.
// A bearer session is not a console session: a browser never sends one.
func (c *Console) sessionUser(r *http.Request) (*auth.Principal, string) {
	ck, err := r.Cookie(auth.SessionCookie)
	if err != nil || ck.Value == "" || r.Header.Get("Authorization") != "" {
		return nil, ""
	}
	p, err := auth.Caller(r.Context())
	if err != nil || p == nil || p.Kind != pluginv1.TokenKind_TOKEN_KIND_SESSION {
		return nil, ""
	}
	return p, ck.Value
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, v view) {
	var buf bytes.Buffer
	if err := templates[v.Name].ExecuteTemplate(&buf, "layout.html", v); err != nil {
		slog.ErrorContext(r.Context(), "render console page", "page", v.Name, "error", err)
		http.Error(w, "page unavailable", http.StatusInternalServerError)
		return
	}
	web.SetPageHeaders(w.Header())
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
