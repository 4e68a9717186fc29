package main

import (
	"fmt"
	"strings"
	"testing"

	adsv1 "github.com/svcplatform/svc/gen/svc/ads/v1"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func (b *bundle) account(t *testing.T) string {
	t.Helper()
	return must[*adsv1.CreatedResponse](t, b, procCreateAccount, user(owner), &adsv1.CreateAdAccountRequest{Name: "Spring sale"}).GetId()
}

func (b *bundle) form(t *testing.T, account string) string {
	t.Helper()
	return must[*adsv1.CreatedResponse](t, b, procCreateForm, user(owner), &adsv1.CreateLeadgenFormRequest{
		AdAccountId: account, Name: "Tasting sign-up", PrivacyPolicyUrl: "https://shop.example.com/privacy",
		Questions: []*adsv1.LeadgenQuestion{{Type: "FULL_NAME"}, {Type: "EMAIL"}, {Type: "CUSTOM", Key: "roast", Label: "Favourite roast?"}},
	}).GetId()
}

func TestAnAdAccountBelongsToItsUsersBusinessAndIsASandbox(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	id := b.account(t)
	got := must[*adsv1.AdAccount](t, b, procGetAccount, user(owner), &adsv1.GetAdAccountRequest{AdAccountId: id})
	if got.GetBusinessId() != "bp_"+owner || !got.GetIsSandbox() || got.GetCurrency() != "USD" || got.GetName() != "Spring sale" {
		t.Fatalf("account %v", got)
	}
	list := must[*adsv1.ListAdAccountsResponse](t, b, procListMine, user(owner), &adsv1.ListMyAdAccountsRequest{})
	if len(list.GetData()) != 1 || list.GetData()[0].GetId() != id {
		t.Fatalf("me/adaccounts %v", list)
	}
	t.Run("another user's ad account does not exist for the caller", func(t *testing.T) {
		_, err := call[*adsv1.AdAccount](t, b, procGetAccount, user(consumer), &adsv1.GetAdAccountRequest{AdAccountId: id})
		plugintest.WantRefusal(t, err, 404, 100, 33)
		if l := must[*adsv1.ListAdAccountsResponse](t, b, procListMine, user(consumer), &adsv1.ListMyAdAccountsRequest{}); len(l.GetData()) != 0 {
			t.Fatalf("the consumer lists %v", l)
		}
	})
	t.Run("an id that names nothing is not found", func(t *testing.T) {
		for _, unknown := range []string{"8000009999", "act_1", "", "x"} {
			_, err := call[*adsv1.AdAccount](t, b, procGetAccount, user(owner), &adsv1.GetAdAccountRequest{AdAccountId: unknown})
			plugintest.WantRefusal(t, err, 404, 100, 33)
		}
	})
	t.Run("a business holds at most 5 sandbox ad accounts", func(t *testing.T) {
		for range maxAccountsPerBusiness - 1 {
			b.account(t)
		}
		_, err := call[*adsv1.CreatedResponse](t, b, procCreateAccount, user(owner), &adsv1.CreateAdAccountRequest{Name: "sixth"})
		if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "name" {
			t.Fatalf("refusal %+v", e)
		}
		if n := plugintest.Count(t, b.pool, `SELECT count(*) FROM ads.ad_accounts`); n != maxAccountsPerBusiness {
			t.Fatalf("%d accounts stored", n)
		}
	})
}

func TestInDevelopmentABusinessGetsItsSandboxAdAccountOnFirstLook(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	for range 2 {
		list := must[*adsv1.ListAdAccountsResponse](t, b, procListMine, user(owner), &adsv1.ListMyAdAccountsRequest{})
		if len(list.GetData()) != 1 || list.GetData()[0].GetName() != "User "+owner+"'s sandbox ad account" || !list.GetData()[0].GetIsSandbox() {
			t.Fatalf("me/adaccounts %v", list)
		}
	}
	if n := plugintest.Count(t, b.pool, `SELECT count(*) FROM ads.ad_accounts WHERE business_id = $1`, "bp_"+owner); n != 1 {
		t.Fatalf("%d accounts provisioned, want 1", n)
	}
	// Outside development nothing is provisioned.
	p := setup(t, false)
	if list := must[*adsv1.ListAdAccountsResponse](t, p, procListMine, user(owner), &adsv1.ListMyAdAccountsRequest{}); len(list.GetData()) != 0 {
		t.Fatalf("provisioned outside development: %v", list)
	}
}

func TestLeadFormsKeepTheirQuestionsWithStandardKeysAndLabels(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	acct := b.account(t)
	id := b.form(t, acct)
	// Anyone signed in reads the questions, to answer them.
	f := must[*adsv1.LeadgenForm](t, b, procGetForm, session(consumer), &adsv1.GetLeadgenFormRequest{LeadgenFormId: id})
	want := []string{"FULL_NAME full_name Full name", "EMAIL email Email", "CUSTOM roast Favourite roast?"}
	if len(f.GetQuestions()) != 3 || f.GetAdAccountId() != acct || f.GetStatus() != "ACTIVE" {
		t.Fatalf("form %v", f)
	}
	for i, q := range f.GetQuestions() {
		if got := q.GetType() + " " + q.GetKey() + " " + q.GetLabel(); got != want[i] {
			t.Fatalf("question %d = %q, want %q", i, got, want[i])
		}
	}
	list := must[*adsv1.ListLeadgenFormsResponse](t, b, procListForms, user(owner), &adsv1.ListLeadgenFormsRequest{AdAccountId: acct})
	if len(list.GetData()) != 1 || list.GetData()[0].GetId() != id {
		t.Fatalf("leadgen_forms %v", list)
	}
	_, err := call[*adsv1.ListLeadgenFormsResponse](t, b, procListForms, user(consumer), &adsv1.ListLeadgenFormsRequest{AdAccountId: acct})
	plugintest.WantRefusal(t, err, 404, 100, 33)
}

func TestBadLeadFormsAreRefusedNamingTheFieldAndStoreNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	acct := b.account(t)
	q := func(t, k, l string) *adsv1.LeadgenQuestion { return &adsv1.LeadgenQuestion{Type: t, Key: k, Label: l} }
	many := make([]*adsv1.LeadgenQuestion, 16)
	for i := range many {
		many[i] = q("CUSTOM", fmt.Sprintf("q%d", i), "Q?")
	}
	cases := []struct {
		rule      string
		questions []*adsv1.LeadgenQuestion
		policy    string
		field     string
	}{
		{"a form with no question is refused", nil, "https://x.example/p", "questions"},
		{"a form with 16 questions is refused", many, "https://x.example/p", "questions"},
		{"an unknown question type is refused", []*adsv1.LeadgenQuestion{q("AGE", "", "")}, "https://x.example/p", "questions[0].type"},
		{"a custom question without a key is refused", []*adsv1.LeadgenQuestion{q("CUSTOM", "", "Why?")}, "https://x.example/p", "questions[0].key"},
		{"a custom question without a label is refused", []*adsv1.LeadgenQuestion{q("CUSTOM", "why", " ")}, "https://x.example/p", "questions[0].label"},
		{"a custom key with capitals is refused", []*adsv1.LeadgenQuestion{q("CUSTOM", "Why", "Why?")}, "https://x.example/p", "questions[0].key"},
		{"a standard question under another key is refused", []*adsv1.LeadgenQuestion{q("EMAIL", "mail", "")}, "https://x.example/p", "questions[0].key"},
		{"the same key twice is refused", []*adsv1.LeadgenQuestion{q("EMAIL", "", ""), q("CUSTOM", "email", "Again?")}, "https://x.example/p", "questions[1].key"},
		{"a label over 300 code points is refused", []*adsv1.LeadgenQuestion{q("CUSTOM", "a", strings.Repeat("é", 301))}, "https://x.example/p", "questions[0].label"},
		{"a plain http privacy policy is refused", []*adsv1.LeadgenQuestion{q("EMAIL", "", "")}, "http://x.example/p", "privacy_policy_url"},
		{"a privacy policy with a password is refused", []*adsv1.LeadgenQuestion{q("EMAIL", "", "")}, "https://u:p@x.example/p", "privacy_policy_url"},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			_, err := call[*adsv1.CreatedResponse](t, b, procCreateForm, user(owner),
				&adsv1.CreateLeadgenFormRequest{AdAccountId: acct, Name: "f", Questions: c.questions, PrivacyPolicyUrl: c.policy})
			if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != c.field {
				t.Fatalf("refusal names %q, want %q (%s)", e.Field, c.field, e.Message)
			}
		})
	}
	if n := plugintest.Count(t, b.pool, `SELECT count(*) FROM ads.leadgen_forms`); n != 0 {
		t.Fatalf("%d forms stored by refused calls", n)
	}
}

