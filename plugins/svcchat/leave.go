package main

import (
	"context"

	"github.com/svcplatform/svc/plugins/internal/erase"
)

// userLeft erases a person who left the platform (sdk.OnUserLeft): their
// conversations with Pages and everything in them (messages, handovers,
// assistant jobs), their opt-ins, the Pages they blocked and the reports
// they made. Reports about them stay: they are staff's record of what a
// Page or a person did. Idempotent.
func (s *service) userLeft(ctx context.Context, userID string) error {
	const conversations = `SELECT page_id, id FROM svcchat.conversations WHERE user_id = $1`
	return erase.User(ctx, s.pool, userID,
		`DELETE FROM svcchat.messages WHERE (page_id, conversation_id) IN (`+conversations+`)`,
		`DELETE FROM svcchat.handovers WHERE (page_id, conversation_id) IN (`+conversations+`)`,
		`DELETE FROM svcchat.assistant_jobs WHERE (page_id, conversation_id) IN (`+conversations+`)`,
		`DELETE FROM svcchat.conversations WHERE user_id = $1`,
		`DELETE FROM svcchat.opt_ins WHERE user_id = $1`,
		`DELETE FROM svcchat.page_blocks WHERE user_id = $1`,
		`DELETE FROM svcchat.reports WHERE reporter_user_id = $1`)
}
