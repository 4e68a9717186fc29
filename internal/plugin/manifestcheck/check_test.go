package manifestcheck_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	hellov1 "github.com/svcplatform/svc/gen/svc/hello/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/sdk"
)

// helloManifest is the example plugin's manifest (hello/{name} and
// hello/{name}/waves), with change applied to its method options.
func helloManifest(t testing.TB, change func(methods map[string]*descriptorpb.MethodDescriptorProto)) *pluginv1.Manifest {
	t.Helper()
	m, err := wire.Manifest(helloPlugin())
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]*descriptorpb.MethodDescriptorProto{}
	for _, f := range m.GetFiles().GetFile() {
		if f.GetPackage() != "svc.hello.v1" {
			continue
		}
		for _, md := range f.GetService()[0].GetMethod() {
			if md.Options == nil {
				md.Options = &descriptorpb.MethodOptions{}
			}
			methods[md.GetName()] = md
		}
	}
	if change != nil {
		change(methods)
	}
	return m
}

// helloPlugin is the example plugin, described as the gateway sees it.
func helloPlugin() *sdk.Plugin {
	p := sdk.New(sdk.Info{Name: "hello", Version: "1"})
	sdk.Handle(p, hellov1.File_svc_hello_v1_hello_proto.Services().ByName("HelloService").Methods().ByName("SayHello"),
		func(context.Context, *sdk.Call, *hellov1.SayHelloRequest) (*hellov1.SayHelloResponse, error) {
			return &hellov1.SayHelloResponse{}, nil
		})
	return p
}

func graph(md *descriptorpb.MethodDescriptorProto, g *pluginv1.GraphRoute) {
	proto.SetExtension(md.Options, pluginv1.E_Graph, g)
}

func access(md *descriptorpb.MethodDescriptorProto, a *pluginv1.Access) {
	proto.SetExtension(md.Options, pluginv1.E_Access, a)
}

func TestAManifestFollowingTheRulesIsAcceptedWithItsBindings(t *testing.T) {
	t.Parallel()
	p, err := manifestcheck.Check(helloManifest(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := manifestcheck.Together([]*manifestcheck.Plugin{p}); err != nil {
		t.Fatal(err)
	}
	want := []string{"GET hello/{name}", "RPC /svc.hello.v1.HelloService/SayHello", "POST hello/{name}/waves", "RPC /svc.hello.v1.HelloService/Wave"}
	if got := p.Routes(); !reflect.DeepEqual(got, want) {
		t.Fatalf("routes = %q, want %q", got, want)
	}
}

func TestAnAccessRuleReadingAStringFieldOfTheRequestIsAccepted(t *testing.T) {
	t.Parallel()
	m := helloManifest(t, func(ms map[string]*descriptorpb.MethodDescriptorProto) {
		access(ms["Wave"], &pluginv1.Access{AppRole: pluginv1.AppRole_APP_ROLE_ADMIN, AppField: "name"})
	})
	if _, err := manifestcheck.Check(m); err != nil {
		t.Fatal(err)
	}
}

// Each rule the gateway applies at load time, broken once; the refusal
// names the method and what is wrong.
func TestAManifestBreakingARuleIsRefusedNamingTheRule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rule   string
		change func(map[string]*descriptorpb.MethodDescriptorProto)
		want   string
	}{
		{"a node variable must be a whole segment", func(ms map[string]*descriptorpb.MethodDescriptorProto) {
			graph(ms["SayHello"], &pluginv1.GraphRoute{Get: "hello/x{name}"})
		}, "a variable must be a whole segment"},
		{"a node pattern follows the node syntax", func(ms map[string]*descriptorpb.MethodDescriptorProto) {
			graph(ms["SayHello"], &pluginv1.GraphRoute{Get: "hello//{name}"})
		}, "empty or relative segment"},
		{"a node variable appears once", func(ms map[string]*descriptorpb.MethodDescriptorProto) {
			graph(ms["SayHello"], &pluginv1.GraphRoute{Get: "hello/{name}/{name}"})
		}, "appears twice"},
		{"a node variable names a field of the request", func(ms map[string]*descriptorpb.MethodDescriptorProto) {
			graph(ms["SayHello"], &pluginv1.GraphRoute{Get: "hello/{who}"})
		}, "{who} is not a singular scalar field of svc.hello.v1.SayHelloRequest"},
		{"the Graph binds unary methods only", func(ms map[string]*descriptorpb.MethodDescriptorProto) {
			ms["SayHello"].ServerStreaming = proto.Bool(true)
		}, "the Graph serves unary methods only"},
		{"no method streams from the client", func(ms map[string]*descriptorpb.MethodDescriptorProto) {
			ms["Wave"].ClientStreaming = proto.Bool(true)
		}, "client streaming is not supported"},
		{"rest_success_status is a 2xx status", func(ms map[string]*descriptorpb.MethodDescriptorProto) {
			proto.SetExtension(ms["Wave"].Options, pluginv1.E_RestSuccessStatus, int32(404))
		}, "rest_success_status 404 is not a 2xx status"},
		{"public takes no other requirement", func(ms map[string]*descriptorpb.MethodDescriptorProto) {
			access(ms["SayHello"], &pluginv1.Access{Public: true, Scopes: []string{"pages_read"}})
		}, "public takes no other requirement"},
		{"a token kind is specified", func(ms map[string]*descriptorpb.MethodDescriptorProto) {
			access(ms["Wave"], &pluginv1.Access{TokenKinds: []pluginv1.TokenKind{pluginv1.TokenKind_TOKEN_KIND_UNSPECIFIED}})
		}, "TOKEN_KIND_UNSPECIFIED"},
		{"a scope is not empty", func(ms map[string]*descriptorpb.MethodDescriptorProto) {
			access(ms["Wave"], &pluginv1.Access{Scopes: []string{""}})
		}, "empty scope"},
		{"an any_scopes scope is not empty", func(ms map[string]*descriptorpb.MethodDescriptorProto) {
			access(ms["Wave"], &pluginv1.Access{AnyScopes: []string{"pages:read", ""}})
		}, "any_scopes lists an empty scope"},
		{"public takes no any_scopes", func(ms map[string]*descriptorpb.MethodDescriptorProto) {
			access(ms["SayHello"], &pluginv1.Access{Public: true, AnyScopes: []string{"pages:read"}})
		}, "public takes no other requirement"},
		{"a Page rule reads a string field of the request", func(ms map[string]*descriptorpb.MethodDescriptorProto) {
			access(ms["Wave"], &pluginv1.Access{PageRole: pluginv1.PageRole_PAGE_ROLE_ADMIN})
		}, `page_field "page_id" is not a singular string field of svc.hello.v1.WaveRequest`},
		{"a product rule reads a string field of the request", func(ms map[string]*descriptorpb.MethodDescriptorProto) {
			access(ms["Wave"], &pluginv1.Access{Product: "svcchat", PageField: "page"})
		}, `page_field "page" is not a singular string field`},
		{"an app rule reads a string field of the request", func(ms map[string]*descriptorpb.MethodDescriptorProto) {
			access(ms["Wave"], &pluginv1.Access{AppRole: pluginv1.AppRole_APP_ROLE_MEMBER})
		}, `app_field "app_id" is not a singular string field`},
		{"a target field is read by a rule", func(ms map[string]*descriptorpb.MethodDescriptorProto) {
			access(ms["Wave"], &pluginv1.Access{AppField: "name"})
		}, `app_field "name" is set, but no rule reads it`},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			t.Parallel()
			_, err := manifestcheck.Check(helloManifest(t, c.change))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "svc.hello.v1.HelloService.") {
				t.Fatalf("Check = %v, want a refusal naming the method and %q", err, c.want)
			}
		})
	}
}

