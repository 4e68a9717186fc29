package main

import (
	"encoding/hex"
	"strings"
	"sync"
	"testing"
	"time"

	adsv1 "github.com/svcplatform/svc/gen/svc/ads/v1"
	"github.com/svcplatform/svc/sdk/plugintest"
)

const (
	procCreateDeliveryCampaign = "/svc.ads.v1.AdsService/CreateCampaign"
	procUpdateCampaign         = "/svc.ads.v1.AdsService/UpdateCampaign"
	procCreateAd               = "/svc.ads.v1.AdsService/CreateAd"
	procUpdateAd               = "/svc.ads.v1.AdsService/UpdateAd"
	procInsights               = "/svc.ads.v1.AdsService/GetAdInsights"
	procServe                  = "/svc.ads.v1.AdsService/ServeSponsoredAd"
	procClick                  = "/svc.ads.v1.AdsService/ClickAd"
	procCreateAudience         = "/svc.ads.v1.AdsService/CreateCustomAudience"
	procAddAudienceUsers       = "/svc.ads.v1.AdsService/AddCustomAudienceUsers"
	procGetAudience            = "/svc.ads.v1.AdsService/GetCustomAudience"
	procEvents                 = "/svc.ads.v1.AdsService/SendConversionEvents"
)

// clock is a settable time for the service under test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// setupClocked runs the plugin with a clock at noon UTC of a fixed day
// and the sandbox price cpm.
func setupClocked(t *testing.T, cpm int64) (*bundle, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)}
	return setupService(t, &service{cpm: cpm, clock: c.now}), c
}

func (b *bundle) campaign(t *testing.T, account, status string, budget int64) string {
	t.Helper()
	return must[*adsv1.CreatedResponse](t, b, procCreateDeliveryCampaign, user(owner), &adsv1.CreateCampaignRequest{
		AdAccountId: account, Name: "Spring", Objective: "TRAFFIC", Status: status, DailyBudget: budget}).GetId()
}

func (b *bundle) ad(t *testing.T, campaign, title, audience string) string {
	t.Helper()
	return must[*adsv1.CreatedResponse](t, b, procCreateAd, user(owner), &adsv1.CreateAdRequest{CampaignId: campaign, Name: title,
		Creative: &adsv1.AdCreative{Title: title, Body: "Fresh roasts", LinkUrl: "https://shop.example.com/" + title}, AudienceId: audience}).GetId()
}

func (b *bundle) serve(t *testing.T, who string) string {
	t.Helper()
	return must[*adsv1.SponsoredAd](t, b, procServe, session(who), &adsv1.ServeSponsoredAdRequest{}).GetAdId()
}

func (b *bundle) insights(t *testing.T, ad string) *adsv1.AdInsights {
	t.Helper()
	return must[*adsv1.AdInsightsResponse](t, b, procInsights, user(owner), &adsv1.GetAdInsightsRequest{AdId: ad}).GetData()[0]
}

func TestStatusMovesFollowTheTransitionTable(t *testing.T) {
	t.Parallel()
	all := []string{statusActive, statusPaused, statusArchived, statusDeleted}
	allowed := map[[2]string]bool{
		{statusActive, statusActive}: true, {statusActive, statusPaused}: true, {statusActive, statusArchived}: true, {statusActive, statusDeleted}: true,
		{statusPaused, statusPaused}: true, {statusPaused, statusActive}: true, {statusPaused, statusArchived}: true, {statusPaused, statusDeleted}: true,
		{statusArchived, statusArchived}: true, {statusArchived, statusDeleted}: true,
		{statusDeleted, statusDeleted}: true,
	}
	for _, from := range all {
		for _, to := range all {
			if got := canMove(from, to); got != allowed[[2]string{from, to}] {
				t.Errorf("%s -> %s allowed = %v", from, to, got)
			}
		}
	}
	if canMove("", statusActive) || canMove("RUNNING", "RUNNING") {
		t.Error("an unknown status moves")
	}
}

