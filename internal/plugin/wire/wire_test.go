package wire_test

import (
	"net/http"
	"slices"
	"testing"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/wire"
	"github.com/svcplatform/svc/sdk"
)

func TestErrorWireFormRoundTrips(t *testing.T) {
	t.Parallel()
	for _, e := range []*sdk.Error{
		sdk.Invalid("name", "name is too long"),
		sdk.NotFound("Post 1"),
		sdk.Unavailable("The book database"),
		sdk.Errorf(http.StatusConflict, 10, 2018300, "not holding control"),
	} {
		got := wire.ErrorFromProto(wire.ErrorToProto(e))
		if got.HTTPStatus != e.HTTPStatus || got.Code != e.Code || got.Subcode != e.Subcode || got.Type != e.Type ||
			got.Transient != e.Transient || got.Field != e.Field || got.Message != e.Message {
			t.Errorf("round trip of %v = %v", e, got)
		}
	}
}

// The SDK's token kinds are the proto's, number for number: the access
// rules of a proto file name them, the handler compares them.
func TestTokenKindsNumberAsTheProtoEnum(t *testing.T) {
	t.Parallel()
	for kind, want := range map[sdk.TokenKind]pluginv1.TokenKind{
		sdk.TokenKindNone: pluginv1.TokenKind_TOKEN_KIND_UNSPECIFIED, sdk.TokenKindUser: pluginv1.TokenKind_TOKEN_KIND_USER,
		sdk.TokenKindSystemUser: pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER, sdk.TokenKindAppKey: pluginv1.TokenKind_TOKEN_KIND_APP_KEY,
		sdk.TokenKindSession: pluginv1.TokenKind_TOKEN_KIND_SESSION, sdk.TokenKindAdmin: pluginv1.TokenKind_TOKEN_KIND_ADMIN,
		sdk.TokenKindPlugin: pluginv1.TokenKind_TOKEN_KIND_PLUGIN,
	} {
		if got := wire.PrincipalToProto(sdk.Principal{Kind: kind}).GetTokenKind(); got != want {
			t.Errorf("kind %d goes on the wire as %v, want %v", kind, got, want)
		}
		if got := wire.PrincipalFromProto(&pluginv1.Principal{TokenKind: want}).Kind; got != kind {
			t.Errorf("%v comes off the wire as %d, want %d", want, got, kind)
		}
	}
	if n := len(pluginv1.TokenKind_name); n != 7 {
		t.Errorf("the proto has %d token kinds; give the SDK a constant for each", n)
	}
	for role, want := range map[sdk.PageRole]pluginv1.PageRole{
		sdk.PageRoleNone: pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED, sdk.PageRoleLinked: pluginv1.PageRole_PAGE_ROLE_LINKED,
		sdk.PageRoleAdmin: pluginv1.PageRole_PAGE_ROLE_ADMIN, sdk.PageRoleOwner: pluginv1.PageRole_PAGE_ROLE_OWNER,
		sdk.PageRoleEditor: pluginv1.PageRole_PAGE_ROLE_EDITOR,
	} {
		if int32(role) != int32(want) {
			t.Errorf("page role %d is %v (%d) on the wire", role, want, int32(want))
		}
	}
}

func TestPrincipalWireFormRoundTrips(t *testing.T) {
	t.Parallel()
	p := sdk.Principal{Kind: sdk.TokenKindUser, UserID: "1", AppID: "2", Scopes: []string{"a", "b"}, Live: true, Staff: true, Plugin: "svcchat"}
	got := wire.PrincipalFromProto(wire.PrincipalToProto(p))
	if got.Kind != p.Kind || got.UserID != p.UserID || got.AppID != p.AppID || !slices.Equal(got.Scopes, p.Scopes) ||
		got.Live != p.Live || got.Staff != p.Staff || got.Plugin != p.Plugin {
		t.Errorf("round trip of %+v = %+v", p, got)
	}
	if anon := wire.PrincipalFromProto(nil); anon.Kind != sdk.TokenKindNone || anon.UserID != "" {
		t.Errorf("nil principal = %+v, want the anonymous caller", anon)
	}
}
