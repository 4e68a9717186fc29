// Package pages renders the HTML pages the gateway serves itself for
// identity: the sign-in form, the OAuth consent page, the authorization
// error page, and the signed-in confirmation. Templates are html/template,
// embedded in the binary, with inline styles only (no external assets), and
// every response carries headers that forbid framing, caching and referrers.
//
// pages only renders: it must not read requests, check CSRF tokens or know
// OAuth rules (package oauth does all that and hands it plain data).
package pages
