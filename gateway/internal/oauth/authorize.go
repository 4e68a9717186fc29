package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/coredb"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/web/pages"
)

// authorizeRequest is one authorization request (interface §2.6).
type authorizeRequest struct {
	clientID, redirectURI, responseType, scope, state string
	codeChallenge, codeChallengeMethod, nonce, prompt string
	// authType is Meta's auth_type: "rerequest" shows the consent page
	// again even when every scope was granted, so the person may change
	// the Pages they chose (granular consent).
	authType string
}

// params lists the request's parameters, to carry them through the consent
// form (which posts them back) and the sign-in redirect.
func (a authorizeRequest) params() []pages.Hidden {
	all := []pages.Hidden{
		{Name: "client_id", Value: a.clientID}, {Name: "redirect_uri", Value: a.redirectURI},
		{Name: "response_type", Value: a.responseType}, {Name: "scope", Value: a.scope},
		{Name: "state", Value: a.state}, {Name: "code_challenge", Value: a.codeChallenge},
		{Name: "code_challenge_method", Value: a.codeChallengeMethod}, {Name: "nonce", Value: a.nonce},
	}
	return slices.DeleteFunc(all, func(h pages.Hidden) bool { return h.Value == "" })
}

func readAuthorizeRequest(v url.Values) authorizeRequest {
	return authorizeRequest{
		clientID: v.Get("client_id"), redirectURI: v.Get("redirect_uri"), responseType: v.Get("response_type"),
		scope: v.Get("scope"), state: v.Get("state"), codeChallenge: v.Get("code_challenge"),
		codeChallengeMethod: v.Get("code_challenge_method"), nonce: v.Get("nonce"), prompt: v.Get("prompt"),
		authType: v.Get("auth_type"),
	}
}

// authorize serves GET /oauth/authorize (the request) and POST (the consent
// form's answer, which repeats the request).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var req authorizeRequest
	consenting := r.Method == http.MethodPost
	if consenting {
		if err := r.ParseForm(); err != nil {
			s.renderError(w, r, http.StatusBadRequest, "Invalid request", "The form could not be read.")
			return
		}
		req = readAuthorizeRequest(r.PostForm)
	} else {
		req = readAuthorizeRequest(r.URL.Query())
	}

	// The client and its redirect URI come first: until both are known to be
	// right, nothing may be sent to the redirect URI.
	app, err := s.ids.Apps.AppByClientID(ctx, req.clientID)
	if errors.Is(err, identity.ErrNotFound) {
		s.renderError(w, r, http.StatusBadRequest, "Unknown app",
			"The app that sent you here is not known (invalid client_id).")
		return
	}
	if err != nil {
		slog.ErrorContext(ctx, "authorize: look up client", "error", err)
		s.renderError(w, r, http.StatusInternalServerError, "Something went wrong", "Please try again later.")
		return
	}
	registered := false
	if req.redirectURI != "" {
		if registered, err = s.ids.Apps.RedirectURIRegistered(ctx, app.ID, req.redirectURI); err != nil {
			slog.ErrorContext(ctx, "authorize: check redirect uri", "error", err)
			s.renderError(w, r, http.StatusInternalServerError, "Something went wrong", "Please try again later.")
			return
		}
	}
	if !registered {
		slog.InfoContext(ctx, "authorize refused: redirect_uri not registered", "app_id", app.ID)
		s.renderError(w, r, http.StatusBadRequest, "Invalid redirect URI",
			"The address this app asked to send you back to (redirect_uri) is not registered for it.")
		return
	}
	back := redirector{s: s, w: w, r: r, uri: req.redirectURI, state: req.state}

	switch {
	case req.responseType != "" && req.responseType != "code":
		back.fail(errUnsupportedResponse, "Only response_type=code is supported.")
		return
	case req.codeChallenge == "":
		back.fail(errInvalidRequest, "PKCE is required: send code_challenge with code_challenge_method=S256.")
		return
	case req.codeChallengeMethod != "S256":
		back.fail(errInvalidRequest, "code_challenge_method must be S256; plain is not accepted.")
		return
	case !validChallenge(req.codeChallenge):
		back.fail(errInvalidRequest, "code_challenge must be the 43-character base64url SHA-256 of the code_verifier.")
		return
	}
	catalog, err := s.ids.Scopes(ctx)
	if err != nil {
		slog.ErrorContext(ctx, "authorize: scope catalog", "error", err)
		back.fail(errServerError, "Please try again later.")
		return
	}
	scopes, err := catalog.Parse(req.scope)
	if err != nil {
		back.fail(errInvalidScope, "The scope parameter names an unknown scope.")
		return
	}
	if len(scopes) == 0 {
		scopes = []string{identity.ScopePublicProfile}
	}
	if sc, err := ungrantable(ctx, s.ids, app, scopes); err != nil {
		slog.ErrorContext(ctx, "authorize: grantable scopes", "error", err)
		back.fail(errServerError, "Please try again later.")
		return
	} else if sc != "" {
		back.fail(errInvalidScope, fmt.Sprintf("The app is not approved for the scope %s (App Review).", sc))
		return
	}
	prompts := strings.Fields(req.prompt)

	user := s.sessionUser(r)
	if user == nil {
		if slices.Contains(prompts, "none") {
			back.fail(errLoginRequired, "The user is not signed in.")
			return
		}
		if consenting { // the session ended while the consent page was shown
			s.renderLogin(w, r, http.StatusUnauthorized, pages.Login{Next: PathAuthorize + "?" + encodeParams(req.params()),
				Error: "Please sign in again."})
			return
		}
		http.Redirect(w, r, PathLogin+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
		return
	}
	allowed, err := s.ids.Apps.MayAuthorize(ctx, app, user.UserID)
	if err != nil {
		slog.ErrorContext(ctx, "authorize: development access", "error", err)
		back.fail(errServerError, "Please try again later.")
		return
	}
	if !allowed {
		slog.InfoContext(ctx, "authorize refused: user not on the team of a development-mode app", "app_id", app.ID, "user_id", user.UserID)
		back.fail(errAccessDenied, "The app is in development mode: only its team and Test Users can authorize it.")
		return
	}

	if consenting {
		if !checkCSRF(r) {
			s.renderError(w, r, http.StatusForbidden, "Request refused", "Your consent form expired. Go back to the app and try again.")
			return
		}
		switch r.PostFormValue("decision") {
		case "allow":
			choice, err := s.chosenPages(ctx, user.UserID, catalog, scopes, r.PostForm["page_id"])
			if err != nil {
				slog.ErrorContext(ctx, "authorize: read the user's Pages", "error", err)
				back.fail(errServerError, "Please try again later.")
				return
			}
			s.grantCode(ctx, back, app, user, scopes, req, &choice)
		case "deny":
			slog.InfoContext(ctx, "consent denied", "app_id", app.ID, "user_id", user.UserID)
			back.fail(errAccessDenied, "The user denied the request.")
		default:
			s.renderError(w, r, http.StatusBadRequest, "Invalid request", "Choose Allow or Deny.")
		}
		return
	}

	consent, err := s.consent(ctx, app, user.UserID)
	if err != nil {
		slog.ErrorContext(ctx, "authorize: read consent", "error", err)
		back.fail(errServerError, "Please try again later.")
		return
	}
	// prompt=consent, and Meta's auth_type=rerequest, ask again: the person
	// may change the Pages they chose.
	again := slices.Contains(prompts, "consent") || req.authType == "rerequest"
	if !again && identity.ContainsAll(consent.Scopes, scopes) {
		s.grantCode(ctx, back, app, user, scopes, req, nil)
		return
	}
	if slices.Contains(prompts, "none") {
		back.fail(errConsentRequired, "The user has not consented to these scopes.")
		return
	}
	s.renderConsent(w, r, app, user, scopes, catalog, req, consent)
}

