package dispatch

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/gateway/internal/graph"
	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
)

// habitsRig is the Graph over real HTTP as the gateway serves it (the
// access_token parameter read by the authenticator), with the book service
// recording the posts it is asked to create.
type habitsRig struct {
	url, token, page string
	mu               sync.Mutex
	created          []*bookv1.CreatePostRequest
}

func newHabitsRig(t *testing.T) *habitsRig {
	t.Helper()
	h := &habitsRig{}
	w, book, authn := graphWorld(t, tenPosts, func(req *bookv1.CreatePostRequest) *bookv1.CreatePostResponse {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.created = append(h.created, proto.Clone(req).(*bookv1.CreatePostRequest))
		return fixedPostID(req)
	})
	g := inProcessGateway(t, book, authn)
	h.token = serveGraph(t, w, g, "pages:read", "pages:manage")
	hs := httptest.NewServer(g.srv)
	t.Cleanup(hs.Close)
	h.url, h.page = hs.URL, w.Page.ID
	return h
}

// lastPost is the last post the book service was asked to create.
func (h *habitsRig) lastPost(t *testing.T) *bookv1.CreatePostRequest {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.created) == 0 {
		t.Fatal("no post was created")
	}
	return h.created[len(h.created)-1]
}

func (h *habitsRig) posts() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.created)
}

// graphAnswer is a Graph answer's status and error numbers.
type graphAnswer struct {
	status  int
	body    string
	code    int
	message string
}

func readAnswer(t *testing.T, res *http.Response) graphAnswer {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := graphAnswer{status: res.StatusCode, body: string(b)}
	var e struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil {
		a.code, a.message = e.Error.Code, e.Error.Message
	}
	return a
}

// do sends a Graph request with an optional bearer header.
func (h *habitsRig) do(t *testing.T, method, query, contentType, body, bearer string) graphAnswer {
	t.Helper()
	req, err := http.NewRequest(method, h.url+graph.Path+"?"+query, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return readAnswer(t, res)
}

const formType = "application/x-www-form-urlencoded"

// TestGraphWriteAcceptsAFormBody checks CONTRACT §20: a Graph POST may be
// form-encoded, as curl -d sends it (raw HTTP here) and as Go's
// http.PostForm does, binding as the JSON body would.
func TestGraphWriteAcceptsAFormBody(t *testing.T) {
	h := newHabitsRig(t)
	body := "content=Hello+from+a+form+%E2%98%95&audience=followers"
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s?node=page/%s/posts HTTP/1.1\r\nHost: localhost\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n"+
		"Authorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		graph.Path, h.page, h.token, formType, len(body), body)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := readAnswer(t, res); a.status != http.StatusOK || a.body != `{"id":"1000002000"}` {
		t.Fatalf("raw form write: %d %s", a.status, a.body)
	}
	if p := h.lastPost(t); p.GetContent() != "Hello from a form ☕" || p.GetAudience() != "followers" || p.GetPageId() != h.page {
		t.Fatalf("bound %v", p)
	}

	// http.PostForm cannot set a header: the token is a form field, and the
	// node too, as Meta's SDKs send them.
	res, err = http.PostForm(h.url+graph.Path, url.Values{"node": {"page/" + h.page + "/posts"},
		"content": {`{"a":"b"} & more`}, "access_token": {h.token}})
	if err != nil {
		t.Fatal(err)
	}
	if a := readAnswer(t, res); a.status != http.StatusOK {
		t.Fatalf("PostForm write: %d %s", a.status, a.body)
	}
	if p := h.lastPost(t); p.GetContent() != `{"a":"b"} & more` || p.GetAudience() != "" {
		t.Fatalf("bound %v: a string field takes the text as it is", p)
	}
}

