package main

import (
	"testing"

	adsv1 "github.com/svcplatform/svc/gen/svc/ads/v1"
	"github.com/svcplatform/svc/plugins/internal/leavetest"
	"github.com/svcplatform/svc/sdk/plugintest"
)

// A person who leaves takes the leads they submitted with them; another
// person's lead stays.
func TestAPersonWhoLeftHasNoLeadsLeft(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	form := b.form(t, b.account(t))
	answers := []*adsv1.LeadField{
		{Name: "roast", Values: []string{"dark"}}, {Name: "full_name", Values: []string{"Ada Lovelace"}}, {Name: "email", Values: []string{"ada@example.com"}},
	}
	for _, who := range []string{consumer, owner} {
		must[*adsv1.CreatedResponse](t, b, procSubmitLead, session(who), &adsv1.SubmitLeadRequest{LeadgenFormId: form, FieldData: answers})
	}
	leavetest.Leave(t, b.tp, consumer)
	leavetest.Leave(t, b.tp, consumer)
	for q, want := range map[string]int{
		`SELECT count(*) FROM ads.leads WHERE user_id = '` + consumer + `'`: 0,
		`SELECT count(*) FROM ads.leads`:                                    1,
	} {
		if got := plugintest.Count(t, b.pool, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
}

// A person who leaves is taken out of custom audiences, and their clicks
// and conversions stay as counts that name no one.
func TestAPersonWhoLeftIsInNoAudienceAndNamedByNoClick(t *testing.T) {
	t.Parallel()
	b, clk := setupClocked(t, 0)
	acct := b.account(t)
	aud := must[*adsv1.CreatedResponse](t, b, procCreateAudience, user(owner), &adsv1.CreateCustomAudienceRequest{AdAccountId: acct, Name: "All"}).GetId()
	must[*adsv1.AddCustomAudienceUsersResponse](t, b, procAddAudienceUsers, user(owner), &adsv1.AddCustomAudienceUsersRequest{
		AudienceId: aud, Schema: "USER_ID", Data: []string{consumer, owner}})
	a := b.ad(t, b.campaign(t, acct, "ACTIVE", 10_000), "beans", aud)
	must[*adsv1.SuccessResponse](t, b, procClick, session(consumer), &adsv1.ClickAdRequest{AdId: a})
	must[*adsv1.SendConversionEventsResponse](t, b, procEvents, user(owner), &adsv1.SendConversionEventsRequest{AdAccountId: acct,
		Data: []*adsv1.ServerEvent{event("e1", consumer, clk.now())}})
	leavetest.Leave(t, b.tp, consumer)
	leavetest.Leave(t, b.tp, consumer)
	for q, want := range map[string]int{
		`SELECT count(*) FROM ads.audience_members`:                        1,
		`SELECT count(*) FROM ads.ad_clicks WHERE user_hash IS NOT NULL`:   0,
		`SELECT count(*) FROM ads.conversions WHERE user_hash IS NOT NULL`: 0,
		`SELECT count(*) FROM ads.ad_clicks`:                               1,
		`SELECT count(*) FROM ads.conversions WHERE ad_id IS NOT NULL`:     1,
	} {
		if got := plugintest.Count(t, b.pool, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
	if got := must[*adsv1.CustomAudience](t, b, procGetAudience, user(owner), &adsv1.GetCustomAudienceRequest{AudienceId: aud}); got.GetApproximateCount() != 1 {
		t.Fatalf("approximate_count after leaving = %d", got.GetApproximateCount())
	}
	if got := b.serve(t, consumer); got != "" {
		t.Fatalf("a person who left is served %s", got)
	}
}
