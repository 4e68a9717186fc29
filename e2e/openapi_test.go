package e2e

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/svcplatform/svc/internal/gatewaytest"
)

// restTemplate turns a google.api.http path into its OpenAPI form.
var restTemplate = regexp.MustCompile(`\{([^}=]+)=[^}]*\}`)

// reference fetches and validates GET /api/v1/openapi.json.
func reference(t *testing.T, g *gatewaytest.Gateway) *openapi3.T {
	t.Helper()
	res, body := do(t, "GET", g.URL+"/api/v1/openapi.json", nil, nil)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("openapi.json: %d %s", res.StatusCode, body)
	}
	spec, err := openapi3.NewLoader().LoadFromData(body)
	if err != nil {
		t.Fatalf("load the reference: %v", err)
	}
	if err := spec.Validate(context.Background()); err != nil {
		t.Fatalf("the reference is not valid OpenAPI 3: %v", err)
	}
	return spec
}

// restSurfaces are the REST paths of every loaded plugin, from the parity
// list (generated from the manifests): "GET /api/v1/hello/{name}" → plugin.
func restSurfaces(t *testing.T, g *gatewaytest.Gateway) map[string]string {
	t.Helper()
	res, body := do(t, "GET", g.URL+"/api/v1/business/parity", nil, nil)
	if res.StatusCode != 200 {
		t.Fatalf("parity: %d %s", res.StatusCode, body)
	}
	out := map[string]string{}
	for _, e := range decode[struct {
		Data []struct{ Product, Surface, Name string }
	}](t, body).Data {
		if e.Surface == "rest" {
			out[restTemplate.ReplaceAllString(e.Name, "{$1}")] = e.Product
		}
	}
	return out
}

func missingFrom(spec *openapi3.T, surfaces map[string]string) []string {
	var missing []string
	for s, plugin := range surfaces {
		method, path, _ := strings.Cut(s, " ")
		item := spec.Paths.Find(path)
		if item == nil || item.GetOperation(method) == nil {
			missing = append(missing, s+" ("+plugin+")")
		}
	}
	return missing
}

type docsHits struct {
	Data []struct{ Title, Path, Snippet string }
}

func TestTheAPIReferenceListsEveryRESTPathOfEveryLoadedPluginAndAPartnersAfterItsInstall(t *testing.T) {
	t.Parallel()
	bin := gatewaytest.BinDir(t)
	plugins := t.TempDir()
	built, err := os.ReadDir(filepath.Join(bin, "plugins"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range built {
		b, err := os.ReadFile(filepath.Join(bin, "plugins", f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(plugins, f.Name()), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	g := gatewaytest.Start(t, gatewaytest.Options{PluginsDir: plugins})
	admin := g.Credentials(t).AdminToken

	surfaces := restSurfaces(t, g)
	products := map[string]bool{}
	for _, p := range surfaces {
		products[p] = true
	}
	if len(products) < 2 {
		t.Fatalf("the parity list names REST paths of %d plugins: %v", len(products), surfaces)
	}
	spec := reference(t, g)
	if missing := missingFrom(spec, surfaces); len(missing) > 0 {
		t.Fatalf("REST paths missing from the reference: %v", missing)
	}
	for _, p := range []string{"/api/v1/graph", "/api/developers/docs/search", "/api/v1/platform/changelog"} {
		if spec.Paths.Find(p) == nil {
			t.Errorf("%s is not in the reference", p)
		}
	}
	if spec.Paths.Find("/api/v1/hello/{name}") != nil {
		t.Fatal("the partner's path is listed before its install")
	}
	if spec.Components.Schemas["Error"] == nil || spec.Components.SecuritySchemes["bearer"] == nil {
		t.Fatal("the error envelope or the bearer scheme is missing")
	}

	// The partner builds its plugin and drops it in: no gateway rebuild.
	buildPartnerPlugin(t, filepath.Join(plugins, "hello"))
	res, body := do(t, "POST", g.URL+"/api/admin/plugins/hello/reload", nil, map[string]string{"Authorization": "Bearer " + admin})
	if res.StatusCode != 200 {
		t.Fatalf("install: %d %s", res.StatusCode, body)
	}
	surfaces = restSurfaces(t, g)
	if surfaces["GET /api/v1/hello/{name}"] != "hello" {
		t.Fatalf("parity after the install: %v", surfaces)
	}
	spec = reference(t, g)
	if missing := missingFrom(spec, surfaces); len(missing) > 0 {
		t.Fatalf("REST paths missing after the install: %v", missing)
	}
	op := spec.Paths.Find("/api/v1/hello/{name}").Get
	if op == nil || op.Extensions["x-svc-plugin"] != "hello" || op.Parameters.GetByInAndName("path", "name") == nil {
		t.Fatalf("the partner's operation: %+v", op)
	}

	// The docs search indexes the new reference off the request path: wait
	// for the partner's operation to be found.
	var hits docsHits
	for range 100 {
		res, body = do(t, "GET", g.URL+"/api/developers/docs/search?q=hello", nil, nil)
		if res.StatusCode != 200 {
			t.Fatalf("search: %d %s", res.StatusCode, body)
		}
		hits = decode[docsHits](t, body)
		if hasPath(hits, "/api/v1/openapi.json#/paths/~1api~1v1~1hello~1{name}/get") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the partner's operation was never found by the docs search: %+v", hits)
}

func hasPath(h docsHits, path string) bool {
	for _, d := range h.Data {
		if d.Path == path {
			return true
		}
	}
	return false
}

func TestTheDocsSearchFindsDocSectionsForAnyCallerAndRefusesABadQNamingIt(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{PluginsDir: t.TempDir()})
	search := func(q string) (*http.Response, []byte) {
		return do(t, "GET", g.URL+"/api/developers/docs/search?q="+url.QueryEscape(q), nil, nil)
	}
	var hits docsHits
	for range 100 {
		res, body := search("webhook signature")
		if res.StatusCode != 200 {
			t.Fatalf("search: %d %s", res.StatusCode, body)
		}
		if hits = decode[docsHits](t, body); len(hits.Data) > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond) // the index is written just after start
	}
	if len(hits.Data) == 0 {
		t.Fatal("no hit for a word of the docs")
	}
	var doc bool
	for _, h := range hits.Data {
		if h.Title == "" || h.Snippet == "" {
			t.Errorf("hit without title or snippet: %+v", h)
		}
		doc = doc || strings.HasPrefix(h.Path, "README.md#") || strings.HasPrefix(h.Path, "docs/")
	}
	if !doc {
		t.Fatalf("no section of the docs among %+v", hits.Data)
	}
	for _, q := range []string{"", "   ", strings.Repeat("x", 201)} {
		res, body := search(q)
		e := wantGraphError(t, res, body, 400, 100, 0)
		if !strings.Contains(e.Error.Message, "q") {
			t.Errorf("q=%q: the refusal does not name q: %s", q, body)
		}
	}
	res, body := do(t, "GET", g.URL+"/api/developers/docs/search", nil, nil)
	wantGraphError(t, res, body, 400, 100, 0)
}