// A refused move answers 400 naming status and changes nothing; an
// allowed one changes what is served.
func TestACampaignStatusChangeIsCheckedAndDecidesServing(t *testing.T) {
	t.Parallel()
	b, _ := setupClocked(t, 0)
	c := b.campaign(t, b.account(t), "ACTIVE", 10_000)
	a := b.ad(t, c, "beans", "")
	if got := b.serve(t, consumer); got != a {
		t.Fatalf("served %q, want %s", got, a)
	}
	must[*adsv1.SuccessResponse](t, b, procUpdateCampaign, user(owner), &adsv1.UpdateStatusRequest{Id: c, Status: "PAUSED"})
	if got := b.serve(t, consumer); got != "" {
		t.Fatalf("a paused campaign's ad is served: %s", got)
	}
	must[*adsv1.SuccessResponse](t, b, procUpdateCampaign, user(owner), &adsv1.UpdateStatusRequest{Id: c, Status: "ARCHIVED"})
	_, err := call[*adsv1.SuccessResponse](t, b, procUpdateCampaign, user(owner), &adsv1.UpdateStatusRequest{Id: c, Status: "ACTIVE"})
	if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "status" {
		t.Fatalf("refusal %+v", e)
	}
	_, err = call[*adsv1.SuccessResponse](t, b, procUpdateCampaign, user(consumer), &adsv1.UpdateStatusRequest{Id: c, Status: "DELETED"})
	plugintest.WantRefusal(t, err, 404, 100, 33)
}

// Serving is fair: among eligible ads the one served least today goes
// first, so two ads alternate and end even.
func TestServingGivesTheLeastServedEligibleAdFirst(t *testing.T) {
	t.Parallel()
	b, _ := setupClocked(t, 0)
	acct := b.account(t)
	c := b.campaign(t, acct, "ACTIVE", 10_000)
	first, second := b.ad(t, c, "first", ""), b.ad(t, c, "second", "")
	want := []string{first, second, first, second, first, second}
	for i, w := range want {
		if got := b.serve(t, consumer); got != w {
			t.Fatalf("serve %d = %s, want %s", i, got, w)
		}
	}
	// A third ad, new today, is behind by three: it is served until even.
	third := b.ad(t, b.campaign(t, acct, "ACTIVE", 10_000), "third", "")
	for i := range 3 {
		if got := b.serve(t, owner); got != third {
			t.Fatalf("serve %d after the third ad = %s", i, got)
		}
	}
	for _, a := range []string{first, second, third} {
		if got := b.insights(t, a).GetImpressions(); got != "3" {
			t.Errorf("ad %s impressions = %s, want 3", a, got)
		}
	}
}

// An ad is eligible row by row: its status, its campaign's, the day's
// budget at the sandbox price.
func TestServingRespectsPausingAndTheDailyBudget(t *testing.T) {
	t.Parallel()
	// 1,000 minor units a thousand: one unit an impression; a budget of
	// 100 pays 100 impressions a day.
	b, clk := setupClocked(t, 1000)
	acct := b.account(t)
	t.Run("a paused ad is not served, an active one of an active campaign is", func(t *testing.T) {
		c := b.campaign(t, acct, "ACTIVE", 100)
		a := b.ad(t, c, "paused", "")
		must[*adsv1.SuccessResponse](t, b, procUpdateAd, user(owner), &adsv1.UpdateStatusRequest{Id: a, Status: "PAUSED"})
		if got := b.serve(t, consumer); got != "" {
			t.Fatalf("served %s", got)
		}
		must[*adsv1.SuccessResponse](t, b, procUpdateAd, user(owner), &adsv1.UpdateStatusRequest{Id: a, Status: "ACTIVE"})
		if got := b.serve(t, consumer); got != a {
			t.Fatalf("served %q, want %s", got, a)
		}
		must[*adsv1.SuccessResponse](t, b, procUpdateAd, user(owner), &adsv1.UpdateStatusRequest{Id: a, Status: "DELETED"})
	})
	t.Run("a campaign created paused is not served", func(t *testing.T) {
		b.ad(t, b.campaign(t, acct, "", 100), "draft", "")
		if got := b.serve(t, consumer); got != "" {
			t.Fatalf("served %s", got)
		}
	})
	t.Run("a campaign stops at its daily budget and starts again the next day", func(t *testing.T) {
		a := b.ad(t, b.campaign(t, acct, "ACTIVE", 100), "budget", "")
		for i := range 100 {
			if got := b.serve(t, consumer); got != a {
				t.Fatalf("serve %d = %q", i, got)
			}
		}
		if got := b.serve(t, consumer); got != "" {
			t.Fatalf("serve 101 = %s: over budget", got)
		}
		in := b.insights(t, a)
		if in.GetImpressions() != "100" || in.GetSpend() != "1.00" {
			t.Fatalf("insights %v", in)
		}
		clk.add(24 * time.Hour)
		if got := b.serve(t, consumer); got != a {
			t.Fatalf("the next day serve = %q", got)
		}
	})
}

