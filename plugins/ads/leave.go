package main

import (
	"context"

	"github.com/svcplatform/svc/plugins/internal/erase"
)

// userLeft erases a person who left the platform (sdk.OnUserLeft): the
// leads they submitted. Ad accounts belong to businesses and stay.
// Idempotent.
func (s *service) userLeft(ctx context.Context, userID string) error {
	return erase.User(ctx, s.pool, userID, `DELETE FROM ads.leads WHERE user_id = $1`)
}
