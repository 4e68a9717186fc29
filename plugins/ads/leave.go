package main

import (
	"context"

	"github.com/svcplatform/svc/plugins/internal/erase"
)

// userLeft erases a person who left the platform (sdk.OnUserLeft): the
// leads they submitted, their membership of custom audiences, and the
// hash that names them on their clicks and conversions (userHash, the
// SHA-256 of their id, computed here by the database), which stay as
// counts of no one. Impressions are counts that never named anyone. Ad
// accounts belong to businesses and stay. Idempotent.
func (s *service) userLeft(ctx context.Context, userID string) error {
	const hash = `sha256(convert_to($1::text, 'UTF8'))`
	return erase.User(ctx, s.pool, userID,
		`DELETE FROM ads.leads WHERE user_id = $1`,
		`DELETE FROM ads.audience_members WHERE schema = 'USER_ID' AND hash = `+hash,
		`UPDATE ads.ad_clicks SET user_hash = NULL WHERE user_hash = `+hash,
		`UPDATE ads.conversions SET user_hash = NULL WHERE user_hash = `+hash)
}