func (s *Server) renderConsent(w http.ResponseWriter, r *http.Request, app identity.App, user *auth.Principal, scopes []string, catalog *identity.Scopes, req authorizeRequest, consent coredb.GetConsentRow) {
	ctx := r.Context()
	u, err := s.ids.Users.User(ctx, user.UserID)
	if err != nil {
		slog.ErrorContext(ctx, "consent: read user", "error", err)
	}
	d := pages.Consent{CSRF: s.csrfToken(w, r), AppName: app.Name, UserName: u.Name, Params: req.params(),
		Development: !app.Live()}
	for _, sc := range scopes {
		d.Scopes = append(d.Scopes, pages.Scope{Name: sc, Description: catalog.Description(sc)})
	}
	// Page scopes: the person chooses the Pages, every one checked the
	// first time, the current choice when asked again (CONTRACT §17).
	if len(catalog.PageScopes(scopes)) > 0 {
		d.AsksPages = true
		mine, err := s.ids.Pages.ChoosablePages(ctx, user.UserID)
		if err != nil {
			slog.ErrorContext(ctx, "authorize: read the user's Pages", "error", err)
			s.renderError(w, r, http.StatusInternalServerError, "Something went wrong", "Please try again later.")
			return
		}
		for _, p := range mine {
			checked := !consent.PagesChosen || slices.Contains(identity.FormatIDs(consent.PageIds), p.ID)
			d.Pages = append(d.Pages, pages.ConsentPage{ID: p.ID, Name: p.Name, Checked: checked})
		}
	}
	if err := pages.RenderConsent(w, d); err != nil {
		slog.ErrorContext(ctx, "render consent page", "error", err)
	}
}

