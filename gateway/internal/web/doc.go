// Package web is the home of everything the gateway serves to a browser:
// its HTML, scripts, style sheets and icons. Its sub-packages are the areas:
//
//   - pages: the sign-in, sign-up, consent, error, signed-in and changelog
//     pages (html/template, for the OAuth server and the server's
//     changelog);
//   - console: the developer console at /developers/console;
//   - chatapp: the consumer chat app emulated at /chat.
//
// This package holds what they share: one style sheet, the icon
// (favicon.svg), one JavaScript module that calls the public APIs and shows
// a refused request's message beside the form field it names (api.js),
// served at Prefix; the handler that serves embedded assets with their
// content type (ContentType) and an ETag; and the security headers of an
// app page (PageCSP, SetPageHeaders), so that there is one way to call the
// API from a page and one policy for what a page may load.
//
// The assets are embedded in the binary. They are plain ES modules and CSS:
// no bundler, no npm build (docs/DECISIONS.md, "The developer console").
//
// web must not know any page or any API rule: it only carries bytes and
// headers. Its areas read and change data only through the public APIs.
package web
