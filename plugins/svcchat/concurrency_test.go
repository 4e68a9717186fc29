package main

import (
	"context"
	"errors"
	"sync"
	"testing"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/sdk"
)

// Pipelined sends lock the conversation, then the opt-in record, as every
// other writer does: sends, the user's writes, typing and an opt-out racing
// on one conversation all end (no deadlock), number its messages and its
// events without a gap or a repeat, and no send lands after the opt-out.
func TestSendsWritesAndAnOptOutRacingOnOneConversationStayOrdered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.userWrites(t, "Hello")
	race(t, b, false)
	race(t, b, true)
	checkNumbering(t, b)
	// A send the opt-out did not refuse committed before it: the opt-out
	// failed it unless the chat app had fetched it (it had not).
	var notFailed int64
	if err := b.pool.QueryRow(context.Background(), "SELECT count(*) FROM svcchat.messages WHERE direction = 'outbound' AND status <> 'failed'").Scan(&notFailed); err != nil {
		t.Fatal(err)
	}
	if notFailed != 0 {
		t.Errorf("%d of the Page's messages were not failed by the opt-out: one landed after it", notFailed)
	}
}

func isOptedOut(err error) bool {
	var e *sdk.Error
	return errors.As(err, &e) && e.Subcode == errOptedOut().Subcode
}

// race runs sends, typing and the user's writes, or sends and an opt-out,
// on the conversation at once; it fails the test on an error other than
// the opt-out's refusal.
func race(t *testing.T, b *bundle, optOut bool) {
	t.Helper()
	const n = 12
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		sent     []string
		unexpect []error
	)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var err error
			switch {
			case optOut && i == n/2:
				_, err = call[*svcchatv1.OptInResponse](t, b, "OptOut", user, &svcchatv1.OptOutRequest{PageId: testPage, UserId: consumer})
			case !optOut && i%4 == 1: // a write after the opt-out would end it
				_, err = call[*svcchatv1.WriteToPageResponse](t, b, "WriteToPage", user, &svcchatv1.WriteToPageRequest{PageId: testPage, Text: "again"})
			case i%4 == 2:
				_, err = call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage,
					RecipientUserId: strp(consumer), SenderAction: strp(actionTypingOn)})
				if err != nil && isOptedOut(err) {
					err = nil
				}
			default:
				var res *svcchatv1.SendMessageResponse
				res, err = call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage,
					RecipientUserId: strp(consumer), Text: strp("reply")})
				if err == nil {
					mu.Lock()
					sent = append(sent, res.GetMessageId())
					mu.Unlock()
				} else if isOptedOut(err) {
					err = nil // opted out first
				}
			}
			if err != nil {
				mu.Lock()
				unexpect = append(unexpect, err)
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range unexpect {
		t.Errorf("unexpected error: %v", err)
	}
	if !optOut && len(sent) == 0 {
		t.Error("no send succeeded")
	}
}

// checkNumbering checks that the conversation's messages and events are
// numbered 1..n without a gap or a repeat.
func checkNumbering(t *testing.T, b *bundle) {
	t.Helper()
	ctx := context.Background()
	var msgs, maxSeq int64
	if err := b.pool.QueryRow(ctx, "SELECT count(*), max(seq) FROM svcchat.messages").Scan(&msgs, &maxSeq); err != nil {
		t.Fatal(err)
	}
	if msgs != maxSeq {
		t.Errorf("%d messages numbered up to %d: a gap or a repeat", msgs, maxSeq)
	}
	var events, distinct, maxEv int64
	if err := b.pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (data->>'sequence')::bigint), coalesce(max((data->>'sequence')::bigint), 0)
		FROM core.outbox WHERE data ? 'sequence' AND data->>'sequence' IS NOT NULL`).Scan(&events, &distinct, &maxEv); err != nil {
		t.Fatal(err)
	}
	if events != distinct || events != maxEv {
		t.Errorf("%d conversation events, %d distinct sequences, the last %d: want 1..n without a gap or a repeat", events, distinct, maxEv)
	}
}

// A template to an opted-in user who never wrote creates their
// conversation, as the user's first write does; the two at once both end.
// The send used to create it under the opt-in record's lock, which the
// write waits for after creating the conversation: PostgreSQL broke the
// deadlock by failing one of them (the send's unexpected error, 40P01).
func TestATemplateRacingTheUsersFirstWriteEnds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	must[*svcchatv1.OptInResponse](t, b, "OptIn", user, &svcchatv1.OptInRequest{PageId: testPage, Purposes: []string{"transactional"}})
	for range 150 {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			_, errs[0] = call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, template(devSend, "hello_world", nil))
		}()
		go func() {
			defer wg.Done()
			<-start
			_, errs[1] = call[*svcchatv1.WriteToPageResponse](t, b, "WriteToPage", user, &svcchatv1.WriteToPageRequest{PageId: testPage, Text: "hi"})
		}()
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
		}
		if _, err := b.pool.Exec(context.Background(), `TRUNCATE svcchat.messages, svcchat.assistant_jobs, svcchat.handovers, svcchat.conversations`); err != nil {
			t.Fatal(err)
		}
	}
}
