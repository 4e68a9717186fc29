// Command svcchat is the Page business messaging product plugin (CONTRACT
// §5): users write to Pages from the chat app, apps linked to a Page answer
// as the Page with session messages (inside the 24-hour window) and
// template messages (with the user's opt-in), users opt in and out, and
// templates go through their review lifecycle with platform staff.
//
// It owns the svcchat schema (migrated at start from sql/migrations). One
// row per conversation is the lock that orders everything happening to the
// conversation: two sends at once both land, numbered in commit order, and
// a window, opt-in or control change is never lost. Every event is written
// to the outbox in the transaction of its change, made by the platform's
// one outbox writer: sdk/event.Emit, or for a message and the events
// announcing it, internal/outbox's rows as parameters of the one statement
// that writes them (PostMessage); the gateway's webhook engine delivers it.
//
// The state machines of the interface are tables in code, one function
// each: NextTemplateStatus (template review), NextOptIn (opt-in).
//
// It asks the gateway (sdk.HostClient) for what it does not own: a Page's
// facts (PageAccess: published, chat surfacing, inbox automation) and an
// app's mode and platformConfig (AppInfo), where
// platformConfig.svcchat.templates adds or overrides templates. A live
// app's templates that it approved itself in development go to staff
// review when svcchat next reads them, and at once when the gateway calls
// AppWentLive as the app goes live (CONTRACT §15).
//
// It is started by the gateway, never by hand; it reads the database URL
// from SVC_DATABASE_URL, which the gateway passes on.
package main