func TestEveryBrokenRuleIsReportedAtOnce(t *testing.T) {
	t.Parallel()
	_, err := manifestcheck.Check(helloManifest(t, func(ms map[string]*descriptorpb.MethodDescriptorProto) {
		graph(ms["SayHello"], &pluginv1.GraphRoute{Get: "hello/{who}"})
		access(ms["Wave"], &pluginv1.Access{PageRole: pluginv1.PageRole_PAGE_ROLE_ADMIN})
	}))
	if err == nil || !strings.Contains(err.Error(), "{who}") || !strings.Contains(err.Error(), "page_field") {
		t.Fatalf("Check = %v, want both problems", err)
	}
}

func TestDescriptorsThatDoNotResolveAreRefused(t *testing.T) {
	t.Parallel()
	m := helloManifest(t, nil)
	m.Files.File = m.Files.File[len(m.Files.File)-1:] // the hello file without its imports
	if _, err := manifestcheck.Check(m); err == nil || !strings.Contains(err.Error(), "descriptors") {
		t.Fatalf("Check = %v, want a descriptor error", err)
	}
	m = helloManifest(t, nil)
	m.Services = append(m.Services, "svc.hello.v1.NoSuchService")
	if _, err := manifestcheck.Check(m); err == nil || !strings.Contains(err.Error(), "svc.hello.v1.NoSuchService") {
		t.Fatalf("Check = %v, want the unknown service named", err)
	}
}

func TestANodeBoundTwiceIsRefusedNamingTheNode(t *testing.T) {
	t.Parallel()
	one, err := manifestcheck.Check(helloManifest(t, func(ms map[string]*descriptorpb.MethodDescriptorProto) {
		graph(ms["Wave"], &pluginv1.GraphRoute{Get: "hello/{name}"}) // SayHello binds it too
	}))
	if err != nil {
		t.Fatal(err)
	}
	err = manifestcheck.Together([]*manifestcheck.Plugin{one})
	if err == nil || !strings.Contains(err.Error(), "graph node GET hello/{name} is bound by both") {
		t.Fatalf("Together = %v, want the node named", err)
	}
}

func TestAServiceServedByTwoPluginsIsRefused(t *testing.T) {
	t.Parallel()
	a, _ := manifestcheck.Check(helloManifest(t, nil))
	b, _ := manifestcheck.Check(helloManifest(t, nil))
	a.Name, b.Name = "hello", "hello-copy"
	err := manifestcheck.Together([]*manifestcheck.Plugin{a, b})
	if err == nil || !strings.Contains(err.Error(), "service svc.hello.v1.HelloService is served by both hello and hello-copy") {
		t.Fatalf("Together = %v", err)
	}
}