func TestLeadsSubmittedToAFormAreReadableByTheFormsOwnerOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	acct := b.account(t)
	form := b.form(t, acct)
	answers := []*adsv1.LeadField{
		{Name: "roast", Values: []string{"dark"}}, {Name: "full_name", Values: []string{" Ada Lovelace "}}, {Name: "email", Values: []string{"ada@example.com"}},
	}
	lead := must[*adsv1.CreatedResponse](t, b, procSubmitLead, session(consumer), &adsv1.SubmitLeadRequest{LeadgenFormId: form, FieldData: answers}).GetId()

	leads := must[*adsv1.ListLeadsResponse](t, b, procListLeads, user(owner), &adsv1.ListLeadsRequest{LeadgenFormId: form})
	if len(leads.GetData()) != 1 {
		t.Fatalf("leads %v", leads)
	}
	l := leads.GetData()[0]
	if l.GetId() != lead || l.GetUserId() != consumer || l.GetFormId() != form || len(l.GetFieldData()) != 3 ||
		l.GetFieldData()[0].GetName() != "full_name" || l.GetFieldData()[0].GetValues()[0] != "Ada Lovelace" || l.GetFieldData()[2].GetName() != "roast" {
		t.Fatalf("lead %v: answers are in the form's order, trimmed", l)
	}
	t.Run("leads are not found for anyone but the owner", func(t *testing.T) {
		_, err := call[*adsv1.ListLeadsResponse](t, b, procListLeads, user(consumer), &adsv1.ListLeadsRequest{LeadgenFormId: form})
		plugintest.WantRefusal(t, err, 404, 100, 33)
	})
	t.Run("a second lead of the same person to the form is refused", func(t *testing.T) {
		_, err := call[*adsv1.CreatedResponse](t, b, procSubmitLead, user(consumer), &adsv1.SubmitLeadRequest{LeadgenFormId: form, FieldData: answers})
		if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "leadgen_form_id" {
			t.Fatalf("refusal %+v", e)
		}
	})
	t.Run("a lead to a form that does not exist is not found", func(t *testing.T) {
		_, err := call[*adsv1.CreatedResponse](t, b, procSubmitLead, user(owner), &adsv1.SubmitLeadRequest{LeadgenFormId: "8109999999", FieldData: answers})
		plugintest.WantRefusal(t, err, 404, 100, 33)
	})
	bad := []struct {
		rule   string
		fields []*adsv1.LeadField
		field  string
	}{
		{"a missing answer is refused", answers[:2], "field_data"},
		{"an answer to no question is refused", append(answers[:3:3], &adsv1.LeadField{Name: "age", Values: []string{"3"}}), "field_data[3].name"},
		{"an answer given twice is refused", append(answers[:3:3], answers[0]), "field_data[3].name"},
		{"two values for one answer are refused", []*adsv1.LeadField{{Name: "email", Values: []string{"a@b.example", "c@d.example"}}}, "field_data[0].values"},
		{"an empty answer is refused", []*adsv1.LeadField{{Name: "email", Values: []string{"  "}}}, "field_data[0].values"},
		{"a malformed email is refused", []*adsv1.LeadField{{Name: "email", Values: []string{"Ada <ada@example.com>"}}}, "field_data[0].values"},
	}
	for _, c := range bad {
		t.Run(c.rule, func(t *testing.T) {
			_, err := call[*adsv1.CreatedResponse](t, b, procSubmitLead, user(owner), &adsv1.SubmitLeadRequest{LeadgenFormId: form, FieldData: c.fields})
			if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != c.field {
				t.Fatalf("refusal names %q, want %q (%s)", e.Field, c.field, e.Message)
			}
		})
	}
	if n := plugintest.Count(t, b.pool, `SELECT count(*) FROM ads.leads`); n != 1 {
		t.Fatalf("%d leads stored, want 1", n)
	}
}

