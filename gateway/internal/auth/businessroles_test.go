package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
	corev1 "github.com/svcplatform/svc/gen/svc/core/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// What each role on a business may do (CONTRACT §17; roles as Meta
// Business Manager's), row by row, on the access rules the business nodes
// declare: admins manage, employees read, anyone else is refused 2069003,
// and a business that does not exist reads as one.
func TestEachBusinessRoleMayDoWhatItsRuleSays(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	biz, err := b.IDs.Businesses.Create(ctx, b.Owner.ID, "Owner Co.")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.IDs.Businesses.SetRole(ctx, biz.ID, b.PageEditor.ID, identity.BusinessEmployee); err != nil {
		t.Fatal(err)
	}
	sess := func(u identitytest.Person) *auth.Principal {
		s, err := b.IDs.Sessions.CreateSession(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		p, err := b.authn.AuthenticateToken(ctx, s.Token)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	token := func(u identitytest.Person, scopes ...string) *auth.Principal {
		p, err := b.authn.AuthenticateToken(ctx, b.issue(t, pluginv1.TokenKind_TOKEN_KIND_USER, u.ID, b.App.ID, scopes, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	key, err := b.IDs.Apps.CreateAppKey(ctx, b.App.ID)
	if err != nil {
		t.Fatal(err)
	}
	appKey, err := b.authn.AuthenticateToken(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	core := corev1.File_svc_core_v1_graph_proto
	get := declared(t, core, "GraphService", "GetBusiness")
	assets := declared(t, core, "GraphService", "ListBusinessAssets")
	addAsset := declared(t, core, "GraphService", "AddBusinessAsset")
	setRole := declared(t, core, "GraphService", "SetBusinessRole")
	verify := declared(t, core, "GraphService", "RequestBusinessVerification")

	owner, employee, stranger := b.Owner, b.PageEditor, b.Consumer
	type want struct{ status, code, subcode int }
	ok, notMember, userOnly, missing := want{}, want{403, 200, 2069003}, want{403, 200, 2069001}, want{404, 100, 33}
	for _, tc := range []struct {
		rule     string
		p        *auth.Principal
		access   *pluginv1.Access
		business string
		want     want
	}{
		{"an admin reads the business", token(owner, "pages:read"), get, biz.ID, ok},
		{"an employee reads the business", token(employee, "pages:read"), get, biz.ID, ok},
		{"an employee lists its assets", sess(employee), assets, biz.ID, ok},
		{"someone without a role does not read the business", token(stranger, "pages:read"), get, biz.ID, notMember},
		{"someone without a role does not list its assets", sess(stranger), assets, biz.ID, notMember},
		{"an admin adds assets", sess(owner), addAsset, biz.ID, ok},
		{"an employee adds no asset", sess(employee), addAsset, biz.ID, notMember},
		{"someone without a role adds no asset", sess(stranger), addAsset, biz.ID, notMember},
		{"an admin gives roles", sess(owner), setRole, biz.ID, ok},
		{"an employee gives no role", sess(employee), setRole, biz.ID, notMember},
		{"an admin asks for verification", sess(owner), verify, biz.ID, ok},
		{"an employee does not ask for verification", sess(employee), verify, biz.ID, notMember},
		{"an app key acts for no person on a business", appKey, get, biz.ID, userOnly},
		{"a business that does not exist is not found", token(owner, "pages:read"), get, "999999999", missing},
		{"an id of no form is not found either", sess(owner), addAsset, "bp_" + owner.ID, missing},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			err := b.authn.Authorize(ctx, tc.p, tc.access, auth.Target{BusinessID: tc.business})
			if tc.want == ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantAPIError(t, err, tc.want.status, tc.want.code, tc.want.subcode)
		})
	}
}
