// Package smoke checks a running platform end to end over its public
// APIs only, as an app and its users would (CONTRACT §18; `gateway
// smoke`): the OAuth code flow with PKCE through the real sign-in and
// consent pages, me/pages, a post, a webhook subscription's handshake and a
// signed delivery to a receiver it runs, a session message, a completion.
// Each step prints one line; the run ends with "N passed, M failed".
//
// It imports no other gateway package: what it knows of the platform is
// what its documentation says.
package smoke

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/html"
)

// Credentials is the credentials file: the development seed's
// (dev-credentials.json) has this shape, and a partner writes one for the
// app, users and Page the check acts as. The app should be one kept for
// smoke checks: the run replaces its webhook subscription.
type Credentials struct {
	BaseURL string `json:"base_url"`
	// Users: "owner" administers the Page; "consumer" writes to it (and
	// is a test user of the app while it is in development mode).
	Users map[string]User `json:"users"`
	Page  struct {
		ID string `json:"id"`
	} `json:"page"`
	App struct {
		ID           string `json:"id"`
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		APIKey       string `json:"api_key"`
		RedirectURI  string `json:"redirect_uri"`
	} `json:"app"`
}

// User is a user the check signs in as.
type User struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	Password string `json:"password"`
}

// Load reads a credentials file.
func Load(path string) (Credentials, error) {
	var c Credentials
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	var missing []string
	for name, v := range map[string]string{"app.id": c.App.ID, "app.client_id": c.App.ClientID,
		"app.client_secret": c.App.ClientSecret, "app.api_key": c.App.APIKey, "app.redirect_uri": c.App.RedirectURI,
		"page.id": c.Page.ID, "users.owner": c.Users["owner"].Username, "users.consumer": c.Users["consumer"].Username} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return c, fmt.Errorf("%s lacks %s", path, strings.Join(missing, ", "))
	}
	return c, nil
}

// Options configure a run.
type Options struct {
	BaseURL string
	Creds   Credentials
	// ReceiverAddr is where the webhook receiver listens (default
	// 127.0.0.1:0); ReceiverURL is how the platform reaches it (default
	// http://<its address>), for a platform on another machine.
	ReceiverAddr, ReceiverURL string
	// Model is the completion step's model (default svc-builtin).
	Model string
	// StepTimeout bounds each step (default 30 s).
	StepTimeout time.Duration
	Out         io.Writer
	// ReportPartner, when set, is the partner whose smoke check this run
	// is: the result is kept at partner/<id>/smoke_runs with the user
	// token the OAuth step obtained for the app (docs/PARTNERS.md), so the
	// owner user must administer the partner's business and the app be
	// one of its apps. A report that is refused counts as a failure.
	ReportPartner string
}

// Step names, in order.
const (
	StepOAuth      = "oauth"
	StepMePages    = "me/pages"
	StepPost       = "post"
	StepWebhook    = "webhook"
	StepSession    = "session message"
	StepCompletion = "completion"
)

// Run runs every step and prints their lines, then the tally; it returns
// the number of steps that failed.
func Run(ctx context.Context, o Options) int {
	if o.Model == "" {
		o.Model = "svc-builtin"
	}
	if o.StepTimeout <= 0 {
		o.StepTimeout = 30 * time.Second
	}
	if o.ReceiverAddr == "" {
		o.ReceiverAddr = "127.0.0.1:0"
	}
	var lines bytes.Buffer // the run's lines, for a report
	o.Out = io.MultiWriter(o.Out, &lines)
	r := &run{o: o, base: strings.TrimRight(o.BaseURL, "/"), c: o.Creds, api: &http.Client{Timeout: o.StepTimeout}}
	steps := []struct {
		name  string
		needs string
		do    func(ctx context.Context) (string, error)
	}{
		{StepOAuth, "", r.oauth},
		{StepMePages, StepOAuth, r.mePages},
		{StepPost, StepOAuth, r.post},
		{StepWebhook, "", r.webhook},
		{StepSession, StepWebhook, r.session},
		{StepCompletion, "", r.completion},
	}
	defer r.close()
	passed, failed := 0, 0
	ok := map[string]bool{}
	for _, s := range steps {
		if s.needs != "" && !ok[s.needs] {
			failed++
			fmt.Fprintf(o.Out, "FAIL %s: not run: needs %s\n", s.name, s.needs)
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, o.StepTimeout)
		start := time.Now()
		what, err := s.do(sctx)
		cancel()
		took := time.Since(start).Round(time.Millisecond)
		if err != nil {
			failed++
			fmt.Fprintf(o.Out, "FAIL %s: %v (%s)\n", s.name, err, took)
			continue
		}
		passed++
		ok[s.name] = true
		fmt.Fprintf(o.Out, "PASS %s: %s (%s)\n", s.name, what, took)
	}
	fmt.Fprintf(o.Out, "%d passed, %d failed\n", passed, failed)
	if o.ReportPartner != "" {
		if err := r.report(ctx, passed, failed, strings.ToValidUTF8(excerptN(lines.String(), 8000), "")); err != nil {
			fmt.Fprintf(o.Out, "FAIL report to partner/%s: %v\n", o.ReportPartner, err)
			return failed + 1
		}
	}
	return failed
}

