package main

import (
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	chatv1 "github.com/svcplatform/svc/gen/svc/chat/v1"
	"github.com/svcplatform/svc/sdk/plugintest"
)

func (b *bundle) dm(t *testing.T, from, to string) error {
	t.Helper()
	_, err := call[*chatv1.SendDirectMessageResponse](t, b, "SendDirectMessage", session(from), &chatv1.SendDirectMessageRequest{ToUserId: to, Text: "hi"})
	return err
}

func (b *bundle) directThreads(t *testing.T, user string) int {
	t.Helper()
	l, err := call[*structpb.Struct](t, b, "ListChats", session(user), &chatv1.ListChatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, th := range l.GetFields()["threads"].GetListValue().GetValues() {
		if th.GetStructValue().GetFields()["kind"].GetStringValue() == "direct" {
			n++
		}
	}
	return n
}

// CONTRACT §15: a person blocked by another cannot message them, answered
// as a message to a user who does not exist (2018309); the block stops the
// thread both ways, and unblocking opens it again.
func TestABlockEitherWayRefusesDirectMessagesAsToAnUnknownUser(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := b.dm(t, "901", "900"); err != nil {
		t.Fatal(err)
	}
	block, err := call[*chatv1.UserBlock](t, b, "BlockUser", session("900"), &chatv1.BlockUserRequest{UserId: "901"})
	if err != nil || block.GetUserId() != "901" || block.GetCreatedAt() == "" {
		t.Fatalf("block = %v, %v", block, err)
	}
	before := plugintest.Count(t, b.pool, "SELECT count(*) FROM chat.direct_messages")
	plugintest.WantRefusal(t, b.dm(t, "901", "900"), 403, 10, 2018309)
	plugintest.WantRefusal(t, b.dm(t, "900", "901"), 403, 10, 2018309)
	if n := plugintest.Count(t, b.pool, "SELECT count(*) FROM chat.direct_messages"); n != before {
		t.Fatalf("refused messages stored %d rows", n-before)
	}
	t.Run("a third person is not concerned", func(t *testing.T) {
		if err := b.dm(t, "902", "900"); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := call[*chatv1.UnblockUserResponse](t, b, "UnblockUser", session("900"), &chatv1.BlockUserRequest{UserId: "901"}); err != nil {
		t.Fatal(err)
	}
	if err := b.dm(t, "901", "900"); err != nil {
		t.Fatalf("after the unblock: %v", err)
	}
}

// The blocker's chats list leaves out the thread with the person they
// blocked; the blocked person's list keeps it (it tells them nothing).
func TestTheBlockersChatsListLeavesTheBlockedPersonsThreadOut(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := b.dm(t, "901", "900"); err != nil {
		t.Fatal(err)
	}
	if _, err := call[*chatv1.UserBlock](t, b, "BlockUser", session("900"), &chatv1.BlockUserRequest{UserId: "901"}); err != nil {
		t.Fatal(err)
	}
	if n := b.directThreads(t, "900"); n != 0 {
		t.Fatalf("the blocker sees %d direct threads", n)
	}
	if n := b.directThreads(t, "901"); n != 1 {
		t.Fatalf("the blocked person sees %d direct threads", n)
	}
	if _, err := call[*chatv1.UnblockUserResponse](t, b, "UnblockUser", session("900"), &chatv1.BlockUserRequest{UserId: "901"}); err != nil {
		t.Fatal(err)
	}
	if n := b.directThreads(t, "900"); n != 1 {
		t.Fatalf("after the unblock the blocker sees %d direct threads", n)
	}
}

// A block names another user who exists; a repeat answers the block as it
// stands; the list is the user's own, newest first.
func TestABlockNamesAnotherUserWhoExists(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := call[*chatv1.UserBlock](t, b, "BlockUser", session("900"), &chatv1.BlockUserRequest{UserId: "900"})
	wantInvalid(t, err, "userId")
	_, err = call[*chatv1.UserBlock](t, b, "BlockUser", session("900"), &chatv1.BlockUserRequest{UserId: "no-one"})
	plugintest.WantRefusal(t, err, 404, 100, 33)
	if n := plugintest.Count(t, b.pool, "SELECT count(*) FROM chat.user_blocks"); n != 0 {
		t.Fatalf("refused blocks stored %d rows", n)
	}
	first, _ := call[*chatv1.UserBlock](t, b, "BlockUser", session("900"), &chatv1.BlockUserRequest{UserId: "901"})
	again, err := call[*chatv1.UserBlock](t, b, "BlockUser", session("900"), &chatv1.BlockUserRequest{UserId: "901"})
	if err != nil || again.GetCreatedAt() != first.GetCreatedAt() {
		t.Fatalf("repeat = %v, %v; first %v", again, err, first)
	}
	if _, err := b.pool.Exec(t.Context(), "UPDATE chat.user_blocks SET created_at = now() - interval '1 hour'"); err != nil {
		t.Fatal(err)
	}
	if _, err := call[*chatv1.UserBlock](t, b, "BlockUser", session("900"), &chatv1.BlockUserRequest{UserId: "902"}); err != nil {
		t.Fatal(err)
	}
	list, err := call[*chatv1.ListUserBlocksResponse](t, b, "ListUserBlocks", session("900"), &chatv1.ListUserBlocksRequest{})
	if err != nil || len(list.GetData()) != 2 || list.GetData()[0].GetUserId() != "902" || list.GetData()[1].GetUserId() != "901" {
		t.Fatalf("list = %v, %v", list, err)
	}
	if other, _ := call[*chatv1.ListUserBlocksResponse](t, b, "ListUserBlocks", session("901"), &chatv1.ListUserBlocksRequest{}); len(other.GetData()) != 0 {
		t.Fatalf("another user's list = %v", other)
	}
}

// A report may quote a direct message only to the person it was sent to:
// its sender, a third person and an unknown id get the same 404.
func TestOnlyTheRecipientReadsADirectMessageForAReport(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sent, err := call[*chatv1.SendDirectMessageResponse](t, b, "SendDirectMessage", session("901"), &chatv1.SendDirectMessageRequest{ToUserId: "900", Text: "rude"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := call[*chatv1.DirectMessage](t, b, "GetReceivedMessage", session("900"), &chatv1.GetReceivedMessageRequest{MessageId: sent.GetMessageId()})
	if err != nil || m.GetSenderUserId() != "901" || m.GetText() != "rude" || m.GetId() != sent.GetMessageId() {
		t.Fatalf("the recipient reads %v, %v", m, err)
	}
	for _, c := range []struct{ user, id string }{{"901", sent.GetMessageId()}, {"902", sent.GetMessageId()}, {"900", "dm_nothing"}} {
		_, err := call[*chatv1.DirectMessage](t, b, "GetReceivedMessage", session(c.user), &chatv1.GetReceivedMessageRequest{MessageId: c.id})
		plugintest.WantRefusal(t, err, 404, 100, 33)
	}
}
