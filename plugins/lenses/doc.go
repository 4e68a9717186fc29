// Command lenses is the camera lenses product plugin (CONTRACT §12,
// GET /api/mobile/lenses): the lenses the chat app offers, kept in the
// lenses schema (migrated at start, with the built-in lenses). It serves
// svc.lenses.v1.LensesService to the gateway and emits no events.
//
// It is started by the gateway, never by hand; it reads the database URL
// from SVC_DATABASE_URL, which the gateway passes on.
package main
