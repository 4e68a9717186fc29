// Package console serves the developer console at /developers/console:
// html/template pages embedded in the binary, each a shell that a small
// ES module fills by calling the public APIs (the Graph, /api/..., the
// OAuth endpoints) with the browser's session cookie, so everything the
// console does can be scripted with curl (CONTRACT §13).
//
// The console is signed in with the login page's session cookie: a request
// without a console session is sent to /login?next=<the page>. Every page
// carries the session's CSRF token in <meta name="svc-csrf">; the shared
// fetch helper (package webui's api.js) sends it as X-Svc-CSRF on every
// state change, and the gateway refuses cookie-authenticated state changes
// without it (package auth).
//
// console only renders pages and serves its scripts: it must not read or
// change data itself (the scripts do, through the public APIs), and it must
// not decide who may do what (the API answers that, and the page shows
// the refusal).
package console
