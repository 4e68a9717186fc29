package sdk_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite api.txt with the SDK's exported API as it is")

// publicPackages are the SDK a partner imports, and all of it: everything
// else the platform shares with plugins lives under internal/.
var publicPackages = []string{
	"github.com/svcplatform/svc/sdk",
	"github.com/svcplatform/svc/sdk/event",
	"github.com/svcplatform/svc/sdk/migrate",
	"github.com/svcplatform/svc/sdk/plugintest",
}

// The SDK's exported API is api.txt, one line per exported name with its
// signature: a name added, removed or changed fails here with the
// difference, so that the surface a partner learns grows only on purpose
// (go test ./sdk -run TestTheExportedAPI -update rewrites it). No exported
// signature may name a generated (wire) type or an internal package's.
func TestTheExportedAPIIsApiTxtAndNamesNoWireType(t *testing.T) {
	t.Parallel()
	pkgs := load(t)
	var lines, leaks []string
	for _, path := range publicPackages {
		l, k := describe(pkgs[path])
		lines = append(lines, l...)
		leaks = append(leaks, k...)
	}
	for _, l := range leaks {
		t.Errorf("an exported signature names a type partners must not see: %s", l)
	}
	got := strings.Join(lines, "\n") + "\n"
	if *update {
		if err := os.WriteFile("api.txt", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("api.txt")
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(string(want), got); d != "" {
		t.Fatalf("the SDK's exported API differs from api.txt (- api.txt, + now); if the change is meant, run go test ./sdk -run TestTheExportedAPI -update:\n%s", d)
	}
}

// The SDK is the four packages and nothing else: any other package under
// sdk/ is internal.
func TestTheSDKIsFourPublicPackages(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "github.com/svcplatform/svc/sdk/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var public []string
	for _, path := range strings.Fields(string(out)) {
		if !strings.Contains(path+"/", "/internal/") {
			public = append(public, path)
		}
	}
	if !slices.Equal(public, publicPackages) {
		t.Fatalf("public packages under sdk/ = %q, want %q; put what partners do not import under internal/", public, publicPackages)
	}
}

// load type-checks the public packages from the build's export data.
func load(t *testing.T) map[string]*types.Package {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, publicPackages...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})
	pkgs := map[string]*types.Package{}
	for _, path := range publicPackages {
		p, err := imp.Import(path)
		if err != nil {
			t.Fatalf("import %s: %v", path, err)
		}
		pkgs[path] = p
	}
	return pkgs
}

// describe lists pkg's exported API, sorted, and the signatures that name a
// generated or internal type.
func describe(pkg *types.Package) (lines, leaks []string) {
	short := pkg.Path()[strings.LastIndex(pkg.Path(), "/")+1:]
	qf := func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Path()
	}
	add := func(line string, mentions ...types.Type) {
		line = short + ": " + line
		lines = append(lines, line)
		for _, typ := range mentions {
			if bad := hidden(typ, map[types.Type]bool{}); bad != "" {
				leaks = append(leaks, line+" ("+bad+")")
			}
		}
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.TypeName:
			describeType(obj, qf, add)
		case *types.Func:
			add(types.ObjectString(obj, qf), obj.Type())
		default:
			add(types.ObjectString(obj, qf), obj.Type())
		}
	}
	slices.Sort(lines)
	return lines, leaks
}

func describeType(obj *types.TypeName, qf types.Qualifier, add func(string, ...types.Type)) {
	named, _ := obj.Type().(*types.Named)
	if obj.IsAlias() || named == nil {
		add(types.ObjectString(obj, qf), obj.Type())
		return
	}
	tparams := ""
	if tp := named.TypeParams(); tp.Len() > 0 {
		var b strings.Builder
		for i := range tp.Len() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(tp.At(i).Obj().Name() + " " + types.TypeString(tp.At(i).Constraint(), qf))
		}
		tparams = "[" + b.String() + "]"
	}
	switch u := named.Underlying().(type) {
	case *types.Struct:
		add("type " + obj.Name() + tparams + " struct")
		for i := range u.NumFields() {
			if f := u.Field(i); f.Exported() {
				add(fmt.Sprintf("field %s.%s %s", obj.Name(), f.Name(), types.TypeString(f.Type(), qf)), f.Type())
			}
		}
	case *types.Interface:
		add("type " + obj.Name() + tparams + " interface")
		for i := range u.NumMethods() {
			if m := u.Method(i); m.Exported() {
				add(fmt.Sprintf("method (%s) %s%s", obj.Name(), m.Name(), strings.TrimPrefix(types.TypeString(m.Type(), qf), "func")), m.Type())
			}
		}
		return
	default:
		add("type "+obj.Name()+tparams+" "+types.TypeString(u, qf), u)
	}
	ms := types.NewMethodSet(types.NewPointer(named))
	for i := range ms.Len() {
		m := ms.At(i).Obj()
		if !m.Exported() {
			continue
		}
		recv := obj.Name()
		if sig := m.Type().(*types.Signature); sig.Recv() != nil {
			if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
				recv = "*" + recv
			}
		}
		add(fmt.Sprintf("method (%s) %s%s", recv, m.Name(), strings.TrimPrefix(types.TypeString(m.Type(), qf), "func")), m.Type())
	}
}

// hidden names the first generated or internal type typ mentions, or "".
func hidden(typ types.Type, seen map[types.Type]bool) string {
	if seen[typ] {
		return ""
	}
	seen[typ] = true
	switch t := typ.(type) {
	case *types.Named:
		if p := t.Obj().Pkg(); p != nil {
			if strings.HasPrefix(p.Path(), "github.com/svcplatform/svc/gen/") || strings.Contains(p.Path()+"/", "/internal/") {
				return types.TypeString(t, nil)
			}
		}
		for i := range t.TypeArgs().Len() {
			if bad := hidden(t.TypeArgs().At(i), seen); bad != "" {
				return bad
			}
		}
		return "" // a named type's own API is listed where it is declared
	case *types.Pointer:
		return hidden(t.Elem(), seen)
	case *types.Slice:
		return hidden(t.Elem(), seen)
	case *types.Array:
		return hidden(t.Elem(), seen)
	case *types.Map:
		if bad := hidden(t.Key(), seen); bad != "" {
			return bad
		}
		return hidden(t.Elem(), seen)
	case *types.Chan:
		return hidden(t.Elem(), seen)
	case *types.Signature:
		for _, tuple := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tuple.Len() {
				if bad := hidden(tuple.At(i).Type(), seen); bad != "" {
					return bad
				}
			}
		}
	case *types.Struct:
		for i := range t.NumFields() {
			if f := t.Field(i); f.Exported() {
				if bad := hidden(f.Type(), seen); bad != "" {
					return bad
				}
			}
		}
	case *types.Interface:
		for i := range t.NumMethods() {
			if bad := hidden(t.Method(i).Type(), seen); bad != "" {
				return bad
			}
		}
	}
	return ""
}

// diff lists the lines only in want (-) and only in got (+).
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}
