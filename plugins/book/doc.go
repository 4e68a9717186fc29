// Command book is the social-posting product plugin: a Page's posts. It
// owns the book schema (migrated at start), serves svc.book.v1.BookService
// to the gateway, and emits book.post.created in the same statement as the
// post it reports (CreatePost, one round trip), its id from internal/outbox
// and its data built by the statement from the post's columns.
//
// Its SQL is in sql/queries, compiled by sqlc into internal/bookdb. Book is
// the most optimised plugin, not the one to learn from (docs/PLUGINS.md
// names those): the post lists, the Graph's hottest read, are read by the
// hand-written bookdb.EachPost* (the same SQL, no allocation per row) and
// their answer is built straight from the rows (postList); both live in
// files named fastrows.go, beside the plain way they replace.
//
// It is started by the gateway, never by hand; it reads the database URL
// from SVC_DATABASE_URL, which the gateway passes on.
package main
