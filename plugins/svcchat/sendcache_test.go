package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/sdk"
)

// sendErr is an app's session message to the consumer, and its error.
func (b *bundle) sendErr(t *testing.T, text string) error {
	t.Helper()
	_, err := call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage,
		RecipientUserId: strp(consumer), Text: strp(text)})
	return err
}

func wantSubcode(t *testing.T, err error, want *sdk.Error) {
	t.Helper()
	var e *sdk.Error
	if !errors.As(err, &e) || e.Subcode != want.Subcode {
		t.Fatalf("send = %v, want subcode %d (%s)", err, want.Subcode, want.Message)
	}
}

func (b *bundle) outboundCount(t *testing.T) int64 {
	t.Helper()
	var n int64
	if err := b.pool.QueryRow(context.Background(), "SELECT count(*) FROM svcchat.messages WHERE direction = 'outbound'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// An app's sends to one user after the first go in one round trip each, on
// the state the previous send left, and number messages and events as the
// two-round-trip send does.
func TestAnAppsNextSendsToAUserGoInOneRoundTrip(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.userWrites(t, "Hello")
	for range 5 {
		b.send(t, "reply")
	}
	if got := b.svc.sends.oneTrip.Load(); got != 4 {
		t.Errorf("%d of 5 sends went in one round trip, want 4 (all but the first)", got)
	}
	b.userWrites(t, "Again") // changes the conversation: the next send decides again
	b.send(t, "reply")
	b.send(t, "reply")
	if got := b.svc.sends.oneTrip.Load(); got != 5 {
		t.Errorf("%d sends went in one round trip, want 5: the one after the user's write must decide on what it locks", got)
	}
	checkNumbering(t, b)
	if n := b.outboundCount(t); n != 7 {
		t.Errorf("%d messages sent, want 7", n)
	}
}

// A send decided on what the previous send left keeps every rule: what
// changed since (an opt-out, the window's end, the user's block, the
// Page's restriction) refuses it as it refuses a send that locks first,
// and nothing is stored.
func TestASendAfterAChangeIsRefusedAsIfDecidedOnWhatItLocks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(t *testing.T, b *bundle)
		want   *sdk.Error
	}{
		{"opt-out", func(t *testing.T, b *bundle) { b.optOut(t) }, errOptedOut()},
		{"window ended", func(t *testing.T, b *bundle) {
			if _, err := b.pool.Exec(context.Background(), "UPDATE svcchat.conversations SET window_expires_at = now() - interval '1 second'"); err != nil {
				t.Fatal(err)
			}
		}, errWindowClosed()},
		{"user's block", func(t *testing.T, b *bundle) { b.blockPage(t, user) }, errBlocked()},
		{"Page restricted", func(t *testing.T, b *bundle) {
			// Inserted directly: the restriction changes neither row the
			// send locks, so only the statement's own check sees it.
			if _, err := b.pool.Exec(context.Background(), "INSERT INTO svcchat.page_restrictions (page_id, report_id, restricted_by) VALUES ($1, 1, '1')", testPage); err != nil {
				t.Fatal(err)
			}
		}, errRestricted()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.userWrites(t, "Hello")
			b.send(t, "first")
			b.send(t, "second") // one round trip: the snapshot is in use
			c.change(t, b)
			wantSubcode(t, b.sendErr(t, "after"), c.want)
			if n := b.outboundCount(t); n != 2 {
				t.Errorf("%d messages stored, want the 2 sent before the change", n)
			}
		})
	}
}

