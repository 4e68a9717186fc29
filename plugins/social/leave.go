package main

import (
	"context"

	"github.com/svcplatform/svc/plugins/internal/erase"
)

// userLeft erases a person who left the platform (sdk.OnUserLeft), as Meta
// does: their own threads go, with the replies under them (a reply without
// its thread has no context) and the likes of all of these; their replies
// and likes elsewhere go; their replies to reels and likes of reels go.
// Reels stay: they are the Page's posts, whoever made them. Idempotent.
func (s *service) userLeft(ctx context.Context, userID string) error {
	const gone = `WITH RECURSIVE gone AS (
	    SELECT id FROM social.threads WHERE author_id = $1
	    UNION SELECT t.id FROM social.threads t JOIN gone g ON t.reply_to = g.id)`
	return erase.User(ctx, s.pool, userID,
		gone+` DELETE FROM social.thread_likes WHERE user_id = $1 OR thread_id IN (SELECT id FROM gone)`,
		// One statement: the replies naming a thread go with it.
		gone+` DELETE FROM social.threads WHERE id IN (SELECT id FROM gone)`,
		`DELETE FROM social.reel_likes WHERE user_id = $1`,
		`DELETE FROM social.reel_replies WHERE author_id = $1`)
}
