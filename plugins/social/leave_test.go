package main

import (
	"testing"

	socialv1 "github.com/svcplatform/svc/gen/svc/social/v1"
	"github.com/svcplatform/svc/plugins/internal/leavetest"
	"github.com/svcplatform/svc/sdk/plugintest"
)

// A person who leaves takes their threads with them, the replies under
// those, and their replies and likes elsewhere; another person's thread
// stays.
func TestAPersonWhoLeftHasNoThreadsRepliesOrLikesLeft(t *testing.T) {
	t.Parallel()
	b := setup(t, Options{})
	mine := b.thread(t, "mine")
	theirs, err := call[*socialv1.CreateThreadResponse](t, b, procCreateThread, user(reader), &socialv1.CreateThreadRequest{Text: "theirs"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ who, thread string }{{reader, mine}, {author, theirs.GetId()}} {
		reply, err := call[*socialv1.CreateThreadResponse](t, b, procCreateReply, user(r.who), &socialv1.CreateReplyRequest{ThreadId: r.thread, Text: "re"})
		if err != nil {
			t.Fatal(err)
		}
		// A reply to the reply: gone with its root when the root goes.
		if _, err := call[*socialv1.CreateThreadResponse](t, b, procCreateReply, user(reader), &socialv1.CreateReplyRequest{ThreadId: reply.GetId(), Text: "re re"}); err != nil {
			t.Fatal(err)
		}
		for _, who := range []string{author, reader} {
			if _, err := call[*socialv1.SuccessResponse](t, b, procLikeThread, user(who), &socialv1.LikeThreadRequest{ThreadId: r.thread}); err != nil {
				t.Fatal(err)
			}
		}
	}
	leavetest.Leave(t, b.tp, author)
	leavetest.Leave(t, b.tp, author)
	for q, want := range map[string]int{
		`SELECT count(*) FROM social.threads WHERE author_id = '` + author + `'`:    0,
		`SELECT count(*) FROM social.thread_likes WHERE user_id = '` + author + `'`: 0,
		// Left: the reader's thread with its one like; the reader's reply
		// to the author's reply went with it.
		`SELECT count(*) FROM social.threads`:      1,
		`SELECT count(*) FROM social.thread_likes`: 1,
	} {
		if got := plugintest.Count(t, b.pool, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
}
