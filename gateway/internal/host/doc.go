// Package host runs the product plugins: one go-plugin child process per
// executable file in the plugins folder. It owns their lifecycle — start,
// describe, health-check, serve, restart with backoff after a crash,
// make-before-break hot swap, drain and stop — and the per-call hop to them.
//
// The hop to a plugin takes the fast lane when the plugin offers one (framed
// Invoke calls over a unix socket in a private folder, admitted by peer
// credentials; see package protocol) and gRPC otherwise. Server-streaming
// calls take the lane too when the plugin's lane serves them (checked at
// dial; a plugin built with an older SDK streams over gRPC). gRPC, protected
// by go-plugin's AutoMTLS, carries Describe, Health and the plugins' calls
// back to the gateway's Host service.
//
// Every call is counted against the plugin process that serves it, so a
// replaced or stopping process is drained before it is killed, and a call to
// a plugin that is not serving fails at once with apierr.Unavailable (503,
// code 2, transient).
//
// host knows nothing of HTTP, routes, authentication or validation: it hands
// each new set of manifests to Options.OnChange, and the caller builds its
// routes from them. It must not import any gateway package but apierr.
package host
