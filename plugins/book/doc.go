// Command book is the social-posting product plugin: a Page's posts. It
// owns the book schema (migrated at start), serves svc.book.v1.BookService
// to the gateway, and emits book.post.created in the same transaction as the
// post it reports.
//
// It is started by the gateway, never by hand; it reads the database URL
// from SVC_DATABASE_URL, which the gateway passes on.
package main
