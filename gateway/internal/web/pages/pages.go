package pages

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
)

//go:embed templates/*.html
var files embed.FS

var templates = template.Must(template.ParseFS(files, "templates/*.html"))

// Hidden is one hidden form field.
type Hidden struct {
	Name, Value string
}

// Login is the data of the sign-in form. Its fields are named username and
// password (CONTRACT §10).
type Login struct {
	CSRF     string
	Next     string
	Username string
	// Error is shown above the form, e.g. after a wrong password.
	Error string
	// SignUpOpen shows the link to the sign-up page.
	SignUpOpen bool
}

// SignUp is the data of the sign-up form (/signup): fields name, username
// and password (CONTRACT §16).
type SignUp struct {
	CSRF, Next     string
	Name, Username string
	// MinPassword is the shortest password accepted, in characters.
	MinPassword int
	// Error is shown above the form, naming what to change.
	Error string
	// Closed says the operator takes no new accounts (no form).
	Closed bool
}

// Scope is one line of the consent page: a scope in plain words.
type Scope struct {
	Name        string
	Description string
}

// Consent is the data of the consent page: one form whose submit buttons
// are name="decision" with value="allow" or value="deny" (CONTRACT §10).
type Consent struct {
	CSRF     string
	AppName  string
	UserName string
	Scopes   []Scope
	// Params carry the authorization request through the form.
	Params []Hidden
	// Development notes that the app is not live yet.
	Development bool
	// AsksPages: a Page scope is asked, so the person chooses which of
	// their Pages the app may act on (Pages, checkboxes named page_id).
	AsksPages bool
	Pages     []ConsentPage
}

// ConsentPage is one of the person's Pages on the consent page.
type ConsentPage struct {
	ID, Name string
	Checked  bool
}

// Error is the data of the error page shown instead of redirecting when the
// client or the redirect URI cannot be trusted.
type Error struct {
	Title   string
	Message string
}

// SignedIn is the page shown after signing in with no place to go next.
type SignedIn struct {
	Name string
	CSRF string
}

// Release is one line of the changelog page.
type Release struct {
	Version, Date, Kind, Summary string
}

// RenderChangelog writes the changelog page (/developers/changelog).
func RenderChangelog(w http.ResponseWriter, releases []Release) error {
	return render(w, http.StatusOK, "changelog.html", releases)
}

// RenderLogin writes the sign-in page with status.
func RenderLogin(w http.ResponseWriter, status int, d Login) error {
	return render(w, status, "login.html", d)
}

// RenderSignUp writes the sign-up page with status.
func RenderSignUp(w http.ResponseWriter, status int, d SignUp) error {
	return render(w, status, "signup.html", d)
}

// RenderConsent writes the consent page.
func RenderConsent(w http.ResponseWriter, d Consent) error {
	return render(w, http.StatusOK, "consent.html", d)
}

// RenderError writes the error page with status.
func RenderError(w http.ResponseWriter, status int, d Error) error {
	return render(w, status, "error.html", d)
}

// RenderSignedIn writes the signed-in page.
func RenderSignedIn(w http.ResponseWriter, d SignedIn) error {
	return render(w, http.StatusOK, "signedin.html", d)
}

// Status is the data of the platform status page (/status).
type Status struct {
	Overall, OverallText string
	Components           []StatusComponent
	Incidents            []StatusIncident
}

// StatusComponent is one component: its status now and its worst per day.
type StatusComponent struct {
	Name, Status, Checked string
	Days                  []StatusDay
}

// StatusDay is one day's bar: "" for a day without data.
type StatusDay struct{ Date, Status string }

// StatusIncident is one incident with its updates, newest first.
type StatusIncident struct {
	Title, Status, Started, Resolved string
	Components                       []string
	Updates                          []StatusUpdate
}

// StatusUpdate is one update of an incident.
type StatusUpdate struct{ At, Status, Body string }

// RenderStatus writes the platform status page.
func RenderStatus(w http.ResponseWriter, d Status) error {
	return render(w, http.StatusOK, "status.html", d)
}

func render(w http.ResponseWriter, status int, name string, data any) error {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, "page unavailable", http.StatusInternalServerError)
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	// No scripts, no external anything, never framed (clickjacking on the
	// consent page). form-action is left open on purpose: browsers apply it
	// to the redirect that follows a consent submission, whose target is the
	// client's redirect URI.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}
