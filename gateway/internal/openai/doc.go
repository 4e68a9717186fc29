// Package openai is the gateway's OpenAI-shaped edge: POST
// /v1/chat/completions and GET /v1/models, the paths OpenAI clients call.
//
// It owns only what makes these paths speak OpenAI's wire instead of the
// Graph's: it hands the request body, untouched, to the completions
// plugin's methods through the route table (so authentication, access
// rules and the plugin host are the same as for every other route), writes
// back the status and body the plugin answers, relays a stream as
// server-sent events flushed one per message, and writes the gateway's own
// refusals (no credential, plugin restarting, body too large) in OpenAI's
// error shape {"error":{"message","type","param","code"}} (CONTRACT §3).
// Every answer carries X-Svc-Overhead-Ms, the gateway's own share of its
// time (OverheadHeader), and x-request-id, the request's trace id, which
// OpenAI's clients log (set by the server's middleware on every /v1/ path,
// so refusals made before this edge carry it too).
//
// It must not parse or validate completion requests, pick models or talk
// to upstreams: all of that is the plugin's. The one field it reads is
// "stream", to choose the unary or the streaming method.
//
// It also serves the plugin's Prometheus metrics on the gateway's /metrics
// (Gatherer), fetched from the plugin at each scrape.
package openai
