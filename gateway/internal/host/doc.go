// Package host runs the product plugins: one child process per
// executable file in the plugins folder. It owns their lifecycle — start,
// describe, health-check, serve, restart with backoff after a crash,
// make-before-break hot swap, drain and stop — and the per-call hop to them.
//
// It starts each process itself (launch.go, process.go): the plugin's
// handshake line names its fast lane (framed Invoke calls over a unix socket
// in a private folder, admitted by peer credentials; see package protocol),
// which carries every call and stream, Describe and Health; the plugin's
// calls back to the Host service and its spans come over host.sock
// (hostlane.go).
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
