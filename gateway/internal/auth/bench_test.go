package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/svcplatform/svc/gateway/internal/auth"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// BenchmarkAuthenticate measures resolving one request's bearer token:
// "cached" is the common case (the same token within the cache bound),
// "uncached" is the one indexed query every request would cost without the
// cache.
//
//	go test -run '^$' -bench Authenticate ./gateway/internal/auth/
func BenchmarkAuthenticate(b *testing.B) {
	for _, tc := range []struct {
		name string
		ttl  time.Duration
	}{{"cached", 0}, {"uncached", -1}} {
		b.Run(tc.name, func(b *testing.B) {
			bb := setup(b)
			authn := auth.New(bb.IDs, auth.Options{CacheTTL: tc.ttl})
			tok := bb.issue(b, pluginv1.TokenKind_TOKEN_KIND_USER, bb.Consumer.ID, bb.App.ID, []string{"pages:read"}, time.Hour)
			r := bearerRequest(tok)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := authn.Authenticate(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAuthorizePageRole measures Authorize for a method that needs a
// Page role and a product (one query for the Page's facts).
func BenchmarkAuthorizePageRole(b *testing.B) {
	bb := setup(b)
	ctx := context.Background()
	p, err := bb.authn.AuthenticateToken(ctx, bb.issue(b, pluginv1.TokenKind_TOKEN_KIND_SYSTEM_USER, "", bb.App.ID, []string{"svcchat:send"}, time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	access := &pluginv1.Access{Scopes: []string{"svcchat:send"}, PageRole: pluginv1.PageRole_PAGE_ROLE_LINKED, Product: "svcchat"}
	b.ReportAllocs()
	for b.Loop() {
		if err := bb.authn.Authorize(ctx, p, access, auth.Target{PageID: bb.Page.ID}); err != nil {
			b.Fatal(err)
		}
	}
}