func TestLeadCampaignsStartPausedAndPromoteAFormOfTheirOwnAccount(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	acct, other := b.account(t), b.account(t)
	form := b.form(t, acct)
	paused := must[*adsv1.CreatedResponse](t, b, procCreateCampaign, user(owner), &adsv1.CreateLeadCampaignRequest{AdAccountId: acct, Name: "Tastings"}).GetId()
	active := must[*adsv1.CreatedResponse](t, b, procCreateCampaign, user(owner), &adsv1.CreateLeadCampaignRequest{AdAccountId: acct, Name: "Roasts", Status: "ACTIVE", LeadgenFormId: form}).GetId()
	list := must[*adsv1.ListLeadCampaignsResponse](t, b, procListCampaigns, user(owner), &adsv1.ListLeadCampaignsRequest{AdAccountId: acct})
	if len(list.GetData()) != 2 {
		t.Fatalf("lead_campaigns %v", list)
	}
	first, second := list.GetData()[0], list.GetData()[1]
	if first.GetId() != paused || first.GetStatus() != "PAUSED" || first.GetObjective() != "OUTCOME_LEADS" || first.GetLeadgenFormId() != "" ||
		second.GetId() != active || second.GetStatus() != "ACTIVE" || second.GetLeadgenFormId() != form {
		t.Fatalf("lead_campaigns %v", list)
	}
	_, err := call[*adsv1.CreatedResponse](t, b, procCreateCampaign, user(owner), &adsv1.CreateLeadCampaignRequest{AdAccountId: other, Name: "x", LeadgenFormId: form})
	if e := plugintest.WantRefusal(t, err, 404, 100, 33); e.Field != "leadgen_form_id" {
		t.Fatalf("refusal %+v", e)
	}
	_, err = call[*adsv1.CreatedResponse](t, b, procCreateCampaign, user(consumer), &adsv1.CreateLeadCampaignRequest{AdAccountId: acct, Name: "x"})
	plugintest.WantRefusal(t, err, 404, 100, 33)
	if n := plugintest.Count(t, b.pool, `SELECT count(*) FROM ads.lead_campaigns`); n != 2 {
		t.Fatalf("%d campaigns stored, want 2", n)
	}
}