// A click counts on the ad and moves ctr; a person outside the audience is
// neither served nor able to click.
func TestAudiencesDecideWhoIsServedAndClicksAreCounted(t *testing.T) {
	t.Parallel()
	b, _ := setupClocked(t, 0)
	acct := b.account(t)
	aud := must[*adsv1.CreatedResponse](t, b, procCreateAudience, user(owner), &adsv1.CreateCustomAudienceRequest{AdAccountId: acct, Name: "Regulars"}).GetId()
	h := sha256Of(consumer)
	res := must[*adsv1.AddCustomAudienceUsersResponse](t, b, procAddAudienceUsers, user(owner), &adsv1.AddCustomAudienceUsersRequest{
		AudienceId: aud, Schema: "USER_ID", Data: []string{consumer, nobody, "not-an-id", consumer}})
	if res.GetNumReceived() != 4 || res.GetNumInvalidEntries() != 1 {
		t.Fatalf("upload %v", res)
	}
	got := must[*adsv1.CustomAudience](t, b, procGetAudience, user(owner), &adsv1.GetCustomAudienceRequest{AudienceId: aud})
	if got.GetApproximateCount() != 1 {
		t.Fatalf("approximate_count = %d, want 1 (the consumer; %s is nobody)", got.GetApproximateCount(), nobody)
	}
	// Only hashes are stored.
	if n := plugintest.Count(t, b.pool, `SELECT count(*) FROM ads.audience_members WHERE hash = '\x`+hex.EncodeToString(h)+`'`); n != 1 {
		t.Fatalf("%d members hold the consumer's hash", n)
	}
	if n := plugintest.Count(t, b.pool, `SELECT count(*) FROM ads.audience_members WHERE position(convert_to('`+consumer+`', 'UTF8') in hash) > 0`); n != 0 {
		t.Fatal("a plain user id is stored")
	}
	a := b.ad(t, b.campaign(t, acct, "ACTIVE", 10_000), "regulars", aud)
	if got := b.serve(t, owner); got != "" {
		t.Fatalf("the owner, outside the audience, is served %s", got)
	}
	_, err := call[*adsv1.SuccessResponse](t, b, procClick, session(owner), &adsv1.ClickAdRequest{AdId: a})
	plugintest.WantRefusal(t, err, 404, 100, 33)
	for range 4 {
		if got := b.serve(t, consumer); got != a {
			t.Fatalf("the consumer is served %q", got)
		}
	}
	must[*adsv1.SuccessResponse](t, b, procClick, session(consumer), &adsv1.ClickAdRequest{AdId: a})
	in := b.insights(t, a)
	if in.GetImpressions() != "4" || in.GetClicks() != "1" || in.GetCtr() != "25" || in.GetSpend() != "0.02" || in.GetConversions() != "0" {
		t.Fatalf("insights %v", in)
	}
	_, err = call[*adsv1.AdInsightsResponse](t, b, procInsights, user(consumer), &adsv1.GetAdInsightsRequest{AdId: a})
	plugintest.WantRefusal(t, err, 404, 100, 33)
}

