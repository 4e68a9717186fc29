package openapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/svcplatform/svc/gateway/internal/route"
	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	catalogv1 "github.com/svcplatform/svc/gen/svc/catalog/v1"
	chatv1 "github.com/svcplatform/svc/gen/svc/chat/v1"
	completionsv1 "github.com/svcplatform/svc/gen/svc/completions/v1"
	corev1 "github.com/svcplatform/svc/gen/svc/core/v1"
	hellov1 "github.com/svcplatform/svc/gen/svc/hello/v1"
	lensesv1 "github.com/svcplatform/svc/gen/svc/lenses/v1"
	platformv1 "github.com/svcplatform/svc/gen/svc/platform/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	wearablesv1 "github.com/svcplatform/svc/gen/svc/wearables/v1"
	webhookv1 "github.com/svcplatform/svc/gen/svc/webhook/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
)

// source is a route source serving every service of files, with their
// descriptors shipped as a plugin's manifest ships them.
func source(t *testing.T, name string, files ...protoreflect.FileDescriptor) route.Source {
	t.Helper()
	m := &pluginv1.Manifest{Name: name, Version: "1.0.0", Files: &descriptorpb.FileDescriptorSet{}}
	seen := map[string]bool{}
	var visit func(fd protoreflect.FileDescriptor)
	visit = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		imports := fd.Imports()
		for i := range imports.Len() {
			visit(imports.Get(i).FileDescriptor)
		}
		m.Files.File = append(m.Files.File, protodesc.ToFileDescriptorProto(fd))
	}
	for _, fd := range files {
		visit(fd)
		for i := range fd.Services().Len() {
			m.Services = append(m.Services, string(fd.Services().Get(i).FullName()))
		}
	}
	p, err := manifestcheck.Check(m)
	if err != nil {
		t.Fatal(err)
	}
	return route.Source{Plugin: p}
}

