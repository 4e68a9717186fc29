package identity_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
)

func TestADeclaredScopeIsKnownToEveryGatewayAndKeepsItsOwner(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	wave := identity.Scope{Name: "hello:wave", Description: "Wave for you", Tier: identity.TierBasic}
	if err := w.IDs.DeclareScopes(ctx, "hello", []identity.Scope{wave}); err != nil {
		t.Fatal(err)
	}
	// Another gateway of the installation: its own Service on the database.
	other := identity.New(w.Pool)
	catalog, err := other.Scopes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !catalog.Known("hello:wave") || !catalog.Basic("hello:wave") || catalog.Description("hello:wave") != "Wave for you" ||
		!catalog.Known("svcchat:send") || catalog.Basic("svcchat:send") || !catalog.Protocol("openid") {
		t.Fatalf("catalog = %v", catalog.All())
	}
	if all := catalog.All(); !slices.Equal(all[:4], identity.CoreScopes()) {
		t.Fatalf("the core's scopes come first: %v", all)
	}
	if _, err := catalog.Parse("openid hello:wave nope:x"); !errors.Is(err, identity.ErrInvalid) {
		t.Fatalf("an unknown scope: %v", err)
	}
	// Another plugin cannot take it over.
	if err := other.DeclareScopes(ctx, "copycat", []identity.Scope{{Name: "hello:wave", Description: "Mine", Tier: identity.TierAdvanced}}); !errors.Is(err, identity.ErrInvalid) {
		t.Fatalf("a second owner: %v", err)
	}
	if c, _ := identity.New(w.Pool).Scopes(ctx); c.Description("hello:wave") != "Wave for you" {
		t.Fatalf("the first owner's description changed: %q", c.Description("hello:wave"))
	}
}
