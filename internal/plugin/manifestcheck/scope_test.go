package manifestcheck_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
)

// scopedHello is the example plugin's manifest with scopes declared on its
// service and SayHello needing needs.
func scopedHello(t *testing.T, needs string, scopes ...*pluginv1.Scope) *pluginv1.Manifest {
	m := helloManifest(t, func(ms map[string]*descriptorpb.MethodDescriptorProto) {
		if needs != "" {
			access(ms["SayHello"], &pluginv1.Access{Scopes: []string{needs}})
		}
	})
	for _, f := range m.GetFiles().GetFile() {
		if f.GetPackage() == "svc.hello.v1" {
			sd := f.GetService()[0]
			if sd.Options == nil {
				sd.Options = &descriptorpb.ServiceOptions{}
			}
			proto.SetExtension(sd.Options, pluginv1.E_Scopes, scopes)
		}
	}
	return m
}

func TestAPluginDeclaresItsScopesAndItsAccessRulesNameThem(t *testing.T) {
	t.Parallel()
	wave := &pluginv1.Scope{Name: "hello:wave", Description: "Wave for you", Review: pluginv1.ReviewTier_REVIEW_TIER_BASIC}
	p, err := manifestcheck.Check(scopedHello(t, "hello:wave", wave))
	if err != nil {
		t.Fatal(err)
	}
	want := manifestcheck.Scope{Name: "hello:wave", Description: "Wave for you", Review: pluginv1.ReviewTier_REVIEW_TIER_BASIC}
	if len(p.Scopes) != 1 || p.Scopes[0] != want {
		t.Fatalf("scopes = %+v", p.Scopes)
	}
	if err := manifestcheck.Together([]*manifestcheck.Plugin{p}); err != nil {
		t.Fatal(err)
	}
	// A core scope needs no declaration.
	core, _ := manifestcheck.Check(scopedHello(t, "pages:read"))
	if err := manifestcheck.Together([]*manifestcheck.Plugin{core}); err != nil {
		t.Fatal(err)
	}
}

func TestAScopeNoOneDeclaresIsRefusedInAnAccessRule(t *testing.T) {
	t.Parallel()
	p, err := manifestcheck.Check(scopedHello(t, "hello:wave"))
	if err != nil {
		t.Fatal(err)
	}
	err = manifestcheck.Together([]*manifestcheck.Plugin{p})
	if err == nil || !strings.Contains(err.Error(), `access names scope "hello:wave", which is no core scope and no plugin declares`) {
		t.Fatalf("Together = %v", err)
	}
}

func TestABadScopeDeclarationIsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		scope *pluginv1.Scope
		want  string
	}{
		{&pluginv1.Scope{Name: "Hello:Wave", Description: "x", Review: pluginv1.ReviewTier_REVIEW_TIER_BASIC}, "lowercase letters"},
		{&pluginv1.Scope{Name: "a:b:c", Description: "x", Review: pluginv1.ReviewTier_REVIEW_TIER_BASIC}, "at most one colon"},
		{&pluginv1.Scope{Name: "pages:read", Description: "x", Review: pluginv1.ReviewTier_REVIEW_TIER_BASIC}, "the gateway's own"},
		{&pluginv1.Scope{Name: "hello:wave", Review: pluginv1.ReviewTier_REVIEW_TIER_BASIC}, "a description of 1 to"},
		{&pluginv1.Scope{Name: "hello:wave", Description: "x"}, "REVIEW_TIER_BASIC or REVIEW_TIER_ADVANCED"},
	} {
		if _, err := manifestcheck.Check(scopedHello(t, "", c.scope)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: Check = %v, want %q", c.scope, err, c.want)
		}
	}
	twice := &pluginv1.Scope{Name: "hello:wave", Description: "x", Review: pluginv1.ReviewTier_REVIEW_TIER_BASIC}
	if _, err := manifestcheck.Check(scopedHello(t, "", twice, twice)); err == nil || !strings.Contains(err.Error(), "declared twice") {
		t.Errorf("a scope declared twice: %v", err)
	}
}

func TestAScopeDeclaredByTwoPluginsIsRefused(t *testing.T) {
	t.Parallel()
	wave := &pluginv1.Scope{Name: "hello:wave", Description: "Wave for you", Review: pluginv1.ReviewTier_REVIEW_TIER_BASIC}
	a, _ := manifestcheck.Check(scopedHello(t, "", wave))
	b, _ := manifestcheck.Check(scopedHello(t, "", wave))
	a.Name, b.Name = "hello", "hello-copy"
	b.Services, b.Methods = nil, nil // only the scope is shared
	err := manifestcheck.Together([]*manifestcheck.Plugin{a, b})
	if err == nil || !strings.Contains(err.Error(), "scope hello:wave is declared by both hello and hello-copy") {
		t.Fatalf("Together = %v", err)
	}
}
