package main

import (
	"context"
	"io/fs"
	"testing"
	"testing/fstest"
	"time"

	adsv1 "github.com/svcplatform/svc/gen/svc/ads/v1"
	"github.com/svcplatform/svc/plugins/ads/internal/adsdb"
	adssql "github.com/svcplatform/svc/plugins/ads/sql"
	"github.com/svcplatform/svc/sdk/migrate"
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

// Migration 0003 counts the conversions stored before it on their ads'
// daily rows, so that insights give the same numbers across the upgrade.
func TestTheUpgradeCountsEarlierConversionsOnTheDailyRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := plugintest.Database(t)
	if _, err := pool.Exec(ctx, `DROP SCHEMA ads CASCADE`); err != nil {
		t.Fatal(err)
	}
	all := adssql.Migrations()
	before := fstest.MapFS{}
	for _, name := range []string{"0001_ads.sql", "0002_delivery.sql"} {
		b, err := fs.ReadFile(all, name)
		if err != nil {
			t.Fatal(err)
		}
		before[name] = &fstest.MapFile{Data: b}
	}
	if _, err := migrate.Apply(ctx, pool, "ads", before); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
INSERT INTO ads.ad_accounts (id, business_id, name) VALUES (1, 'b', 'A');
INSERT INTO ads.campaigns (ad_account_id, id, name, objective, status, daily_budget) VALUES (1, 10, 'C', 'TRAFFIC', 'ACTIVE', 100);
INSERT INTO ads.ads (ad_account_id, campaign_id, id, name, status, title, body, link_url, page_id)
  VALUES (1, 10, 100, 'x', 'ACTIVE', 't', 'b', 'https://e.example', 'p'), (1, 10, 101, 'y', 'ACTIVE', 't', 'b', 'https://e.example', 'p');
INSERT INTO ads.ad_daily_stats (ad_account_id, ad_id, day, campaign_id, impressions, clicks) VALUES (1, 100, '2026-03-10', 10, 50, 3);
INSERT INTO ads.conversions (ad_account_id, event_id, event_name, event_time, ad_id, received_at) VALUES
  (1, 'a', 'Purchase', '2026-03-10 10:00Z', 100, '2026-03-10 11:00Z'),
  (1, 'b', 'Purchase', '2026-03-10 10:00Z', 100, '2026-03-11 11:00Z'),
  (1, 'c', 'Purchase', '2026-03-10 10:00Z', 101, '2026-03-11 11:00Z'),
  (1, 'd', 'Purchase', '2026-03-10 10:00Z', NULL, '2026-03-11 11:00Z')`); err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Apply(ctx, pool, "ads", all); err != nil {
		t.Fatal(err)
	}
	q := adsdb.New(pool)
	for ad, want := range map[int64][3]int64{100: {50, 3, 2}, 101: {0, 0, 1}} {
		got, err := q.AdTotals(ctx, adsdb.AdTotalsParams{AdAccountID: 1, AdID: ad})
		if err != nil {
			t.Fatal(err)
		}
		if [3]int64{got.Impressions, got.Clicks, got.Conversions} != want {
			t.Errorf("ad %d: impressions, clicks, conversions = %v, want %v", ad, got, want)
		}
	}
}
