// Package webui holds what the gateway's browser apps share: one style
// sheet, the icon (favicon.svg, linked by the console's pages), one
// JavaScript module that calls the public APIs and shows a
// refused request's message beside the form field it names, and the
// security headers of their pages. The developer console
// (package console) uses it; the consumer's chat app of issue 18 is meant
// to use it too, so that there is one way to call the API from a page.
//
// The assets are embedded in the binary and served at Prefix. They are
// plain ES modules and CSS: no bundler, no npm build (docs/design/console.md).
//
// webui must not know any page or any API rule: it only carries bytes and
// headers.
package webui