// TestGraphFormBodyIsRefusedAsItsJSONBody checks that a form-encoded write
// is refused exactly where its JSON form is: an unknown field, a field
// given the wrong type, a value validation refuses.
func TestGraphFormBodyIsRefusedAsItsJSONBody(t *testing.T) {
	h := newHabitsRig(t)
	node := "node=page/" + h.page + "/posts"
	cases := []struct{ form, json string }{
		{"content=hi&colour=red", `{"content":"hi","colour":"red"}`},
		{"content=hi&audience=friends", `{"content":"hi","audience":"friends"}`},
		{"content=", `{"content":""}`},
		{"content=hi&page_id=1", `{"content":"hi","page_id":"1"}`},
	}
	for _, c := range cases {
		f := h.do(t, http.MethodPost, node, formType, c.form, h.token)
		j := h.do(t, http.MethodPost, node, "application/json", c.json, h.token)
		if f.status != http.StatusBadRequest || f.status != j.status || f.code != j.code || f.message != j.message {
			t.Errorf("%s: %d %s; its JSON body: %d %s", c.form, f.status, f.body, j.status, j.body)
		}
	}
	if a := h.do(t, http.MethodPost, node, "text/plain", "content=hi", h.token); a.status != http.StatusBadRequest || a.code != 100 {
		t.Errorf("text/plain: %d %s, want 400 code 100", a.status, a.body)
	}
	if n := h.posts(); n != 0 {
		t.Fatalf("%d posts created by refused writes", n)
	}
}

// TestGraphAccessTokenParameterStandsForTheHeader checks CONTRACT §20:
// access_token in the query (reads and writes) or in a form body is the
// request's credential, the same token in the header too is accepted, and
// different ones (header and parameter, query and form) are refused.
func TestGraphAccessTokenParameterStandsForTheHeader(t *testing.T) {
	h := newHabitsRig(t)
	posts := "node=page/" + h.page + "/posts"
	tok := url.QueryEscape(h.token)
	if a := h.do(t, http.MethodGet, posts+"&limit=2&access_token="+tok, "", "", ""); a.status != http.StatusOK {
		t.Fatalf("GET with access_token in the query: %d %s", a.status, a.body)
	}
	if a := h.do(t, http.MethodPost, posts+"&access_token="+tok, "application/json", `{"content":"query"}`, ""); a.status != http.StatusOK || h.lastPost(t).GetContent() != "query" {
		t.Fatalf("JSON POST with access_token in the query: %d %s", a.status, a.body)
	}
	if a := h.do(t, http.MethodPost, posts, formType, "content=form&access_token="+tok, ""); a.status != http.StatusOK || h.lastPost(t).GetContent() != "form" {
		t.Fatalf("form POST with access_token in the body: %d %s", a.status, a.body)
	}
	if a := h.do(t, http.MethodPost, posts+"&access_token="+tok, formType, "content=both&access_token="+tok, h.token); a.status != http.StatusOK || h.lastPost(t).GetContent() != "both" {
		t.Fatalf("the same token in the header, query and form: %d %s", a.status, a.body)
	}
	before := h.posts()
	for name, c := range map[string]struct{ query, body, header string }{
		"header and query differ": {"&access_token=other", "content=x", h.token},
		"header and form differ":  {"", "content=x&access_token=other", h.token},
		"query and form differ":   {"&access_token=" + tok, "content=x&access_token=other", ""},
	} {
		a := h.do(t, http.MethodPost, posts+c.query, formType, c.body, c.header)
		if a.status != http.StatusBadRequest || a.code != 100 || !strings.Contains(a.message, "access_token") {
			t.Errorf("%s: %d %s, want 400 code 100 naming access_token", name, a.status, a.body)
		}
	}
	if a := h.do(t, http.MethodGet, posts+"&access_token=other", "", "", h.token); a.status != http.StatusBadRequest || a.code != 100 {
		t.Errorf("GET, header and query differ: %d %s", a.status, a.body)
	}
	if n := h.posts(); n != before {
		t.Fatalf("refused writes created %d posts", n-before)
	}
}