// consent is the user's remembered consent to the app (no scopes when
// there is none).
func (s *Server) consent(ctx context.Context, app identity.App, userID string) (coredb.GetConsentRow, error) {
	aid, _ := identity.ParseID(app.ID)
	uid, _ := identity.ParseID(userID)
	have, err := s.q.GetConsent(ctx, coredb.GetConsentParams{UserID: uid, AppID: aid})
	if errors.Is(err, pgx.ErrNoRows) {
		return coredb.GetConsentRow{}, nil
	}
	return have, err
}

// pageChoice is the Pages a person chose on the consent page (ids nil:
// every Page, identity.Choose); made is false when no Page scope was
// asked, and the choice then stays as it was.
type pageChoice struct {
	made bool
	ids  []int64
}

// chosenPages reads the consent form's page_id checkboxes when a Page
// scope was asked: the Pages the user holds a role on among them (an id
// of any other Page is dropped).
func (s *Server) chosenPages(ctx context.Context, userID string, catalog *identity.Scopes, scopes, sent []string) (pageChoice, error) {
	if len(catalog.PageScopes(scopes)) == 0 {
		return pageChoice{}, nil
	}
	mine, err := s.ids.Pages.ChoosablePages(ctx, userID)
	if err != nil {
		return pageChoice{}, err
	}
	ids, _ := identity.Choose(mine, sent)
	return pageChoice{made: true, ids: ids}, nil
}

// grantCode issues an authorization code (remembering consent, with the
// Pages chosen, when the user just gave it: consent non-nil) and redirects
// back with it.
func (s *Server) grantCode(ctx context.Context, back redirector, app identity.App, user *auth.Principal, scopes []string, req authorizeRequest, consent *pageChoice) {
	aid, _ := identity.ParseID(app.ID)
	uid, _ := identity.ParseID(user.UserID)
	plain, hash := identity.NewToken(identity.PrefixAuthCode)
	now := s.now()
	// A session lasts exactly SessionTTL from sign-in, so its expiry tells
	// when the user authenticated (the id_token's auth_time).
	authTime := user.ExpiresAt.Add(-identity.SessionTTL)
	if user.ExpiresAt.IsZero() || authTime.After(now) {
		authTime = now
	}
	err := s.ids.InTx(ctx, func(tx *identity.Service) error {
		q := tx.Queries()
		if consent != nil {
			if err := q.AddConsent(ctx, coredb.AddConsentParams{UserID: uid, AppID: aid, Scopes: scopes,
				ChoosePages: consent.made, PageIds: consent.ids}); err != nil {
				return fmt.Errorf("remember consent: %w", err)
			}
		}
		grant, err := q.CreateGrant(ctx, coredb.CreateGrantParams{AppID: aid, UserID: &uid, Scopes: scopes})
		if err != nil {
			return fmt.Errorf("create grant: %w", err)
		}
		return q.InsertCode(ctx, coredb.InsertCodeParams{CodeHash: hash, GrantID: grant, AppID: aid, UserID: uid,
			RedirectUri: req.redirectURI, Scopes: scopes, CodeChallenge: req.codeChallenge, Nonce: req.nonce,
			AuthTime:  pgtype.Timestamptz{Time: authTime, Valid: true},
			ExpiresAt: pgtype.Timestamptz{Time: now.Add(identity.CodeTTL), Valid: true}})
	})
	if err != nil {
		slog.ErrorContext(ctx, "authorize: issue code", "error", err)
		back.fail(errServerError, "Please try again later.")
		return
	}
	if consent != nil && consent.made {
		// The user's tokens for the app follow the new choice at once here.
		s.authn.ForgetUser(user.UserID)
	}
	slog.InfoContext(ctx, "authorization code issued", "app_id", app.ID, "user_id", user.UserID, "scopes", scopes)
	back.send(url.Values{"code": {plain}})
}

// redirector sends the browser back to a verified redirect URI with the
// state and the issuer (RFC 9207) added to the query.
type redirector struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	uri   string
	state string
}

func (b redirector) fail(code, description string) {
	b.send(url.Values{"error": {code}, "error_description": {description}})
}

func (b redirector) send(params url.Values) {
	u, err := url.Parse(b.uri) // registered, so it parses
	if err != nil {
		b.s.renderError(b.w, b.r, http.StatusBadRequest, "Invalid redirect URI", "The redirect URI cannot be used.")
		return
	}
	q := u.Query()
	for k, vs := range params {
		q[k] = vs
	}
	if b.state != "" {
		q.Set("state", b.state)
	}
	q.Set("iss", b.s.issuer)
	u.RawQuery = q.Encode()
	status := http.StatusFound
	if b.r.Method == http.MethodPost {
		status = http.StatusSeeOther
	}
	b.w.Header().Set("Cache-Control", "no-store")
	http.Redirect(b.w, b.r, u.String(), status)
}

func encodeParams(hs []pages.Hidden) string {
	v := url.Values{}
	for _, h := range hs {
		v.Set(h.Name, h.Value)
	}
	return v.Encode()
}
