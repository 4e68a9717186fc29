package main

import (
	"testing"

	chatv1 "github.com/svcplatform/svc/gen/svc/chat/v1"
	"github.com/svcplatform/svc/plugins/internal/leavetest"
	"github.com/svcplatform/svc/sdk"
	"github.com/svcplatform/svc/sdk/plugintest"
)

// A person who leaves takes their direct threads and their blocks with
// them; the others' threads stay. Telling twice is harmless, and nobody
// but the platform may tell.
func TestAPersonWhoLeftHasNoThreadsOrBlocksLeft(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, pair := range [][2]string{{"900", "901"}, {"902", "900"}, {"901", "902"}} {
		if err := b.dm(t, pair[0], pair[1]); err != nil {
			t.Fatal(err)
		}
	}
	for _, blk := range [][2]string{{"900", "902"}, {"901", "900"}, {"901", "902"}} {
		if _, err := call[*chatv1.UserBlock](t, b, "BlockUser", session(blk[0]), &chatv1.BlockUserRequest{UserId: blk[1]}); err != nil {
			t.Fatal(err)
		}
	}
	err := leavetest.Call(t.Context(), b.tp, session("900"), "900")
	plugintest.WantRefusal(t, err, 403, 200, 0)
	err = leavetest.Call(t.Context(), b.tp, sdk.Principal{Kind: sdk.TokenKindAdmin}, "not an id")
	plugintest.WantRefusal(t, err, 400, 100, 0)

	leavetest.Leave(t, b.tp, "900")
	leavetest.Leave(t, b.tp, "900")
	for q, want := range map[string]int{
		`SELECT count(*) FROM chat.direct_threads WHERE '900' IN (user_low, user_high)`:           0,
		`SELECT count(*) FROM chat.direct_messages WHERE sender_user_id = '900'`:                  0,
		`SELECT count(*) FROM chat.user_blocks WHERE '900' IN (user_id, blocked_user_id)`:         0,
		`SELECT count(*) FROM chat.direct_threads WHERE user_low = '901' AND user_high = '902'`:   1,
		`SELECT count(*) FROM chat.user_blocks WHERE user_id = '901' AND blocked_user_id = '902'`: 1,
	} {
		if got := plugintest.Count(t, b.pool, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
}
