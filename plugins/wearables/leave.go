package main

import (
	"context"

	"github.com/svcplatform/svc/plugins/internal/erase"
)

// userLeft erases a person who left the platform (sdk.OnUserLeft): every
// card pushed to them and every device they paired. Idempotent.
func (s *service) userLeft(ctx context.Context, userID string) error {
	return erase.User(ctx, s.pool, userID,
		`DELETE FROM wearables.cards WHERE user_id = $1`,
		`DELETE FROM wearables.devices WHERE user_id = $1`)
}