// report keeps the run's result for the partner, with the owner's user
// token of the app the run checked.
func (r *run) report(ctx context.Context, passed, failed int, summary string) error {
	if r.userToken == "" {
		return errors.New("no user token: the oauth step did not pass")
	}
	ctx, cancel := context.WithTimeout(ctx, r.o.StepTimeout)
	defer cancel()
	var out struct{ ID string }
	err := r.graphPost(ctx, r.userToken, map[string]any{"node": "partner/" + r.o.ReportPartner + "/smoke_runs",
		"passed": passed, "failed": failed, "summary": summary}, &out)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.o.Out, "reported to partner/%s: smoke run %s\n", r.o.ReportPartner, out.ID)
	return nil
}

// run is one run's state, passed from step to step.
type run struct {
	o    Options
	base string
	c    Credentials
	api  *http.Client
	// userToken is the owner's, from the OAuth step.
	userToken string
	// rcv receives the webhooks; conversation is the consumer's, from the
	// webhook step.
	rcv *receiver
}

func (r *run) close() {
	if r.rcv != nil {
		r.rcv.srv.Close()
	}
}

// call sends a JSON (or form) request and decodes a 2xx answer into out;
// another status is an error quoting the answer.
func (r *run) call(ctx context.Context, method, path, token string, body any, out any) error {
	var rd io.Reader
	ctype := "application/json"
	switch b := body.(type) {
	case nil:
	case url.Values:
		rd, ctype = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return err
	}
	if rd != nil {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := r.api.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s answered %d: %s", method, strings.SplitN(path, "?", 2)[0], res.StatusCode, excerpt(raw))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: %v in %s", method, path, err, excerpt(raw))
		}
	}
	return nil
}

