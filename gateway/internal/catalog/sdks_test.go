package catalog

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/svcplatform/svc/gateway/internal/route"
	catalogv1 "github.com/svcplatform/svc/gen/svc/catalog/v1"
)

// module is the repository's Go module path.
const module = "github.com/svcplatform/svc"

// repoRoot is the repository's folder: where go.mod is, above this one.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = up
	}
}

// The catalog's SDKs are what the repository builds and tests, not names
// kept by hand: each entry's folder exists and holds what its package
// says (a Go package at that import path; for the API client, a connect
// client for every product with a service; for the TypeScript client,
// the generator and the client library its test installs), make test
// runs it, and its docs section exists.
func TestEverySDKInTheCatalogIsBuiltAndTested(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	languages := map[string]bool{}
	for _, s := range SDKs("1.2.3") {
		languages[s.Language] = true
		t.Run(s.Name, func(t *testing.T) {
			if s.Version != "1.2.3" {
				t.Errorf("version %q is not the gateway's", s.Version)
			}
			dir := filepath.Join(root, s.Path)
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				t.Fatalf("path %s: %v", s.Path, err)
			}
			checkDocs(t, root, s.Docs)
			switch s.Language {
			case "go":
				if s.Package == module+"/"+s.Path {
					checkGoPackage(t, dir)
					return
				}
				checkConnectClients(t, root, s)
			case "typescript":
				var pkg struct{ Dependencies map[string]string }
				b, err := os.ReadFile(filepath.Join(dir, "package.json"))
				if err != nil || json.Unmarshal(b, &pkg) != nil {
					t.Fatalf("%s/package.json: %v", s.Path, err)
				}
				// The generator and the client library the package names,
				// and the compiler the test checks the client with.
				for _, dep := range []string{"openapi-typescript", "openapi-fetch", "typescript"} {
					if pkg.Dependencies[dep] == "" {
						t.Errorf("%s does not install %s", s.Path, dep)
					}
					if strings.HasPrefix(dep, "openapi-") && !strings.Contains(s.Package, dep) {
						t.Errorf("package %q does not name %s", s.Package, dep)
					}
				}
				if !strings.Contains(string(makefile), "cd "+s.Path+" && npm ci") {
					t.Errorf("make test does not run %s", s.Path)
				}
			default:
				t.Errorf("language %q", s.Language)
			}
		})
	}
	if !languages["go"] || !languages["typescript"] {
		t.Fatalf("the catalog lacks a Go or a TypeScript SDK: %v", languages)
	}
}

// checkGoPackage: dir is a Go package with tests (go test ./... runs them).
func checkGoPackage(t *testing.T, dir string) {
	t.Helper()
	code, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	tests, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if len(code) == len(tests) || len(tests) == 0 {
		t.Errorf("%s: %d Go files, %d tests", dir, len(code), len(tests))
	}
}

// checkConnectClients: every product with a service under the SDK's folder
// has its connect client where the package pattern says.
func checkConnectClients(t *testing.T, root string, s SDK) {
	t.Helper()
	if !strings.HasPrefix(s.Package, module+"/"+s.Path+"/") {
		t.Fatalf("package %s is not under %s", s.Package, s.Path)
	}
	// A product with a service is one whose .proto declares one.
	var services []string
	protos, _ := filepath.Glob(filepath.Join(root, "proto", strings.TrimPrefix(s.Path, "gen/"), "*", "v1", "*.proto"))
	for _, f := range protos {
		if b, err := os.ReadFile(f); err == nil && regexp.MustCompile(`(?m)^service `).Match(b) {
			services = append(services, f)
		}
	}
	if len(services) == 0 {
		t.Fatal("no generated services")
	}
	for _, f := range services {
		product := filepath.Base(filepath.Dir(filepath.Dir(f)))
		rel := strings.ReplaceAll(strings.TrimPrefix(s.Package, module+"/"), "<product>", product)
		clients, _ := filepath.Glob(filepath.Join(root, rel, "*.connect.go"))
		if len(clients) == 0 {
			t.Errorf("product %s has no connect client in %s", product, rel)
			continue
		}
		b, err := os.ReadFile(clients[0])
		if err != nil || !regexp.MustCompile(`func New\w+Client\(`).Match(b) {
			t.Errorf("%s holds no client constructor: %v", clients[0], err)
		}
	}
}

// checkDocs: ref is "file#anchor", a heading of an embedded docs page.
func checkDocs(t *testing.T, root, ref string) {
	t.Helper()
	file, anchor, _ := strings.Cut(ref, "#")
	b, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatalf("docs %s: %v", ref, err)
	}
	for line := range strings.Lines(string(b)) {
		if h, ok := strings.CutPrefix(strings.TrimSpace(line), "## "); ok && strings.ReplaceAll(strings.ToLower(h), " ", "-") == anchor {
			return
		}
	}
	t.Errorf("docs %s: no such heading", ref)
}

type noRoutes struct{}

func (noRoutes) Table() *route.Table { return nil }

func TestTheCatalogListsEachSDKWithWhereToGetIt(t *testing.T) {
	t.Parallel()
	res, err := New(noRoutes{}, nil, SDKs("1.2.3")).GetCatalog(context.Background(), connect.NewRequest(&catalogv1.GetCatalogRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Msg.GetData() {
		if e.GetKind() != "sdk" || e.GetLanguage() == "" || e.GetPackage() == "" || e.GetPath() == "" || e.GetDocs() == "" || e.GetVersion() != "1.2.3" {
			t.Errorf("entry %v", e)
		}
		got = append(got, e.GetName())
	}
	if len(got) != len(SDKs("")) {
		t.Fatalf("sdks %v", got)
	}
}
