package main

import (
	"context"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/internal/pipetx"
	"github.com/svcplatform/svc/plugins/svcchat/internal/svcchatdb"
)

// The send and the sender actions queue sqlc's statements on pipelined
// batches (sendState.locks, pipetx.QueueRow) and read their rows by
// position into sqlc's types; this checks those reads against sqlc's own
// functions, so a column added to a table, or
// reordered, cannot shift what the send decides on.
func TestTheSendsPipelinedReadsReadWhatSqlcReads(t *testing.T) {
	b := setup(t)
	b.userWrites(t, "Is my order ready?")
	ctx := context.Background()

	var (
		st     sendState
		row    svcchatdb.PostMessageRow
		stored bool
	)
	first := st.locks(ctx, testPage, consumer)
	err := pipetx.Run(ctx, b.pool, first, func(tx *pipetx.Tx) error {
		q := svcchatdb.New(tx)
		wantConv, err := q.LockConversationByUser(ctx, svcchatdb.LockConversationByUserParams{PageID: testPage, UserID: consumer})
		if err != nil {
			return err
		}
		wantOpt, err := q.LockOptIn(ctx, svcchatdb.LockOptInParams{PageID: testPage, UserID: consumer})
		if err != nil {
			return err
		}
		if !st.found || !reflect.DeepEqual(st.conv, wantConv) {
			t.Errorf("pipelined LockConversationByUser read %+v (found %v), sqlc reads %+v", st.conv, st.found, wantConv)
		}
		if !st.optFound || !reflect.DeepEqual(st.optIn(), wantOpt) {
			t.Errorf("pipelined LockOptIn read %+v (found %v), sqlc reads %+v", st.opt, st.optFound, wantOpt)
		}
		arg, err := messagePost(&st.conv, newMessage{Direction: "outbound", Sender: "app", AppID: liveApp, Kind: "session", Text: "Yes, it is."}, sentEvents(&st.conv))
		if err != nil {
			return err
		}
		pipetx.QueueRow(tx.Last(), func(db pipetx.DBTX) { svcchatdb.New(db).PostMessage(ctx, arg) }, &row, &stored)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !stored {
		t.Fatal("PostMessage stored nothing under the conversation's lock")
	}
	msgs, err := svcchatdb.New(b.pool).ListThreadMessages(ctx, svcchatdb.ListThreadMessagesParams{
		PageID: testPage, ConversationID: st.conv.ID, BeforeSeq: row.Seq + 1, Lim: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || !reflect.DeepEqual(svcchatdb.SvcchatMessage(row), msgs[0]) {
		t.Errorf("pipelined PostMessage answered %+v, the stored message is %+v", row, msgs)
	}
}

// Migration 0006: no index covers a column a message changes on its
// conversation, so PostgreSQL updates the row in place (HOT) and writes no
// index entry. The transaction's own statistics count its HOT updates.
func TestAMessageUpdatesItsConversationInPlace(t *testing.T) {
	b := setup(t)
	b.userWrites(t, "Hello")
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		q := svcchatdb.New(tx)
		conv, _, err := lockConversation(ctx, q, testPage, consumer)
		if err != nil {
			return err
		}
		// The counts of this session's transactions not yet reported: read
		// before and after the message.
		counts := func() (updated, hot int64, err error) {
			err = tx.QueryRow(ctx, `SELECT pg_stat_get_xact_tuples_updated('svcchat.conversations'::regclass),
				pg_stat_get_xact_tuples_hot_updated('svcchat.conversations'::regclass)`).Scan(&updated, &hot)
			return updated, hot, err
		}
		updated0, hot0, err := counts()
		if err != nil {
			return err
		}
		if _, err := postMessage(ctx, q, &conv, newMessage{Direction: "outbound", Sender: "app", AppID: liveApp, Kind: "session", Text: "Hi"}, sentEvents(&conv)); err != nil {
			return err
		}
		updated1, hot1, err := counts()
		if err != nil {
			return err
		}
		if updated, hot := updated1-updated0, hot1-hot0; updated != 1 || hot != 1 {
			t.Errorf("the message updated %d conversation rows, %d of them in place; want 1 and 1", updated, hot)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