func TestAudienceEntriesAreHashedAfterNormalising(t *testing.T) {
	t.Parallel()
	hexOf := func(s string) string { return hex.EncodeToString(sha256Of(s)) }
	for _, c := range []struct {
		schema, entry, want string // want: the hash's hex, "" when invalid
	}{
		{schemaEmail, "  Ada@Example.COM ", hexOf("ada@example.com")},
		{schemaEmail, strings.ToUpper(hexOf("ada@example.com")), hexOf("ada@example.com")},
		{schemaEmail, "not an email", ""},
		{schemaEmail, "a@b@c", ""},
		{schemaEmail, "@example.com", ""},
		{schemaPhone, "+1 (650) 555-0100", hexOf("16505550100")},
		{schemaPhone, "0044 20 7946 0958", hexOf("442079460958")},
		{schemaPhone, "555-01", ""},
		{schemaPhone, "call me", ""},
		{schemaUserID, " 1000000002 ", hexOf("1000000002")},
		{schemaUserID, hexOf("1000000002"), ""},
		{schemaUserID, "-12", ""},
		{schemaUserID, "", ""},
	} {
		h, ok := entryHash(c.schema, c.entry)
		if got := hex.EncodeToString(h); ok != (c.want != "") || got != c.want {
			t.Errorf("%s %q = %q, %v; want %q", c.schema, c.entry, got, ok, c.want)
		}
	}
}

func TestApproximateCountIsExactOnSandboxesAndRoundedOnLiveAccounts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n       int64
		sandbox bool
		want    int64
	}{
		{0, true, 0}, {1, true, 1}, {12_345, true, 12_345},
		{0, false, 1000}, {999, false, 1000}, {1000, false, 1000}, {1099, false, 1000}, {1234, false, 1200}, {12_345, false, 12_000}, {987_654, false, 980_000},
	} {
		if got := approximateCount(c.n, c.sandbox); got != c.want {
			t.Errorf("approximateCount(%d, sandbox %v) = %d, want %d", c.n, c.sandbox, got, c.want)
		}
	}
}

// event builds a Purchase by the person userID at t.
func event(id, userID string, t time.Time) *adsv1.ServerEvent {
	return &adsv1.ServerEvent{EventName: "Purchase", EventTime: t.Unix(), EventId: id, ActionSource: "website",
		UserData:   &adsv1.ServerEventUserData{ExternalId: []string{hex.EncodeToString(sha256Of(userID))}},
		CustomData: &adsv1.ServerEventCustomData{Value: 12.5, Currency: "USD"}}
}

func TestAnEventIDIsCountedOnceWithin48Hours(t *testing.T) {
	t.Parallel()
	b, clk := setupClocked(t, 0)
	acct := b.account(t)
	stored := func() int { return plugintest.Count(t, b.pool, `SELECT count(*) FROM ads.conversions`) }
	send := func(evs ...*adsv1.ServerEvent) {
		t.Helper()
		res := must[*adsv1.SendConversionEventsResponse](t, b, procEvents, user(owner), &adsv1.SendConversionEventsRequest{AdAccountId: acct, Data: evs})
		if res.GetEventsReceived() != int64(len(evs)) {
			t.Fatalf("events_received %v", res)
		}
	}
	send(event("order-1", consumer, clk.now()), event("order-1", consumer, clk.now()))
	if n := stored(); n != 1 {
		t.Fatalf("twice in one batch: %d stored", n)
	}
	clk.add(47 * time.Hour)
	send(event("order-1", consumer, clk.now()))
	if n := stored(); n != 1 {
		t.Fatalf("again after 47 hours: %d stored", n)
	}
	clk.add(2 * time.Hour)
	send(event("order-1", consumer, clk.now()))
	if n := stored(); n != 2 {
		t.Fatalf("again 49 hours after the first: %d stored", n)
	}
	send(event("", consumer, clk.now()), event("", consumer, clk.now()))
	if n := stored(); n != 4 {
		t.Fatalf("events without event_id: %d stored", n)
	}
}

