// Package console serves the developer console at /developers/console:
// html/template pages embedded in the binary, each a shell that a small
// ES module fills by calling the public APIs (the Graph, /api/..., the
// OAuth endpoints) with the browser's session cookie, so everything the
// console does can be scripted with curl (CONTRACT §13).
//
// The console is signed in with the login page's session cookie: a request
// without a console session is sent to /login?next=<the page>. Every page
// carries the session's CSRF token in <meta name="svc-csrf">; the shared
// fetch helper (package web's api.js) sends it as X-Svc-CSRF on every
// state change, and the gateway refuses cookie-authenticated state changes
// without it (package auth).
//
// Without JavaScript (plain.go), the pages that can work as plain HTML
// forms do: the apps list and app creation, redirect URIs, Page links, and
// drafting, approving and submitting templates. Their forms post to the
// page itself with the operation in "op" and the session's CSRF token in
// auth.CSRFFormField (checked with package auth's rule); the console turns
// the form into the JSON body the page's script would send and sends it to
// the public API in-process, through the gateway's own HTTP handler with
// the browser's cookie, then redirects back (303), or renders the page again
// with the refusal beside its field. Those pages also render their lists,
// read the same way; the script replaces them when it runs.
//
// console reads and changes data only through the public APIs (in the
// browser, or in-process for plain forms), never its own queries, and it
// must not decide who may do what (the API answers that, and the page
// shows the refusal).
package console
