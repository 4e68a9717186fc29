package identity_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/identity"
	"github.com/svcplatform/svc/gateway/internal/identity/identitytest"
)

// The verification state machine (identity.NextVerificationStatus), row
// by row: every status with every event, named after the rule it checks.
func TestVerificationTransitionRules(t *testing.T) {
	t.Parallel()
	const refused identity.VerificationStatus = ""
	request, approve, reject := identity.RequestVerification, identity.ApproveVerification, identity.RejectVerification
	for _, tc := range []struct {
		rule  string
		from  identity.VerificationStatus
		event identity.VerificationEvent
		to    identity.VerificationStatus
	}{
		{"an unverified business asks and becomes pending", identity.Unverified, request, identity.Pending},
		{"staff approve only a pending business: not an unverified one", identity.Unverified, approve, refused},
		{"staff reject only a pending business: not an unverified one", identity.Unverified, reject, refused},
		{"a pending business cannot ask again", identity.Pending, request, refused},
		{"staff approve a pending business: verified", identity.Pending, approve, identity.Verified},
		{"staff reject a pending business: rejected", identity.Pending, reject, identity.Rejected},
		{"a rejected business asks again with new documents", identity.Rejected, request, identity.Pending},
		{"a rejected business is not approved without asking again", identity.Rejected, approve, refused},
		{"a rejected business is not rejected twice", identity.Rejected, reject, refused},
		{"a verified business stays verified: no new request", identity.Verified, request, refused},
		{"a verified business is not approved again", identity.Verified, approve, refused},
		{"a verified business is not rejected afterwards", identity.Verified, reject, refused},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			to, ok := identity.NextVerificationStatus(tc.from, tc.event)
			if ok != (tc.to != refused) || to != tc.to {
				t.Fatalf("%s on %s = %q, %v; want %q", tc.event, tc.from, to, ok, tc.to)
			}
		})
	}
}

func someDocuments() []identity.VerificationDocument {
	return []identity.VerificationDocument{{Kind: "business_registration", SHA256: strings.Repeat("ab", 32)}}
}

func TestAnAssetBelongsToAtMostOneBusiness(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	mine, err := w.IDs.Businesses.Create(ctx, w.Owner.ID, "Owner Co.")
	if err != nil {
		t.Fatal(err)
	}
	other, err := w.IDs.Businesses.Create(ctx, w.PageAdmin.ID, "Admin Co.")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.IDs.Businesses.AddAsset(ctx, mine.ID, w.Owner.ID, "PAGE", w.Page.ID, false); err != nil {
		t.Fatal(err)
	}
	// The Page's admin manages it too, but it is in a business already.
	if err := w.IDs.Businesses.AddAsset(ctx, other.ID, w.PageAdmin.ID, "PAGE", w.Page.ID, false); !errors.Is(err, identity.ErrAssetTaken) {
		t.Errorf("the Page into a second business: %v, want ErrAssetTaken", err)
	}
	if err := w.IDs.Businesses.AddAsset(ctx, mine.ID, w.Owner.ID, "PAGE", w.Page.ID, false); !errors.Is(err, identity.ErrAssetTaken) {
		t.Errorf("the Page into the same business again: %v, want ErrAssetTaken", err)
	}
	held, err := w.IDs.Businesses.BusinessesOf(ctx, "PAGE", []string{w.Page.ID, w.OtherPage.ID})
	if err != nil || len(held) != 1 || held[w.Page.ID] != mine.ID {
		t.Errorf("businesses of the Pages = %v, %v", held, err)
	}
}

func TestOnlyWhoManagesAnAssetAddsItToABusiness(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	biz, err := w.IDs.Businesses.Create(ctx, w.PageEditor.ID, "Editor Co.")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rule, typ, id string
		adAccountHeld bool
	}{
		{"a Page's editor does not manage it", "PAGE", w.Page.ID, false},
		{"someone else's Page", "PAGE", w.OtherPage.ID, false},
		{"a Page that does not exist", "PAGE", "999999999", false},
		{"an app whose team the user is not on", "APP", w.App.ID, false},
		{"an ad account the ads plugin does not list for the user", "AD_ACCOUNT", "42", false},
	} {
		err := w.IDs.Businesses.AddAsset(ctx, biz.ID, w.PageEditor.ID, tc.typ, tc.id, tc.adAccountHeld)
		if !errors.Is(err, identity.ErrNotAssetAdmin) {
			t.Errorf("%s: %v, want ErrNotAssetAdmin", tc.rule, err)
		}
	}
	if err := w.IDs.Businesses.AddAsset(ctx, biz.ID, w.PageEditor.ID, "AD_ACCOUNT", "42", true); err != nil {
		t.Errorf("an ad account the user holds: %v", err)
	}
}

func TestTheLastAdminOfABusinessStays(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	biz, err := w.IDs.Businesses.Create(ctx, w.Owner.ID, "Owner Co.")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.IDs.Businesses.SetRole(ctx, biz.ID, w.Owner.ID, identity.BusinessEmployee); !errors.Is(err, identity.ErrLastAdmin) {
		t.Errorf("the last admin becomes an employee: %v, want ErrLastAdmin", err)
	}
	if err := w.IDs.Businesses.SetRole(ctx, biz.ID, w.PageAdmin.ID, identity.BusinessAdmin); err != nil {
		t.Fatal(err)
	}
	if err := w.IDs.Businesses.SetRole(ctx, biz.ID, w.Owner.ID, identity.BusinessEmployee); err != nil {
		t.Errorf("an admin steps down while another stays: %v", err)
	}
	if r, _ := w.IDs.Businesses.Role(ctx, biz.ID, w.Owner.ID); r != identity.BusinessEmployee {
		t.Errorf("role = %q", r)
	}
}

