package main

import (
	"context"

	"github.com/svcplatform/svc/plugins/internal/erase"
)

// userLeft erases a person who left the platform (sdk.OnUserLeft): their
// conversations with businesses as a person of the messaging app, and
// every message in them. The businesses' accounts and templates are the
// business's, not the person's: they stay. Idempotent.
func (s *service) userLeft(ctx context.Context, userID string) error {
	return erase.User(ctx, s.pool, userID,
		`DELETE FROM extmsg.messages WHERE (account_id, conversation_id) IN
		   (SELECT account_id, id FROM extmsg.conversations WHERE user_id = $1)`,
		`DELETE FROM extmsg.conversations WHERE user_id = $1`)
}
