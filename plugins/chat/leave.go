package main

import (
	"context"

	"github.com/svcplatform/svc/plugins/internal/erase"
)

// userLeft erases a person who left the platform (sdk.OnUserLeft): their
// direct threads with everything said in them (the other side is talking
// to nobody now) and the blocks they made or that name them. Idempotent.
func (s *service) userLeft(ctx context.Context, userID string) error {
	const threads = `SELECT id FROM chat.direct_threads WHERE user_low = $1 OR user_high = $1`
	return erase.User(ctx, s.pool, userID,
		`DELETE FROM chat.direct_messages WHERE thread_id IN (`+threads+`)`,
		`DELETE FROM chat.direct_threads WHERE user_low = $1 OR user_high = $1`,
		`DELETE FROM chat.user_blocks WHERE user_id = $1 OR blocked_user_id = $1`)
}
