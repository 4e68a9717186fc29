// Command social is the threads-and-reels product plugin (CONTRACT §12):
// users publish threads (short text posts) and reply to and like them;
// Pages publish reels (short videos) whose media the plugin checks off the
// request path; both have insights counted from real reads and writes. It
// owns the social schema (migrated at start), serves
// svc.social.v1.ThreadsService and ReelsService to the gateway, and emits
// social.thread.created and social.reel.ready in the transaction of the
// change they report.
//
// # Counting
//
// views: every read of a thread or reel by anyone but its author adds one,
// in the statement that reads it (a thread) or right after the access check
// (a reel). likes: one per user, from thread/<id>/likes and reel/<id>/likes.
// replies: the thread's direct replies, the reel's reel/<id>/replies.
// Nothing is sampled or estimated.
//
// # Reels
//
// A new reel is processing. A checker in each plugin process claims the
// next due reel with FOR UPDATE SKIP LOCKED (so processes share the work
// and none checks a reel twice at once), asks the video URL for its
// headers (HEAD, or GET when HEAD is not allowed) and moves the reel by the
// table in reelstate.go: ready when the answer is 2xx with a video/*
// Content-Type and a Content-Length of at most 1 GiB; error with the
// reason when the answer says otherwise; processing again, later, when the
// server could not be reached (up to 3 attempts). Only https URLs are
// accepted, and the checker will not connect to loopback, private or
// link-local addresses; in development (SVC_DEV_SEED=1) http on loopback
// is allowed for local testing.
//
// It is started by the gateway, never by hand; it reads the database URL
// from SVC_DATABASE_URL, which the gateway passes on.
package main