// excerptN is s cut to at most n bytes.
func excerptN(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func excerpt(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func (r *run) graphGet(ctx context.Context, token string, q url.Values, out any) error {
	return r.call(ctx, http.MethodGet, "/api/v1/graph?"+q.Encode(), token, nil, out)
}

func (r *run) graphPost(ctx context.Context, token string, body map[string]any, out any) error {
	return r.call(ctx, http.MethodPost, "/api/v1/graph", token, body, out)
}

// oauth signs the owner in through the login and consent pages and
// redeems the code with its PKCE verifier.
func (r *run) oauth(ctx context.Context) (string, error) {
	u := r.c.Users["owner"]
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	verifier := base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	state := base64.RawURLEncoding.EncodeToString(b[:8])
	q := url.Values{"client_id": {r.c.App.ClientID}, "redirect_uri": {r.c.App.RedirectURI}, "response_type": {"code"},
		"scope": {"public_profile pages:read pages:manage"}, "state": {state},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
	cb, err := r.authorize(ctx, r.base+"/oauth/authorize?"+q.Encode(), u)
	if err != nil {
		return "", err
	}
	if e := cb.Query().Get("error"); e != "" {
		return "", fmt.Errorf("authorization refused: %s: %s", e, cb.Query().Get("error_description"))
	}
	if cb.Query().Get("state") != state || cb.Query().Get("code") == "" {
		return "", fmt.Errorf("the redirect %s carries no code or another state", cb.Redacted())
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {cb.Query().Get("code")},
		"redirect_uri": {r.c.App.RedirectURI}, "client_id": {r.c.App.ClientID}, "client_secret": {r.c.App.ClientSecret},
		"code_verifier": {verifier}}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := r.call(ctx, http.MethodPost, "/api/oauth/token", "", form, &tok); err != nil {
		return "", err
	}
	if tok.AccessToken == "" {
		return "", errors.New("the token endpoint answered no access_token")
	}
	r.userToken = tok.AccessToken
	return "signed in as " + u.Username + ", consented, code redeemed with its PKCE verifier", nil
}

// authorize walks the sign-in and consent pages like a browser until the
// redirect to the app, and returns that redirect.
func (r *run) authorize(ctx context.Context, start string, u User) (*url.URL, error) {
	jar, _ := cookiejar.New(nil)
	base, _ := url.Parse(r.base)
	browser := &http.Client{Jar: jar, Timeout: r.o.StepTimeout, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if req.URL.Host != base.Host {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, start, nil)
	if err != nil {
		return nil, err
	}
	for range 5 {
		res, err := browser.Do(req)
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
		if loc := res.Header.Get("Location"); loc != "" && res.StatusCode/100 == 3 {
			return res.Request.URL.Parse(loc)
		}
		forms := parseForms(body)
		if len(forms) != 1 {
			return nil, fmt.Errorf("%s answered %d with %d forms, want the sign-in or consent form: %s",
				res.Request.URL.Path, res.StatusCode, len(forms), excerpt(body))
		}
		f := forms[0]
		if _, ok := f.fields["password"]; ok {
			f.fields.Set("username", u.Username)
			f.fields.Set("password", u.Password)
		} else {
			f.fields.Set("decision", "allow")
		}
		action, err := res.Request.URL.Parse(f.action)
		if err != nil {
			return nil, err
		}
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, action.String(), strings.NewReader(f.fields.Encode()))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return nil, errors.New("no redirect to the app after five pages")
}

type form struct {
	action string
	fields url.Values
}

// parseForms reads an HTML page's forms and their input fields.
func parseForms(body []byte) []form {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return nil
	}
	var forms []form
	var walk func(n *html.Node, in *form)
	walk = func(n *html.Node, in *form) {
		if n.Type == html.ElementNode {
			attr := func(k string) string {
				for _, a := range n.Attr {
					if a.Key == k {
						return a.Val
					}
				}
				return ""
			}
			switch {
			case n.Data == "form":
				f := &form{action: attr("action"), fields: url.Values{}}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c, f)
				}
				forms = append(forms, *f)
				return
			case n.Data == "input" && in != nil && attr("name") != "" && attr("type") != "submit":
				in.fields.Set(attr("name"), attr("value"))
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, in)
		}
	}
	walk(doc, nil)
	return forms
}

// mePages reads the owner's Pages with the user token and finds the Page.
func (r *run) mePages(ctx context.Context) (string, error) {
	var out struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := r.graphGet(ctx, r.userToken, url.Values{"node": {"me/pages"}}, &out); err != nil {
		return "", err
	}
	for _, p := range out.Data {
		if p.ID == r.c.Page.ID {
			return fmt.Sprintf("%d Pages, Page %s among them", len(out.Data), r.c.Page.ID), nil
		}
	}
	return "", fmt.Errorf("the Page %s is not among the owner's %d Pages", r.c.Page.ID, len(out.Data))
}

// post publishes a post on the Page as its owner and reads it back.
func (r *run) post(ctx context.Context) (string, error) {
	content := "svc smoke check " + time.Now().UTC().Format(time.RFC3339)
	var created struct {
		ID string `json:"id"`
	}
	if err := r.graphPost(ctx, r.userToken, map[string]any{"node": "page/" + r.c.Page.ID + "/posts",
		"content": content, "audience": "everyone"}, &created); err != nil {
		return "", err
	}
	if created.ID == "" {
		return "", errors.New("the post was answered without an id")
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := r.graphGet(ctx, r.userToken, url.Values{"node": {"page/" + r.c.Page.ID + "/posts"}}, &list); err != nil {
		return "", err
	}
	for _, p := range list.Data {
		if p.ID == created.ID {
			return "published post " + created.ID + " and read it back", nil
		}
	}
	return "", fmt.Errorf("post %s is not in the Page's posts", created.ID)
}

// receiver is the webhook endpoint the run serves: it answers the
// handshake and keeps the deliveries whose signature verifies.
type receiver struct {
	srv    *http.Server
	url    string
	secret string
	verify string
	mu     sync.Mutex
	got    []delivery
	bad    []string
	shook  bool
}

type delivery struct {
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

func (v *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodGet {
		q := req.URL.Query()
		if q.Get("hub.mode") != "subscribe" || q.Get("hub.verify_token") != v.verify {
			http.Error(w, "wrong verify token", http.StatusForbidden)
			return
		}
		v.mu.Lock()
		v.shook = true
		v.mu.Unlock()
		_, _ = io.WriteString(w, q.Get("hub.challenge"))
		return
	}
	raw, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	mac := hmac.New(sha256.New, []byte(v.secret))
	mac.Write(raw)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	v.mu.Lock()
	defer v.mu.Unlock()
	if !hmac.Equal([]byte(req.Header.Get("X-Svc-Signature-256")), []byte(want)) {
		v.bad = append(v.bad, req.Header.Get("X-Svc-Delivery"))
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var d delivery
	_ = json.Unmarshal(raw, &d)
	v.got = append(v.got, d)
	w.WriteHeader(http.StatusNoContent)
}

// wait returns the first delivery of type typ whose data's key is value.
func (v *receiver) wait(ctx context.Context, typ, key, value string) (delivery, error) {
	for {
		v.mu.Lock()
		for _, d := range v.got {
			if d.Type == typ && fmt.Sprint(d.Data[key]) == value {
				v.mu.Unlock()
				return d, nil
			}
		}
		bad := len(v.bad)
		v.mu.Unlock()
		select {
		case <-ctx.Done():
			if bad > 0 {
				return delivery{}, fmt.Errorf("no %s delivery verified; %d arrived with a wrong signature", typ, bad)
			}
			return delivery{}, fmt.Errorf("no %s delivery arrived", typ)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// webhook subscribes the app's endpoint to the receiver (the platform's
// handshake must reach it), has the consumer write to the Page and waits
// for the signed page.message.received delivery.
func (r *run) webhook(ctx context.Context) (string, error) {
	ln, err := net.Listen("tcp", r.o.ReceiverAddr)
	if err != nil {
		return "", fmt.Errorf("the receiver cannot listen: %w", err)
	}
	verify := make([]byte, 12)
	_, _ = rand.Read(verify)
	v := &receiver{secret: r.c.App.ClientSecret, verify: hex.EncodeToString(verify)}
	v.url = r.o.ReceiverURL
	if v.url == "" {
		v.url = "http://" + ln.Addr().String()
	}
	v.url = strings.TrimRight(v.url, "/") + "/hook"
	v.srv = &http.Server{Handler: v, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = v.srv.Serve(ln) }()
	r.rcv = v
	if err := r.graphPost(ctx, r.c.App.APIKey, map[string]any{"node": "app/" + r.c.App.ID + "/subscriptions",
		"callback_url": v.url, "events": []string{"page.message.received"}, "verify_token": v.verify}, nil); err != nil {
		return "", fmt.Errorf("subscribe: %w", err)
	}
	v.mu.Lock()
	shook := v.shook
	v.mu.Unlock()
	if !shook {
		return "", errors.New("the subscription was saved without the handshake reaching the receiver")
	}
	consumer := r.c.Users["consumer"]
	var session struct {
		SessionToken string `json:"sessionToken"`
	}
	if err := r.call(ctx, http.MethodPost, "/api/mobile/auth/session", "",
		map[string]string{"username": consumer.Username, "password": consumer.Password}, &session); err != nil {
		return "", fmt.Errorf("the consumer's sign-in: %w", err)
	}
	var sent struct {
		MessageID string `json:"messageId"`
	}
	text := "smoke " + hex.EncodeToString(verify[:4])
	if err := r.call(ctx, http.MethodPost, "/api/mobile/svcchat/page-messaging/messages", session.SessionToken,
		map[string]any{"pageId": r.c.Page.ID, "text": text}, &sent); err != nil {
		return "", fmt.Errorf("the consumer's message to the Page: %w", err)
	}
	if _, err := v.wait(ctx, "page.message.received", "text", text); err != nil {
		return "", err
	}
	return "handshake answered at " + v.url + "; the consumer's message arrived signed", nil
}

// session sends the consumer a session message as the app (a system
// token from client_credentials), in the window the consumer's message
// opened.
func (r *run) session(ctx context.Context) (string, error) {
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := r.call(ctx, http.MethodPost, "/api/oauth/token", "", url.Values{"grant_type": {"client_credentials"},
		"client_id": {r.c.App.ClientID}, "client_secret": {r.c.App.ClientSecret}, "scope": {"svcchat:send"}}, &tok); err != nil {
		return "", err
	}
	var sent struct {
		MessageID string `json:"message_id"`
	}
	if err := r.graphPost(ctx, tok.AccessToken, map[string]any{"node": "page/" + r.c.Page.ID + "/messages",
		"recipient_user_id": r.c.Users["consumer"].ID, "text": "smoke check reply"}, &sent); err != nil {
		return "", err
	}
	if sent.MessageID == "" {
		return "", errors.New("the message was answered without a message_id")
	}
	return "sent " + sent.MessageID, nil
}

// completion asks the completions API for an answer with the app's key.
func (r *run) completion(ctx context.Context) (string, error) {
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := r.call(ctx, http.MethodPost, "/v1/chat/completions", r.c.App.APIKey, map[string]any{"model": r.o.Model,
		"messages": []map[string]string{{"role": "user", "content": "Say OK."}}}, &out); err != nil {
		return "", err
	}
	if len(out.Choices) == 0 || out.Choices[0].Message.Content == "" {
		return "", errors.New("the completion has no answer")
	}
	return fmt.Sprintf("%s answered %d characters", r.o.Model, len(out.Choices[0].Message.Content)), nil
}
