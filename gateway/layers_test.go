// Package gateway_test holds checks on the gateway's shape as a whole.
package gateway_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// layers are the floors of the gateway, bottom first: a package may import
// a package of a lower floor only, never one of its own floor (but for the
// edges listed in sideways) or of a floor above. A request reads top to
// bottom without climbing back: server → edges → dispatch → {route, auth,
// validate, host} → lower utilities (ARCHITECTURE.md). Every package under
// gateway/ and internal/plugin/ must be on a floor: a new one fails this
// test until it is placed. Paths are relative to the module.
var layers = []struct {
	name     string
	packages []string
}{
	{"foundation: imports no package of the gateway or the plugin protocol", []string{
		"gateway/internal/observe", "gateway/internal/serving", "gateway/internal/version",
		"gateway/internal/web", "gateway/internal/web/pages", "gateway/internal/coredb",
		"gateway/internal/secretbox", "gateway/internal/config", "gateway/internal/host/sandbox", "gateway/internal/claim",
		"gateway/internal/smoke",
		"internal/plugin/manifestcheck", "internal/plugin/protocol",
	}},
	{"the plugin's side of the protocol, on which the SDK's types are declared", []string{
		"internal/plugin/pluginrt",
	}},
	{"the plugin wire", []string{
		"internal/plugin/wire", "internal/plugin/protocol/lanetest",
	}},
	{"errors and stored data", []string{
		"gateway/internal/apierr", "gateway/internal/store", "gateway/internal/prune",
		"gateway/internal/identity", "gateway/internal/sla",
	}},
	{"the parts of a call: its route, its caller and access rules, its validation, its plugin process", []string{
		"gateway/internal/route", "gateway/internal/auth", "gateway/internal/validate",
		"gateway/internal/host", "gateway/internal/identity/identitytest",
	}},
	{"the call path", []string{
		"gateway/internal/dispatch", "gateway/internal/replica",
	}},
	{"edges: what serves a kind of request on top of the dispatcher", []string{
		"gateway/internal/graph", "gateway/internal/openai", "gateway/internal/coregraph",
		"gateway/internal/catalog", "gateway/internal/web/console", "gateway/internal/oauth",
		"gateway/internal/webhook", "gateway/internal/leaving", "gateway/internal/admin", "gateway/internal/openapi",
		"gateway/internal/docsearch", "gateway/internal/seed", "gateway/internal/web/chatapp",
		"gateway/internal/status",
	}},
	{"the port", []string{
		"gateway/internal/server",
	}},
	{"wiring", []string{
		"gateway/internal/gateway",
	}},
	{"the program", []string{
		"gateway/cmd/gateway",
	}},
}

// sideways are the imports allowed between packages of one floor, each
// with its reason.
var sideways = map[string]string{
	"gateway/internal/coregraph -> gateway/internal/webhook": "an app's nodes show its webhook key (webhook.StandardKey)",
	"gateway/internal/seed -> gateway/internal/webhook":      "the development seed prints the seeded app's webhook key",
	"gateway/internal/openapi -> gateway/internal/graph":     "the API reference documents the Graph endpoint (its path, batch limit)",
	"gateway/internal/openapi -> gateway/internal/oauth":     "the API reference documents the OAuth paths",
	"gateway/internal/docsearch -> gateway/internal/openapi": "the docs search indexes the API reference",
}

// TestNoImportRunsUpTheGatewaysFloors parses the imports of every
// non-test file under gateway/ and internal/plugin/ and refuses any that
// runs up, or sideways without a reason.
func TestNoImportRunsUpTheGatewaysFloors(t *testing.T) {
	t.Parallel()
	root, module := moduleRoot(t)
	floor := map[string]int{}
	for i, l := range layers {
		for _, p := range l.packages {
			if _, dup := floor[p]; dup {
				t.Fatalf("package %s is on two floors", p)
			}
			floor[p] = i
		}
	}
	imports := map[string]map[string]bool{} // package -> packages of the module it imports
	for _, dir := range []string{"gateway", "internal/plugin"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			pkg := filepath.ToSlash(rel)
			if imports[pkg] == nil {
				imports[pkg] = map[string]bool{}
			}
			for _, spec := range f.Imports {
				ip, _ := strconv.Unquote(spec.Path.Value)
				if dep, ok := strings.CutPrefix(ip, module+"/"); ok {
					imports[pkg][dep] = true
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var problems []string
	for pkg, deps := range imports {
		from, ok := floor[pkg]
		if !ok {
			problems = append(problems, fmt.Sprintf("package %s is on no floor: add it to layers in gateway/layers_test.go", pkg))
			continue
		}
		for dep := range deps {
			to, checked := floor[dep]
			if !checked {
				if _, ours := imports[dep]; ours {
					problems = append(problems, fmt.Sprintf("package %s is on no floor: add it to layers in gateway/layers_test.go", dep))
				}
				continue // outside the gateway and the plugin protocol: sdk, gen, internal utilities
			}
			edge := pkg + " -> " + dep
			switch {
			case to > from:
				problems = append(problems, fmt.Sprintf("%s runs up: %q is below %q", edge, layers[from].name, layers[to].name))
			case to == from && sideways[edge] == "":
				problems = append(problems, fmt.Sprintf("%s runs sideways on the floor %q: import something lower, or give the edge a reason in sideways", edge, layers[from].name))
			}
		}
	}
	for edge := range sideways {
		from, dep, _ := strings.Cut(edge, " -> ")
		if !imports[from][dep] {
			problems = append(problems, fmt.Sprintf("sideways lists %s, which is no longer an import: remove it", edge))
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

// moduleRoot finds the module's directory and path from go.mod above the
// test's directory.
func moduleRoot(t *testing.T) (dir, module string) {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
					return dir, strings.TrimSpace(m)
				}
			}
			t.Fatal("go.mod names no module")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}