// A conversion counts for the ad its person clicked last in the 7 days up
// to its event_time, edges included.
func TestAConversionIsAttributedToAClickOfTheSevenDaysBefore(t *testing.T) {
	t.Parallel()
	b, clk := setupClocked(t, 0)
	acct := b.account(t)
	a := b.ad(t, b.campaign(t, acct, "ACTIVE", 10_000), "beans", "")
	clicked := clk.now()
	must[*adsv1.SuccessResponse](t, b, procClick, session(consumer), &adsv1.ClickAdRequest{AdId: a})
	for _, c := range []struct {
		name       string
		who        string
		at         time.Time
		attributed bool
	}{
		{"one second before the click", consumer, clicked.Add(-time.Second), false},
		{"at the click", consumer, clicked, true},
		{"exactly 7 days after", consumer, clicked.Add(attributionWindow), true},
		{"7 days and a second after", consumer, clicked.Add(attributionWindow + time.Second), false},
		{"by someone who did not click", owner, clicked.Add(time.Hour), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk.set(c.at.Add(time.Minute)) // the event is sent a minute after it happened
			before := b.insights(t, a).GetConversions()
			must[*adsv1.SendConversionEventsResponse](t, b, procEvents, user(owner), &adsv1.SendConversionEventsRequest{AdAccountId: acct,
				Data: []*adsv1.ServerEvent{event(c.name, c.who, c.at)}})
			after := b.insights(t, a).GetConversions()
			if (after != before) != c.attributed {
				t.Fatalf("conversions %s -> %s, attributed want %v", before, after, c.attributed)
			}
		})
	}
}

func TestAConversionBatchWithOneInvalidEventIsRefusedNamingIt(t *testing.T) {
	t.Parallel()
	b, clk := setupClocked(t, 0)
	acct := b.account(t)
	good := event("ok", consumer, clk.now())
	for _, c := range []struct {
		bad   *adsv1.ServerEvent
		field string
	}{
		{&adsv1.ServerEvent{EventName: "Purchase", EventTime: clk.now().Add(time.Hour).Unix(), ActionSource: "app", UserData: good.GetUserData()}, "data[1].event_time"},
		{&adsv1.ServerEvent{EventName: "Purchase", EventTime: clk.now().Add(-8 * 24 * time.Hour).Unix(), ActionSource: "app", UserData: good.GetUserData()}, "data[1].event_time"},
		{&adsv1.ServerEvent{EventName: "Purchase", EventTime: clk.now().Unix(), ActionSource: "app", UserData: &adsv1.ServerEventUserData{}}, "data[1].user_data"},
		{&adsv1.ServerEvent{EventName: "Purchase", EventTime: clk.now().Unix(), ActionSource: "app", UserData: &adsv1.ServerEventUserData{ExternalId: []string{consumer}}}, "data[1].user_data.external_id[0]"},
	} {
		_, err := call[*adsv1.SendConversionEventsResponse](t, b, procEvents, user(owner), &adsv1.SendConversionEventsRequest{AdAccountId: acct, Data: []*adsv1.ServerEvent{good, c.bad}})
		if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != c.field {
			t.Errorf("field %q, want %q", e.Field, c.field)
		}
	}
	if n := plugintest.Count(t, b.pool, `SELECT count(*) FROM ads.conversions`); n != 0 {
		t.Fatalf("%d stored from refused batches", n)
	}
	_, err := call[*adsv1.SendConversionEventsResponse](t, b, procEvents, user(consumer), &adsv1.SendConversionEventsRequest{AdAccountId: acct, Data: []*adsv1.ServerEvent{good}})
	plugintest.WantRefusal(t, err, 404, 100, 33)
}