func TestVerificationIsDecidedOnceAndKeepsTheReason(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	biz, err := w.IDs.Businesses.Create(ctx, w.Owner.ID, "Owner Co.")
	if err != nil {
		t.Fatal(err)
	}
	req := identity.VerificationRequest{LegalName: "Owner Coffee SAS", Country: "FR", Documents: someDocuments()}
	bad := req
	bad.Documents = []identity.VerificationDocument{{Kind: "utility_bill", SHA256: "not-a-hash"}}
	if _, err := w.IDs.Businesses.RequestVerification(ctx, biz.ID, w.Owner.ID, bad); !errors.Is(err, identity.ErrInvalid) {
		t.Errorf("a document without its SHA-256: %v", err)
	}
	if _, err := w.IDs.Businesses.DecideVerification(ctx, w.Staff.ID, biz.ID, identity.ApproveVerification, ""); !errors.Is(err, identity.ErrVerificationState) {
		t.Errorf("approving a business that never asked: %v", err)
	}
	b, err := w.IDs.Businesses.RequestVerification(ctx, biz.ID, w.Owner.ID, req)
	if err != nil || b.VerificationStatus != identity.Pending {
		t.Fatalf("request: %+v, %v", b, err)
	}
	if _, err := w.IDs.Businesses.RequestVerification(ctx, biz.ID, w.Owner.ID, req); !errors.Is(err, identity.ErrVerificationState) {
		t.Errorf("asking twice: %v", err)
	}
	q, err := w.IDs.Businesses.VerificationQueue(ctx, 10)
	if err != nil || len(q) != 1 || q[0].BusinessID != biz.ID || q[0].LegalName != req.LegalName || len(q[0].Documents) != 1 ||
		q[0].Documents[0] != req.Documents[0] {
		t.Fatalf("queue = %+v, %v", q, err)
	}
	b, err = w.IDs.Businesses.DecideVerification(ctx, w.Staff.ID, biz.ID, identity.RejectVerification, "The registration is expired.")
	if err != nil || b.VerificationStatus != identity.Rejected {
		t.Fatalf("reject: %+v, %v", b, err)
	}
	if _, err := w.IDs.Businesses.DecideVerification(ctx, w.Staff.ID, biz.ID, identity.ApproveVerification, ""); !errors.Is(err, identity.ErrVerificationState) {
		t.Errorf("deciding twice: %v", err)
	}
	if got, _ := w.IDs.Businesses.Get(ctx, biz.ID); got.VerificationStatus != identity.Rejected || got.VerificationReason != "The registration is expired." {
		t.Errorf("business = %+v", got)
	}
	if q, _ := w.IDs.Businesses.VerificationQueue(ctx, 10); len(q) != 0 {
		t.Errorf("queue after the decision = %+v", q)
	}
	// Asked again, approved: the app in it may then ask for the gated scopes.
	if err := w.IDs.Businesses.AddAsset(ctx, biz.ID, w.Owner.ID, "APP", w.App.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.IDs.Businesses.RequestVerification(ctx, biz.ID, w.Owner.ID, req); err != nil {
		t.Fatal(err)
	}
	if ok, _ := w.IDs.Businesses.AppVerified(ctx, w.App.ID); ok {
		t.Error("the app's business is verified while pending")
	}
	if _, err := w.IDs.Businesses.DecideVerification(ctx, w.Staff.ID, biz.ID, identity.ApproveVerification, ""); err != nil {
		t.Fatal(err)
	}
	if ok, err := w.IDs.Businesses.AppVerified(ctx, w.App.ID); !ok || err != nil {
		t.Errorf("the app's business is not verified once approved: %v", err)
	}
}

// A person who leaves the platform (CONTRACT §16) does not take their
// businesses along: where they were the only admin, the employee of
// longest standing becomes admin; where another admin stays, nobody is
// promoted; a business with no one else stays, with no people.
func TestABusinessOutlivesItsOnlyAdminAndItsOldestEmployeeBecomesAdmin(t *testing.T) {
	t.Parallel()
	w := identitytest.NewWorld(t)
	ctx := context.Background()
	b := w.IDs.Businesses
	newBusiness := func(name string, people ...any) string {
		t.Helper()
		biz, err := b.Create(ctx, w.Owner.ID, name)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(people); i += 2 {
			if err := b.SetRole(ctx, biz.ID, people[i].(string), people[i+1].(identity.BusinessRole)); err != nil {
				t.Fatal(err)
			}
		}
		return biz.ID
	}
	alone := newBusiness("Alone Co.", w.PageAdmin.ID, identity.BusinessEmployee, w.Consumer.ID, identity.BusinessEmployee)
	shared := newBusiness("Shared Co.", w.Stranger.ID, identity.BusinessAdmin, w.Consumer.ID, identity.BusinessEmployee)
	empty := newBusiness("Empty Co.")
	if _, err := w.IDs.Users.Leave(ctx, w.Owner.ID, nil); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		business, user string
		role           identity.BusinessRole
	}{
		{alone, w.PageAdmin.ID, identity.BusinessAdmin},
		{alone, w.Consumer.ID, identity.BusinessEmployee},
		{shared, w.Stranger.ID, identity.BusinessAdmin},
		{shared, w.Consumer.ID, identity.BusinessEmployee},
	}
	for _, c := range want {
		if r, err := b.Role(ctx, c.business, c.user); err != nil || r != c.role {
			t.Errorf("business %s: user %s is %q (%v), want %q", c.business, c.user, r, err, c.role)
		}
	}
	if _, err := b.Get(ctx, empty); err != nil {
		t.Errorf("the business its only person left is gone: %v", err)
	}
	if people, err := b.People(ctx, empty); err != nil || len(people) != 0 {
		t.Errorf("people of the emptied business: %v %v", people, err)
	}
}