// A snapshot is decided on by one send at a time, and not once it is older
// than snapshotTTL; a send that stores nothing leaves none.
func TestASnapshotServesOneSendAtATimeAndExpires(t *testing.T) {
	var c sendSnapshots
	k := sendKey{testPage, consumer}
	if _, ok := c.begin(k); ok {
		t.Fatal("a snapshot before any send")
	}
	c.end(k, &sendSnapshot{convVersion: "7", at: time.Now()})
	first, ok := c.begin(k)
	if !ok || first.convVersion != "7" {
		t.Fatalf("begin = %+v, %v; want the snapshot left", first, ok)
	}
	if _, ok := c.begin(k); ok {
		t.Error("a second send in flight got a snapshot")
	}
	c.end(k, nil)
	c.end(k, nil)
	if _, ok := c.begin(k); ok {
		t.Error("a snapshot after sends that stored nothing")
	}
	c.end(k, &sendSnapshot{convVersion: "8", at: time.Now().Add(-snapshotTTL - time.Second)})
	if _, ok := c.begin(k); ok {
		t.Error("a snapshot older than snapshotTTL was decided on")
	}
	c.end(k, nil)
	if len(c.m) != 0 {
		t.Errorf("%d entries left with no send in flight and no snapshot", len(c.m))
	}
}

// Sends in one round trip racing an opt-out: none lands after it (the
// opt-out fails every message it finds undelivered, so one that is not
// failed came after it), and the numbering has no gap.
func TestOneRoundTripSendsRacingAnOptOutNeverLandAfterIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.userWrites(t, "Hello")
	b.send(t, "first") // leaves the snapshot the next sends decide on
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(30 * time.Millisecond)
		b.optOut(t)
	}()
	refused := false
	for i := 0; i < 200 && !refused; i++ {
		if err := b.sendErr(t, "reply"); err != nil {
			if !isOptedOut(err) {
				t.Fatalf("send: %v", err)
			}
			refused = true
		}
	}
	<-done
	if !refused {
		t.Fatal("no send was refused after the opt-out")
	}
	if b.svc.sends.oneTrip.Load() == 0 {
		t.Fatal("no send went in one round trip: the race was not the one tested")
	}
	var notFailed int64
	if err := b.pool.QueryRow(context.Background(), "SELECT count(*) FROM svcchat.messages WHERE direction = 'outbound' AND status <> 'failed'").Scan(&notFailed); err != nil {
		t.Fatal(err)
	}
	if notFailed != 0 {
		t.Errorf("%d messages were not failed by the opt-out: one landed after it", notFailed)
	}
	checkNumbering(t, b)
}

// One-round-trip sends to different users made at once commit together
// (service.oneTrip), each numbered in its own conversation as if alone.
func TestOneRoundTripSendsMadeAtOnceCommitTogetherEachNumberedInItsConversation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const users = 8
	for i := range users {
		u := sdk.Principal{Kind: sdk.TokenKindSession, UserID: fmt.Sprint(7000 + i)}
		must[*svcchatv1.WriteToPageResponse](t, b, "WriteToPage", u, &svcchatv1.WriteToPageRequest{PageId: testPage, Text: "hi"})
	}
	sent := 0
	// A few rounds make sure some sends met in a batch, however slow the
	// machine.
	for round := 0; round < 10 && b.svc.oneTrip.Together() == 0; round++ {
		var wg sync.WaitGroup
		for i := range users {
			wg.Go(func() {
				for n := range 3 {
					_, err := call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage,
						RecipientUserId: strp(fmt.Sprint(7000 + i)), Text: strp(fmt.Sprintf("round %d reply %d", round, n))})
					if err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		sent += users * 3
	}
	if b.svc.oneTrip.Together() == 0 {
		t.Fatal("no sends were committed together")
	}
	if n := b.outboundCount(t); n != int64(sent) {
		t.Errorf("%d messages stored, want the %d sent", n, sent)
	}
	// In each conversation: messages 1..n and events 1..m, no gap or repeat.
	var bad int64
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM (
		SELECT conversation_id FROM svcchat.messages GROUP BY conversation_id HAVING count(*) <> max(seq) OR count(DISTINCT seq) <> count(*)
		UNION ALL
		SELECT 0 FROM core.outbox WHERE data ? 'sequence'
		GROUP BY coalesce(data->>'conversationId', data->'conversation'->>'id') HAVING count(*) <> max((data->>'sequence')::bigint) OR count(DISTINCT data->>'sequence') <> count(*)) AS gaps`).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Errorf("%d conversations numbered with a gap or a repeat", bad)
	}
}