// BenchmarkServe measures the chats list's cost of the sponsored slot: one
// pick-and-count statement among 50 eligible ads, through the plugin.
func BenchmarkServe(b *testing.B) {
	bd := setupService(b, &service{})
	acct := must[*adsv1.CreatedResponse](b, bd, procCreateAccount, user(owner), &adsv1.CreateAdAccountRequest{Name: "Bench"}).GetId()
	c := must[*adsv1.CreatedResponse](b, bd, procCreateDeliveryCampaign, user(owner), &adsv1.CreateCampaignRequest{
		AdAccountId: acct, Name: "Bench", Objective: "TRAFFIC", Status: "ACTIVE", DailyBudget: 100_000_000}).GetId()
	for i := range 50 {
		must[*adsv1.CreatedResponse](b, bd, procCreateAd, user(owner), &adsv1.CreateAdRequest{CampaignId: c, Name: "ad",
			Creative: &adsv1.AdCreative{Title: "ad " + strings.Repeat("x", i%3), LinkUrl: "https://example.com"}})
	}
	b.ResetTimer()
	for range b.N {
		if _, err := call[*adsv1.SponsoredAd](b, bd, procServe, session(consumer), &adsv1.ServeSponsoredAdRequest{}); err != nil {
			b.Fatal(err)
		}
	}
}

// An ad's audience must be of its campaign's account, its link an
// http(s) URL; an archived campaign takes no new ads.
func TestAnAdNeedsAnAudienceOfItsAccountAnHTTPLinkAndALiveCampaign(t *testing.T) {
	t.Parallel()
	b, _ := setupClocked(t, 0)
	acct, other := b.account(t), b.account(t)
	foreign := must[*adsv1.CreatedResponse](t, b, procCreateAudience, user(owner), &adsv1.CreateCustomAudienceRequest{AdAccountId: other, Name: "Elsewhere"}).GetId()
	c := b.campaign(t, acct, "ACTIVE", 1000)
	for _, tc := range []struct {
		req    *adsv1.CreateAdRequest
		status int
		field  string
	}{
		{&adsv1.CreateAdRequest{CampaignId: c, Name: "a", AudienceId: foreign, Creative: &adsv1.AdCreative{Title: "t", LinkUrl: "https://example.com"}}, 404, "audience_id"},
		{&adsv1.CreateAdRequest{CampaignId: c, Name: "a", Creative: &adsv1.AdCreative{Title: "t", LinkUrl: "javascript:alert(1)"}}, 400, "creative.link_url"},
		{&adsv1.CreateAdRequest{CampaignId: c, Name: "a", Creative: &adsv1.AdCreative{Title: "t", LinkUrl: "https://user:pw@example.com"}}, 400, "creative.link_url"},
		{&adsv1.CreateAdRequest{CampaignId: c, Name: "a", Creative: &adsv1.AdCreative{Title: "t", LinkUrl: "https://example.com", PageId: "page"}}, 400, "creative.page_id"},
	} {
		_, err := call[*adsv1.CreatedResponse](t, b, procCreateAd, user(owner), tc.req)
		code, sub := 100, 0
		if tc.status == 404 {
			sub = 33
		}
		if e := plugintest.WantRefusal(t, err, tc.status, code, sub); e.Field != tc.field {
			t.Errorf("refusal %+v, want field %s", e, tc.field)
		}
	}
	must[*adsv1.SuccessResponse](t, b, procUpdateCampaign, user(owner), &adsv1.UpdateStatusRequest{Id: c, Status: "ARCHIVED"})
	_, err := call[*adsv1.CreatedResponse](t, b, procCreateAd, user(owner), &adsv1.CreateAdRequest{CampaignId: c, Name: "a",
		Creative: &adsv1.AdCreative{Title: "t", LinkUrl: "https://example.com"}})
	if e := plugintest.WantRefusal(t, err, 400, 100, 0); e.Field != "campaign_id" {
		t.Fatalf("refusal %+v", e)
	}
	if n := plugintest.Count(t, b.pool, `SELECT count(*) FROM ads.ads`); n != 0 {
		t.Fatalf("%d ads stored", n)
	}
}
