package main

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	svcchatv1 "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	"github.com/svcplatform/svc/sdk"
)

func (b *bundle) takeFor(t *testing.T, app sdk.Principal, cid string, seconds int64) *svcchatv1.HandoverResponse {
	t.Helper()
	return must[*svcchatv1.HandoverResponse](t, b, "Handover", app, &svcchatv1.HandoverRequest{PageId: testPage, ConversationId: cid,
		Action: string(ActionTake), ExpiresIn: &seconds})
}

// lapse moves a conversation's expiry into the past, as time would.
func (b *bundle) lapse(t *testing.T, cid string) {
	t.Helper()
	if _, err := b.pool.Exec(context.Background(),
		"UPDATE svcchat.conversations SET control_expires_at = now() - interval '1 second' WHERE id = $1::bigint", cid); err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) expiresAt(t *testing.T, cid string) pgtype.Timestamptz {
	t.Helper()
	var at pgtype.Timestamptz
	if err := b.pool.QueryRow(context.Background(), "SELECT control_expires_at FROM svcchat.conversations WHERE id = $1::bigint", cid).Scan(&at); err != nil {
		t.Fatal(err)
	}
	return at
}

func TestALapsedHandoverReturnsOnceWhateverTheNumberOfExpirers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var cids []string
	for _, u := range []string{consumer, "9001", "9002", "9003", "9004"} {
		res := must[*svcchatv1.WriteToPageResponse](t, b, "WriteToPage", sdk.Principal{Kind: sdk.TokenKindSession, UserID: u},
			&svcchatv1.WriteToPageRequest{PageId: testPage, Text: "hi"})
		cids = append(cids, res.GetConversationId())
		if got := b.takeFor(t, devSend, res.GetConversationId(), 60).GetControl(); got.GetExpiresAt() == "" || got.GetHolder() != "app" {
			t.Fatalf("take with expires_in answered control %v", got)
		}
		b.lapse(t, res.GetConversationId())
	}
	var wg sync.WaitGroup
	for range 3 { // three gateways' plugins
		e := &expirer{pool: b.pool, log: b.p.Logger()}
		wg.Go(func() {
			for range 5 {
				if _, err := e.expireBatch(context.Background()); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	expires := 0
	for _, h := range b.handoverEvents(t) {
		if h.Action == string(ActionExpire) {
			expires++
			if h.NewHolder != string(HolderHuman) || h.PreviousHolder != "app:"+devApp {
				t.Errorf("expire event %+v; want control back to page_human", h)
			}
		}
	}
	if expires != len(cids) {
		t.Fatalf("%d expire events for %d lapsed conversations", expires, len(cids))
	}
	for _, cid := range cids {
		c := must[*svcchatv1.Conversation](t, b, "GetConversation", devSend, &svcchatv1.GetConversationRequest{PageId: testPage, ConversationId: cid})
		if c.GetControl().GetHolder() != string(HolderHuman) || c.GetControl().ExpiresAt != nil {
			t.Errorf("conversation %s control %v after the expiry", cid, c.GetControl())
		}
		list := must[*svcchatv1.ListHandoversResponse](t, b, "ListHandovers", devSend, &svcchatv1.ListHandoversRequest{PageId: testPage, ConversationId: cid})
		if len(list.GetData()) != 2 || list.GetData()[0].GetAction() != "expire" || list.GetData()[1].GetExpiresAt() == "" {
			t.Errorf("history of %s: %v", cid, list.GetData())
		}
	}
}

func TestAMessageFromTheHolderRestartsTheExpiry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cid := b.userWrites(t, "hi").GetConversationId()
	b.takeFor(t, devSend, cid, 600)
	if _, err := b.pool.Exec(context.Background(),
		"UPDATE svcchat.conversations SET control_expires_at = now() + interval '5 seconds' WHERE id = $1::bigint", cid); err != nil {
		t.Fatal(err)
	}
	must[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage, RecipientUserId: strp(consumer), Text: strp("on it")})
	if at := b.expiresAt(t, cid); !at.Valid || time.Until(at.Time) < 9*time.Minute {
		t.Fatalf("after the holder's message the expiry is %v, want about 10 minutes away", at)
	}
	t.Run("another app's send takes control and disarms the expiry", func(t *testing.T) {
		must[*svcchatv1.SendMessageResponse](t, b, "SendMessage", liveSend, &svcchatv1.SendMessageRequest{PageId: testPage, RecipientUserId: strp(consumer), Text: strp("me too")})
		if at := b.expiresAt(t, cid); at.Valid {
			t.Fatalf("expiry %v still armed after another app took control", at.Time)
		}
	})
}

// Many writers at once on one conversation: every event of it gets a
// distinct data.sequence, and together they are 1…n.
func TestConversationSequencesAreGapFreeUnderConcurrentWrites(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cid := b.userWrites(t, "hi").GetConversationId()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if i%2 == 0 {
				_, _ = call[*svcchatv1.SendMessageResponse](t, b, "SendMessage", devSend, &svcchatv1.SendMessageRequest{PageId: testPage, RecipientUserId: strp(consumer), Text: strp("x")})
			} else {
				_, _ = call[*svcchatv1.Thread](t, b, "GetThread", user, &svcchatv1.GetThreadRequest{ConversationId: cid})
				b.userWrites(t, "more")
			}
		})
	}
	wg.Wait()
	rows, err := b.pool.Query(context.Background(), "SELECT data FROM core.outbox WHERE ordering_key = $1 ORDER BY seq", orderingKey(mustID(t, cid)))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var seqs []int64
	for rows.Next() {
		var raw []byte
		var d struct{ Sequence int64 }
		if err := rows.Scan(&raw); err != nil || json.Unmarshal(raw, &d) != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, d.Sequence)
	}
	if len(seqs) < 10 {
		t.Fatalf("only %d events", len(seqs))
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("sequences in outbox order: %v", seqs)
		}
	}
	if !slices.IsSorted(seqs) {
		t.Fatal("outbox order differs from sequence order")
	}
}

func mustID(t *testing.T, s string) int64 {
	t.Helper()
	id, ok := sdk.ParseID(s)
	if !ok {
		t.Fatalf("id %q", s)
	}
	return id
}
