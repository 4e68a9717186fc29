package oauth_test

import (
	"context"
	"net/url"
	"slices"
	"testing"

	"golang.org/x/oauth2"

	"github.com/svcplatform/svc/gateway/internal/auth"
	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/internal/oauthtest"
)

// The consent page lists the person's Pages as checkboxes named page_id,
// all checked, whenever a Page scope is asked (CONTRACT §17); the token
// acts on the Pages left checked; asking again (auth_type=rerequest)
// shows the current choice, and a new choice there is every token's.
func TestTheConsentPageAsksWhichPagesAndTheTokenCarriesTheChoice(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	second, err := b.IDs.Pages.CreatePage(ctx, identity.NewPage{Name: "Second Shop", Category: "Shop", OwnerID: b.Owner.ID})
	if err != nil {
		t.Fatal(err)
	}
	cfg := b.config("pages:read")
	br := b.browser(t)
	v := oauth2.GenerateVerifier()
	principal := func(token string) *auth.Principal {
		t.Helper()
		p, err := b.authn.AuthenticateToken(ctx, token)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	redeem := func(cb *url.URL) string {
		t.Helper()
		tok, err := cfg.Exchange(ctx, cb.Query().Get("code"), oauth2.VerifierOption(v))
		if err != nil {
			t.Fatalf("exchange %s: %v", cb, err)
		}
		return tok.AccessToken
	}
	exchange := func(cb *url.URL) *auth.Principal { t.Helper(); return principal(redeem(cb)) }
	consentPage := func(opts ...oauth2.AuthCodeOption) oauthtest.Page {
		t.Helper()
		p := br.Get(cfg.AuthCodeURL("s", append(opts, oauth2.S256ChallengeOption(v))...))
		if p.Location != nil || len(p.Forms) != 1 {
			t.Fatalf("want the consent page: %d %s", p.Status, p.Location)
		}
		return p
	}

	// Signed in, the first consent page checks every Page of the owner's.
	p := br.Get(cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(v)))
	p = br.Submit(p, p.Forms[0], url.Values{"username": {b.Owner.Username}, "password": {b.Owner.Password}}, "")
	if p.Location != nil || len(p.Forms) != 1 {
		t.Fatalf("want the consent page: %d %s", p.Status, p.Location)
	}
	if got := p.Forms[0].Fields["page_id"]; !slices.Equal(got, []string{b.Page.ID, second.ID}) {
		t.Fatalf("checked page_id = %v, want both of the owner's Pages", got)
	}
	// The owner keeps only the first; a Page of someone else's sent with
	// it is dropped.
	next := br.Submit(p, p.Forms[0], url.Values{"page_id": {b.Page.ID, b.OtherPage.ID}}, "allow")
	if got := exchange(next.Location).Pages; got == nil || !slices.Equal(got.IDs, []string{b.Page.ID}) {
		t.Fatalf("token's Pages = %+v, want only %s", got, b.Page.ID)
	}

	// Remembered consent: no page, the choice stands.
	again := br.Get(cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(v)))
	if again.Location == nil {
		t.Fatalf("a remembered consent showed a page: %d", again.Status)
	}
	if got := exchange(again.Location).Pages; got == nil || !slices.Equal(got.IDs, []string{b.Page.ID}) {
		t.Fatalf("after a remembered consent, Pages = %+v", got)
	}

	// auth_type=rerequest asks again, checked as chosen; the owner now
	// chooses the second Page, and an earlier token follows.
	earlier := redeem(br.Get(cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(v))).Location)
	p = consentPage(oauth2.SetAuthURLParam("auth_type", "rerequest"))
	if got := p.Forms[0].Fields["page_id"]; !slices.Equal(got, []string{b.Page.ID}) {
		t.Fatalf("asked again, checked page_id = %v, want the current choice", got)
	}
	next = br.Submit(p, p.Forms[0], url.Values{"page_id": {second.ID}}, "allow")
	if got := exchange(next.Location).Pages; got == nil || !slices.Equal(got.IDs, []string{second.ID}) {
		t.Fatalf("new choice: Pages = %+v", got)
	}
	if got := principal(earlier).Pages; got == nil || !slices.Equal(got.IDs, []string{second.ID}) {
		t.Fatalf("a token issued before the new choice: Pages = %+v", got)
	}

	// Every Page checked is no limit, Pages made later included.
	p = consentPage(oauth2.SetAuthURLParam("prompt", "consent"))
	next = br.Submit(p, p.Forms[0], url.Values{"page_id": {b.Page.ID, second.ID}}, "allow")
	if got := exchange(next.Location).Pages; got != nil {
		t.Fatalf("every Page chosen: Pages = %+v, want no limit", got)
	}
}

// A consent page without a Page scope asks for no Page and leaves the
// choice as it was.
func TestAConsentWithoutPageScopesLeavesThePageChoiceAlone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if _, err := b.IDs.Pages.CreatePage(ctx, identity.NewPage{Name: "Second Shop", Category: "Shop", OwnerID: b.Owner.ID}); err != nil {
		t.Fatal(err)
	}
	v := oauth2.GenerateVerifier()
	br := b.browser(t)
	cfg := b.config("pages:read")
	br.AuthorizeWith(cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(v)), b.Owner.Username, b.Owner.Password, "allow",
		url.Values{"page_id": {b.Page.ID}})
	plain := b.config("public_profile")
	p := br.Get(plain.AuthCodeURL("s", oauth2.S256ChallengeOption(v), oauth2.SetAuthURLParam("prompt", "consent")))
	if len(p.Forms) != 1 || p.Forms[0].Fields.Has("page_id") {
		t.Fatalf("a consent page without a Page scope: %d forms, fields %v", len(p.Forms), p.Forms)
	}
	next := br.Submit(p, p.Forms[0], nil, "allow")
	tok, err := plain.Exchange(ctx, next.Location.Query().Get("code"), oauth2.VerifierOption(v))
	if err != nil {
		t.Fatal(err)
	}
	pr, err := b.authn.AuthenticateToken(ctx, tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Pages == nil || !slices.Equal(pr.Pages.IDs, []string{b.Page.ID}) {
		t.Fatalf("Pages = %+v, want the earlier choice", pr.Pages)
	}
}
