package host

import (
	"context"
	"testing"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
)

// principalRecorder remembers the principal of the last Host call it got.
type principalRecorder struct {
	protocol.UnimplementedHost
	got *pluginv1.Principal
}

func (r *principalRecorder) Call(_ context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	r.got = req.GetPrincipal()
	return &pluginv1.InvokeResponse{}, nil
}

// TestAPluginActsOnlyAsTheCallerOfACallItServesOrAsItself checks the rule
// of plugin → Host calls row by row: the principal a plugin writes is
// never read.
func TestAPluginActsOnlyAsTheCallerOfACallItServesOrAsItself(t *testing.T) {
	t.Parallel()
	var d delegations
	user := &pluginv1.Principal{TokenKind: pluginv1.TokenKind_TOKEN_KIND_USER, UserId: "7", AppId: "9", Scopes: []string{"svcchat:send"}}
	served := &pluginv1.InvokeRequest{Principal: user}
	handle := d.open("svcchat", served)
	otherCall := &pluginv1.InvokeRequest{Principal: &pluginv1.Principal{TokenKind: pluginv1.TokenKind_TOKEN_KIND_APP_KEY, AppId: "1"}}
	defer d.close(d.open("book", otherCall))
	admin := &pluginv1.Principal{TokenKind: pluginv1.TokenKind_TOKEN_KIND_ADMIN}
	itself := func(name string) *pluginv1.Principal {
		return &pluginv1.Principal{TokenKind: pluginv1.TokenKind_TOKEN_KIND_PLUGIN, Plugin: name}
	}
	rec := &principalRecorder{}
	h := callerHost{name: "svcchat", next: rec, d: &d}
	for _, tc := range []struct {
		name string
		req  *pluginv1.InvokeRequest
		want *pluginv1.Principal
	}{
		{"with the handle of the call it serves, as that call's caller", &pluginv1.InvokeRequest{Delegation: served.GetDelegation()}, user},
		{"a principal it writes itself is ignored", &pluginv1.InvokeRequest{Delegation: served.GetDelegation(), Principal: admin}, user},
		{"with no handle, as itself, whatever principal it writes", &pluginv1.InvokeRequest{Principal: admin}, itself("svcchat")},
		{"with another plugin's handle, as itself", &pluginv1.InvokeRequest{Delegation: otherCall.GetDelegation(), Principal: admin}, itself("svcchat")},
		{"with a made-up handle, as itself", &pluginv1.InvokeRequest{Delegation: "zz9"}, itself("svcchat")},
		{"with its handle spelt otherwise, as itself", &pluginv1.InvokeRequest{Delegation: "0" + served.GetDelegation()}, itself("svcchat")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := h.Call(context.Background(), tc.req); err != nil {
				t.Fatal(err)
			}
			g := rec.got
			if g.GetTokenKind() != tc.want.GetTokenKind() || g.GetUserId() != tc.want.GetUserId() || g.GetPlugin() != tc.want.GetPlugin() {
				t.Fatalf("acted as %v, want %v", g, tc.want)
			}
		})
	}
	d.close(handle)
	t.Run("after the call ended, its handle acts as the plugin itself", func(t *testing.T) {
		if _, err := h.Call(context.Background(), &pluginv1.InvokeRequest{Delegation: served.GetDelegation()}); err != nil {
			t.Fatal(err)
		}
		if rec.got.GetTokenKind() != pluginv1.TokenKind_TOKEN_KIND_PLUGIN {
			t.Fatalf("acted as %v after the call ended", rec.got)
		}
	})
}
