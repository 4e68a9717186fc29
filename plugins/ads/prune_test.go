package main

import (
	"context"
	"testing"
	"time"

	adsv1 "github.com/svcplatform/svc/gen/svc/ads/v1"
	"github.com/svcplatform/svc/sdk/plugintest"
)

// A click stays as long as a conversion may still be attributed to it (an
// event sent 7 days late, 7 days after the click); after that clicks and
// conversions go, and an ad's insights give the same numbers as before.
func TestPruningKeepsWhatAttributionAndDedupNeedAndInsightsDoNotChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)}
	svc := &service{clock: clk.now}
	b := setupService(t, svc)
	acct := b.account(t)
	a := b.ad(t, b.campaign(t, acct, "ACTIVE", 10_000), "beans", "")
	send := func(evs ...*adsv1.ServerEvent) {
		t.Helper()
		must[*adsv1.SendConversionEventsResponse](t, b, procEvents, user(owner), &adsv1.SendConversionEventsRequest{AdAccountId: acct, Data: evs})
	}
	prune := func() {
		t.Helper()
		if err := svc.pruneRound(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rows := func(table string) int { return plugintest.Count(t, b.pool, `SELECT count(*) FROM `+table) }

	clicked := clk.now()
	must[*adsv1.SuccessResponse](t, b, procClick, session(consumer), &adsv1.ClickAdRequest{AdId: a})
	clk.add(time.Hour)
	send(event("first", consumer, clk.now()))

	// The last moment the click can count: an event 7 days after it, sent
	// 7 days late. A round just before keeps the click.
	clk.set(clicked.Add(maxEventAge + attributionWindow))
	prune()
	if n := rows("ads.ad_clicks"); n != 1 {
		t.Fatalf("%d clicks left 14 days on, want the one a late event may still need", n)
	}
	send(event("late", consumer, clicked.Add(attributionWindow)))
	before := b.insights(t, a)
	if before.GetConversions() != "2" || before.GetClicks() != "1" {
		t.Fatalf("insights before pruning: %v", before)
	}

	// A day past the click's retention and the conversions': they go, a
	// recent click and conversion stay, and the numbers do not move.
	clk.set(clicked.Add(clickRetention + conversionRetention + 24*time.Hour))
	must[*adsv1.SuccessResponse](t, b, procClick, session(consumer), &adsv1.ClickAdRequest{AdId: a})
	clk.add(time.Hour)
	send(event("recent", consumer, clk.now()))
	prune()
	if n := rows("ads.ad_clicks"); n != 1 {
		t.Errorf("%d clicks left, want the recent one", n)
	}
	if n := rows("ads.conversions"); n != 1 {
		t.Errorf("%d conversions left, want the recent one", n)
	}
	after := b.insights(t, a)
	if after.GetConversions() != "3" || after.GetClicks() != "2" || after.GetImpressions() != before.GetImpressions() {
		t.Errorf("insights after pruning %v, want the numbers before (%v) and the recent click and conversion", after, before)
	}

	// The recent event_id is still deduplicated.
	send(event("recent", consumer, clk.now()))
	if n := rows("ads.conversions"); n != 1 {
		t.Errorf("the recent event was stored again after pruning: %d rows", n)
	}
	if got := b.insights(t, a).GetConversions(); got != "3" {
		t.Errorf("conversions %s after a duplicate, want 3", got)
	}
}
