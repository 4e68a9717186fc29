package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// userLeft erases a person who left the platform (sdk.OnUserLeft): their
// direct threads with everything said in them (the other side is talking
// to nobody now) and the blocks they made or that name them. Idempotent.
func (s *service) userLeft(ctx context.Context, userID string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		const threads = `SELECT id FROM chat.direct_threads WHERE user_low = $1 OR user_high = $1`
		for _, stmt := range []string{
			`DELETE FROM chat.direct_messages WHERE thread_id IN (` + threads + `)`,
			`DELETE FROM chat.direct_threads WHERE user_low = $1 OR user_high = $1`,
			`DELETE FROM chat.user_blocks WHERE user_id = $1 OR blocked_user_id = $1`,
		} {
			if _, err := tx.Exec(ctx, stmt, userID); err != nil {
				return fmt.Errorf("erase a person who left: %w", err)
			}
		}
		return nil
	})
}