// TestGraphFormAccessTokenAuthenticatesBeforeTheBodyIsBound checks
// CONTRACT §15 for form bodies: the form's access_token is the credential,
// checked before the rest of the body is looked at; without a valid one
// the answer is 401 whatever the body holds.
func TestGraphFormAccessTokenAuthenticatesBeforeTheBodyIsBound(t *testing.T) {
	h := newHabitsRig(t)
	posts := "node=page/" + h.page + "/posts"
	for name, c := range map[string]struct {
		body string
		code int
	}{
		"invalid token, unknown field": {"colour=red&access_token=nope", 190},
		"empty token, invalid type":    {"content=x&access_token=", 190},
		"no token, unknown field":      {"colour=red", 104},
		"no token, malformed form":     {"content=%zz", 104},
	} {
		if a := h.do(t, http.MethodPost, posts, formType, c.body, ""); a.status != http.StatusUnauthorized || a.code != c.code {
			t.Errorf("%s: %d %s, want 401 code %d", name, a.status, a.body, c.code)
		}
	}
	if a := h.do(t, http.MethodGet, posts+"&access_token=nope&colour=red", "", "", ""); a.status != http.StatusUnauthorized || a.code != 190 {
		t.Errorf("GET with an invalid access_token: %d %s, want 401 code 190", a.status, a.body)
	}
	if a := h.do(t, http.MethodPost, posts, formType, "colour=red&access_token="+url.QueryEscape(h.token), ""); a.status != http.StatusBadRequest || a.code != 100 {
		t.Errorf("a valid form token, then the body: %d %s, want 400 code 100", a.status, a.body)
	}
}

// TestAudienceRefusalListsOnlyTheValuesAllowed checks issue 28 item 8: a
// post's audience outside CONTRACT §2's values is refused listing them,
// without the empty value that stands for the default (which is still
// accepted).
func TestAudienceRefusalListsOnlyTheValuesAllowed(t *testing.T) {
	h := newHabitsRig(t)
	node := "node=page/" + h.page + "/posts"
	a := h.do(t, http.MethodPost, node, "application/json", `{"content":"hi","audience":"friends"}`, h.token)
	if want := "Invalid parameter: audience: must be in list [everyone, followers, only_me]"; a.status != http.StatusBadRequest || a.message != want {
		t.Fatalf("%d %s, want 400 %q", a.status, a.body, want)
	}
	if a := h.do(t, http.MethodPost, node, "application/json", `{"content":"hi","audience":""}`, h.token); a.status != http.StatusOK {
		t.Fatalf("the default audience: %d %s", a.status, a.body)
	}
}

// TestGraphBatchMayBeFormEncoded checks Meta's batch habit, curl -F
// 'access_token=…' -F 'batch=[…]': a form whose batch is the JSON text of
// the items, authenticated by the form's access_token.
func TestGraphBatchMayBeFormEncoded(t *testing.T) {
	h := newHabitsRig(t)
	batch := `[{"method":"GET","relative_url":"page/` + h.page + `/posts?limit=1"},{"method":"POST","relative_url":"page/` + h.page + `/posts","body":{"content":"batched"}}]`
	a := h.do(t, http.MethodPost, "", formType, url.Values{"batch": {batch}, "access_token": {h.token}}.Encode(), "")
	var items []struct{ Code int }
	if err := json.Unmarshal([]byte(a.body), &items); a.status != http.StatusOK || err != nil || len(items) != 2 || items[0].Code != 200 || items[1].Code != 200 {
		t.Fatalf("form batch: %d %s", a.status, a.body)
	}
	if p := h.lastPost(t); p.GetContent() != "batched" {
		t.Fatalf("bound %v", p)
	}
	if a := h.do(t, http.MethodPost, "", formType, url.Values{"batch": {batch}, "content": {"x"}, "access_token": {h.token}}.Encode(), ""); a.status != http.StatusBadRequest || a.code != 100 {
		t.Fatalf("a batch with another field: %d %s", a.status, a.body)
	}
}
