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
