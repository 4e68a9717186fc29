package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/svcplatform/svc/internal/gatewaytest"
)

// conformance sends requests to a running gateway and checks each request
// and its answer against the gateway's own OpenAPI document, with
// kin-openapi's request and response validators.
type conformance struct {
	t      *testing.T
	spec   *openapi3.T
	router routers.Router
}

func init() {
	// kin-openapi's own form decoder writes every property the form lacks
	// as null, so an optional field (client_secret with HTTP Basic) fails;
	// this one leaves absent fields absent.
	openapi3filter.RegisterBodyDecoder("application/x-www-form-urlencoded",
		func(body io.Reader, _ http.Header, schema *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
			b, err := io.ReadAll(body)
			if err != nil {
				return nil, err
			}
			values, err := url.ParseQuery(string(b))
			if err != nil {
				return nil, err
			}
			obj := map[string]any{}
			for k, v := range values {
				if p := schema.Value.Properties[k]; p != nil && p.Value.Type.Is("array") {
					items := make([]any, len(v))
					for i := range v {
						items[i] = v[i]
					}
					obj[k] = items
					continue
				}
				obj[k] = v[0]
			}
			return obj, nil
		})
}

func newConformance(t *testing.T, g *gatewaytest.Gateway) *conformance {
	t.Helper()
	spec := reference(t, g)
	spec.Servers = openapi3.Servers{{URL: g.URL}}
	router, err := legacy.NewRouter(spec)
	if err != nil {
		t.Fatal(err)
	}
	return &conformance{t: t, spec: spec, router: router}
}

// call sends req, which the document must describe, and validates the
// answer against the operation's responses; it returns the status and body.
func (c *conformance) call(req *http.Request, body []byte) (int, []byte) {
	t := c.t
	t.Helper()
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s is not in the document: %v", req.Method, req.URL, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	req.Body = io.NopCloser(bytes.NewReader(body))
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		t.Fatalf("%s %s: the request does not match the document: %v", req.Method, req.URL, err)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: res.StatusCode, Header: res.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	out.SetBodyBytes(got)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Fatalf("%s %s: the answer (%d %s) does not match the document: %v", req.Method, req.URL, res.StatusCode, got, err)
	}
	return res.StatusCode, got
}

func (c *conformance) request(method, path string, header map[string]string, body []byte) *http.Request {
	c.t.Helper()
	req, err := http.NewRequest(method, c.spec.Servers[0].URL+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return req
}

// node checks a Graph answer against its node's own response schema in
// x-svc-nodes, which is stricter than the endpoint's any-of.
func (c *conformance) node(method, node string, answer []byte) {
	t := c.t
	t.Helper()
	raw, _ := json.Marshal(c.spec.Extensions["x-svc-nodes"])
	var nodes []struct {
		Method, Node string
		Response     struct {
			Ref string `json:"$ref"`
		}
	}
	if err := json.Unmarshal(raw, &nodes); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Method == method && n.Node == node {
			s := c.spec.Components.Schemas[strings.TrimPrefix(n.Response.Ref, "#/components/schemas/")]
			if s == nil {
				t.Fatalf("%s %s: no response schema %q", method, node, n.Response.Ref)
			}
			var v any
			if err := json.Unmarshal(answer, &v); err != nil {
				t.Fatal(err)
			}
			if err := s.Value.VisitJSON(v); err != nil {
				t.Fatalf("%s %s: the answer %s does not match its node's schema: %v", method, node, answer, err)
			}
			return
		}
	}
	t.Fatalf("%s %s is not in x-svc-nodes", method, node)
}

func TestRealAnswersOfARunningGatewayMatchTheAPIReference(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	creds := g.Credentials(t)
	c := newConformance(t, g)
	user := map[string]string{"Authorization": "Bearer " + g.UserToken(t, "owner", "pages:read", "pages:manage")}
	jsonUser := map[string]string{"Authorization": user["Authorization"], "Content-Type": "application/json"}
	page := creds.Page.ID

	// A Graph write and a Graph read of the same edge.
	status, body := c.call(c.request("POST", "/api/v1/graph?node=page/"+page+"/posts", jsonUser, []byte(`{"content":"Described by the reference"}`)),
		[]byte(`{"content":"Described by the reference"}`))
	if status != 200 {
		t.Fatalf("Graph write: %d %s", status, body)
	}
	c.node("POST", "page/{page_id}/posts", body)
	status, body = c.call(c.request("GET", "/api/v1/graph?node=page/"+page+"/posts&limit=2", user, nil), nil)
	if status != 200 || !strings.Contains(string(body), "Described by the reference") {
		t.Fatalf("Graph read: %d %s", status, body)
	}
	c.node("GET", "page/{page_id}/posts", body)
	// A refusal matches the error envelope.
	if status, body = c.call(c.request("GET", "/api/v1/graph?node=post/999999999", user, nil), nil); status != 404 {
		t.Fatalf("an unknown post: %d %s", status, body)
	}

	// A plugin's REST path.
	if status, body = c.call(c.request("GET", "/api/v1/pages/"+page+"/posts", user, nil), nil); status != 200 {
		t.Fatalf("REST read: %d %s", status, body)
	}

	// Chat completions with svc-builtin, and the models.
	app := map[string]string{"Authorization": "Bearer " + creds.App.APIKey, "Content-Type": "application/json"}
	chat := []byte(`{"model":"svc-builtin","messages":[{"role":"user","content":"hello"}]}`)
	if status, body = c.call(c.request("POST", "/v1/chat/completions", app, chat), chat); status != 200 {
		t.Fatalf("chat completion: %d %s", status, body)
	}
	if status, body = c.call(c.request("GET", "/v1/models", app, nil), nil); status != 200 {
		t.Fatalf("models: %d %s", status, body)
	}

	// The OAuth token endpoint: client_credentials with HTTP Basic, and a
	// refused grant.
	form := []byte(url.Values{"grant_type": {"client_credentials"}}.Encode())
	req := c.request("POST", "/api/oauth/token", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, form)
	req.SetBasicAuth(url.QueryEscape(creds.App.ClientID), url.QueryEscape(creds.App.ClientSecret))
	if status, body = c.call(req, form); status != 200 {
		t.Fatalf("token: %d %s", status, body)
	}
	bad := []byte(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"nope"}}.Encode())
	req = c.request("POST", "/api/oauth/token", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, bad)
	req.SetBasicAuth(url.QueryEscape(creds.App.ClientID), url.QueryEscape(creds.App.ClientSecret))
	if status, body = c.call(req, bad); status != 400 {
		t.Fatalf("bad refresh token: %d %s", status, body)
	}
	if status, body = c.call(c.request("GET", "/.well-known/openid-configuration", nil, nil), nil); status != 200 {
		t.Fatalf("discovery: %d %s", status, body)
	}
	if status, body = c.call(c.request("GET", "/oauth/jwks", nil, nil), nil); status != 200 {
		t.Fatalf("jwks: %d %s", status, body)
	}

	// The mobile sign-in.
	signIn, _ := json.Marshal(map[string]string{"username": creds.Users["owner"].Username, "password": creds.Users["owner"].Password})
	if status, body = c.call(c.request("POST", "/api/mobile/auth/session", map[string]string{"Content-Type": "application/json"}, signIn), signIn); status != 200 {
		t.Fatalf("sign-in: %d %s", status, body)
	}
}