// FuzzCheckAnswers: answers are accepted only when they answer every
// question once, and what is stored is in the form's order.
func FuzzCheckAnswers(f *testing.F) {
	f.Add("full_name", "Ada", "email", "ada@example.com", "phone", "+44 20 7946 0958")
	f.Add("email", "x", "email", "y@z.example", "phone", "12")
	f.Add("phone", "((((1234", "full_name", "\x00", "", "")
	questions := []question{{"FULL_NAME", "full_name", "Full name"}, {"EMAIL", "email", "Email"}, {"PHONE", "phone", "Phone"}}
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2, n3, v3 string) {
		fields := []*adsv1.LeadField{{Name: n1, Values: []string{v1}}, {Name: n2, Values: []string{v2}}, {Name: n3, Values: []string{v3}}}
		got, err := checkAnswers(questions, fields)
		if err != nil {
			plugintest.WantRefusal(t, err, 400, 100, 0)
			return
		}
		if len(got) != 3 {
			t.Fatalf("accepted %d answers", len(got))
		}
		for i, a := range got {
			if a.Name != questions[i].Key || len(a.Values) != 1 || a.Values[0] == "" {
				t.Fatalf("answer %d = %+v", i, a)
			}
		}
	})
}

// FuzzNormalizeQuestions: a question list is refused naming a field, or
// every question has a valid, unique key and a label.
func FuzzNormalizeQuestions(f *testing.F) {
	f.Add("EMAIL", "", "", "CUSTOM", "roast", "Roast?")
	f.Add("CUSTOM", "email", "x", "EMAIL", "", "")
	f.Add("PHONE", "PHONE", "", "AGE", "", "")
	f.Fuzz(func(t *testing.T, t1, k1, l1, t2, k2, l2 string) {
		got, err := normalizeQuestions([]*adsv1.LeadgenQuestion{{Type: t1, Key: k1, Label: l1}, {Type: t2, Key: k2, Label: l2}})
		if err != nil {
			if e := plugintest.WantRefusal(t, err, 400, 100, 0); !strings.HasPrefix(e.Field, "questions") {
				t.Fatalf("refusal names %q", e.Field)
			}
			return
		}
		if len(got) != 2 || got[0].Key == got[1].Key || !validKey(got[0].Key) || !validKey(got[1].Key) || got[0].Label == "" || got[1].Label == "" {
			t.Fatalf("normalized %+v", got)
		}
	})
}

// An ad account a person put in a business (business/<id>/assets) is the
// business's to use too: its admins read it, its campaigns and its forms'
// leads, as the gateway decides on the AD_ACCOUNT asset; its employees
// and anyone else do not see it.
func TestAnAdAccountInABusinessIsUsedByTheBusinesssAdminsOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	acct := b.account(t)
	form := b.form(t, acct)
	b.hold(acct, consumer, colleague)
	if got := must[*adsv1.AdAccount](t, b, procGetAccount, user(consumer), &adsv1.GetAdAccountRequest{AdAccountId: acct}); got.GetId() != acct {
		t.Fatalf("the admin reads %v", got)
	}
	must[*adsv1.ListLeadCampaignsResponse](t, b, procListCampaigns, user(consumer), &adsv1.ListLeadCampaignsRequest{AdAccountId: acct})
	must[*adsv1.ListLeadsResponse](t, b, procListLeads, user(consumer), &adsv1.ListLeadsRequest{LeadgenFormId: form})
	for _, who := range []string{colleague, "1000000099"} {
		_, err := call[*adsv1.AdAccount](t, b, procGetAccount, user(who), &adsv1.GetAdAccountRequest{AdAccountId: acct})
		plugintest.WantRefusal(t, err, 404, 100, 33)
		_, err = call[*adsv1.ListLeadsResponse](t, b, procListLeads, user(who), &adsv1.ListLeadsRequest{LeadgenFormId: form})
		plugintest.WantRefusal(t, err, 404, 100, 33)
	}
	// The person who made it keeps it.
	must[*adsv1.AdAccount](t, b, procGetAccount, user(owner), &adsv1.GetAdAccountRequest{AdAccountId: acct})
}
