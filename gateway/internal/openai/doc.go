// Package openai is the gateway's edge for plain HTTP paths that plugins
// declare (svc.plugin.v1.http_path), such as the completions plugin's POST
// /v1/chat/completions and GET /v1/models, the paths OpenAI clients call.
// The package is named for the wire it was made for; it knows no plugin
// and no path: the route table in use says which method serves which path.
//
// It owns only what makes these paths speak a wire of the plugin's instead
// of the Graph's: it hands the request body, untouched, to the bound
// method through the dispatcher (so that authentication, access rules and
// the plugin host are the same as for every other route) with the
// request's path and query and the gateway's public URL, writes back the
// status and body the plugin answers (as JSON, or with the headers it sets
// from an allowlist that has no Set-Cookie, and 304 for an ETag the client
// holds: public pages such as the book plugin's /posts/<id>), relays a stream (the path's
// stream_method, chosen by the body's top-level stream_field) as
// server-sent events flushed one per message, and writes the gateway's
// own refusals (no credential, plugin restarting, body too large) in the
// path's error style: OpenAI's shape {"error":{"message","type","param",
// "code"}} (CONTRACT §3) or the Graph envelope. Every answer carries
// X-Svc-Overhead-Ms, the gateway's own share of its time (OverheadHeader).
//
// It must not parse or validate the plugin's requests: the one field it
// reads is the stream field, to choose the unary or the streaming method.
//
// It also serves plugins' Prometheus metrics on the gateway's /metrics
// (Gatherer), fetched at each scrape from every method that declares
// svc.plugin.v1.metrics.
package openai