// every plugin of the tree, and the partner example.
func table(t *testing.T) *route.Table {
	t.Helper()
	tbl, err := route.Build([]route.Source{
		source(t, "core", corev1.File_svc_core_v1_graph_proto, webhookv1.File_svc_webhook_v1_webhook_proto),
		source(t, "book", bookv1.File_svc_book_v1_book_proto),
		source(t, "chat", chatv1.File_svc_chat_v1_chat_proto),
		source(t, "completions", completionsv1.File_svc_completions_v1_completions_proto),
		source(t, "lenses", lensesv1.File_svc_lenses_v1_lenses_proto),
		source(t, "svcchat", svcchatv1.File_svc_svcchat_v1_svcchat_proto),
		source(t, "wearables", wearablesv1.File_svc_wearables_v1_wearables_proto),
		source(t, "hello", hellov1.File_svc_hello_v1_hello_proto),
	})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

var compiled = []Compiled{
	{Service: platformv1.File_svc_platform_v1_platform_proto.Services().Get(0), Public: true},
	{Service: catalogv1.File_svc_catalog_v1_catalog_proto.Services().Get(0), Public: true},
}

func load(t *testing.T, doc *Document) *openapi3.T {
	t.Helper()
	body, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	spec, err := loader.LoadFromData(body)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := spec.Validate(context.Background()); err != nil {
		t.Fatalf("the document is not valid OpenAPI 3: %v", err)
	}
	return spec
}

func TestTheDocumentOfEveryPluginValidatesAsOpenAPI3(t *testing.T) {
	t.Parallel()
	tbl := table(t)
	spec := load(t, Build(Info{Title: "svc", Version: "test", ServerURL: "http://localhost:8080"}, tbl, compiled))
	// Every REST binding of every method is a path with its method.
	for _, m := range tbl.Methods() {
		for _, b := range bindings(m.Desc) {
			path, _ := PathTemplate(b.path)
			item := spec.Paths.Find(path)
			if item == nil || item.GetOperation(strings.ToUpper(b.method)) == nil {
				t.Errorf("%s %s of %s is missing", b.method, path, m.Procedure)
			}
		}
	}
	for _, want := range []string{"/api/v1/hello/{name}", "/api/v1/platform/changelog", "/api/developers/platform/catalog", "/api/v1/graph"} {
		if spec.Paths.Find(want) == nil {
			t.Errorf("%s is missing", want)
		}
	}
}

func TestAGetBindingTakesTheUnboundScalarFieldsAsQueryParameters(t *testing.T) {
	t.Parallel()
	doc := Build(Info{Title: "svc", Version: "test"}, table(t), nil)
	op := doc.Paths["/api/v1/hello/{name}"]["get"]
	if op == nil {
		t.Fatal("no GET /api/v1/hello/{name}")
	}
	if len(op.Parameters) == 0 || op.Parameters[0].In != "path" || op.Parameters[0].Name != "name" || !op.Parameters[0].Required {
		t.Fatalf("parameters %+v", op.Parameters)
	}
	if op.Security == nil || len(*op.Security) != 2 {
		t.Fatalf("a public method takes an optional credential: %+v", op.Security)
	}
	if op.Responses["default"].Ref != "#/components/responses/Error" {
		t.Fatalf("refusals are not the shared envelope: %+v", op.Responses)
	}
}

func TestProtovalidateRulesBecomeSchemaKeywords(t *testing.T) {
	t.Parallel()
	doc := Build(Info{Title: "svc", Version: "test"}, table(t), nil)
	// book's CreatePostRequest: content has a max_len, page_id a max_len of 64.
	var found bool
	for name, s := range doc.Components.Schemas {
		for field, p := range s.Properties {
			if p.MaxLength != nil {
				found = true
				t.Logf("%s.%s maxLength %d", name, field, *p.MaxLength)
			}
		}
	}
	for _, item := range doc.Paths {
		for _, op := range item {
			for _, p := range op.Parameters {
				if p.Schema.MaxLength != nil {
					found = true
				}
			}
		}
	}
	if !found {
		t.Fatal("no protovalidate length rule reached the document")
	}
}

func TestTheGraphEndpointListsEveryNode(t *testing.T) {
	t.Parallel()
	tbl := table(t)
	doc := Build(Info{Title: "svc", Version: "test"}, tbl, nil)
	want := 0
	for _, m := range tbl.Methods() {
		want += len(m.Nodes)
	}
	if want == 0 || len(doc.Nodes) != want {
		t.Fatalf("%d nodes listed, want %d", len(doc.Nodes), want)
	}
	if !strings.Contains(doc.Paths["/api/v1/graph"]["get"].Description, "hello/{name}") {
		t.Fatal("the Graph description does not list the partner's node")
	}
}

func TestTheDocumentIsBuiltOncePerRouteTable(t *testing.T) {
	t.Parallel()
	first, second := table(t), table(t)
	cur := first
	ref := New(Info{Title: "svc", Version: "test"}, func() *route.Table { return cur }, nil)
	a, _ := ref.Current()
	b, _ := ref.Current()
	if a != b {
		t.Fatal("rebuilt for the same table")
	}
	cur = second
	if c, _ := ref.Current(); c == a {
		t.Fatal("not rebuilt for a new table")
	}
}

func TestPathTemplate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, path, vars string }{
		{"/api/v1/hello/{name}", "/api/v1/hello/{name}", "name"},
		{"/v1/{name=pages/*}/posts/{post.id}", "/v1/{name}/posts/{post.id}", "name,post.id"},
		{"/v1/plain", "/v1/plain", ""},
		{"/v1/{broken", "/v1/{broken", ""},
	} {
		path, vars := PathTemplate(c.in)
		if path != c.path || strings.Join(vars, ",") != c.vars {
			t.Errorf("%s: %s %v", c.in, path, vars)
		}
	}
}

func FuzzPathTemplate(f *testing.F) {
	for _, s := range []string{"/api/v1/hello/{name}", "/v1/{a=b/*}/{c}", "{", "}{", "{=}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		path, vars := PathTemplate(s)
		if len(path) > len(s) {
			t.Fatalf("%q grew to %q", s, path)
		}
		for _, v := range vars {
			if !strings.Contains(path, "{"+v+"}") {
				t.Fatalf("%q: variable %q not in %q", s, v, path)
			}
		}
	})
}

// TestTheGraphTakesTheAccessTokenParameter checks that the reference says
// what CONTRACT §20 lets a Graph client do: the credential as the
// access_token parameter in place of the header, on every Graph method.
func TestTheGraphTakesTheAccessTokenParameter(t *testing.T) {
	t.Parallel()
	spec := load(t, Build(Info{Title: "svc", Version: "test"}, table(t), nil))
	scheme := spec.Components.SecuritySchemes["access_token"]
	if scheme == nil || scheme.Value.Type != "apiKey" || scheme.Value.In != "query" || scheme.Value.Name != "access_token" {
		t.Fatalf("access_token scheme: %+v", scheme)
	}
	for _, method := range []string{"GET", "POST", "DELETE"} {
		op := spec.Paths.Find("/api/v1/graph").GetOperation(method)
		if op.Security == nil || len(*op.Security) != 2 || (*op.Security)[1]["access_token"] == nil {
			t.Errorf("%s /api/v1/graph security: %+v", method, op.Security)
		}
	}
}
