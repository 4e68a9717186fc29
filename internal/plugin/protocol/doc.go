// Package protocol is the wire between the gateway and a plugin process, used
// by both sides: the handshake (magic cookie, the plugin's one stdout line
// naming its lane and protocol version), the fast lane, a framed Invoke
// transport over a private unix socket, and the protocol's own calls over it
// (Describe, Health, and the gateway's Host service on a socket of its own:
// ProcDescribe, ProcHost…).
//
// Plugin authors never import it; they use package sdk. The gateway's plugin
// host and the sdk's test kit use it for the gateway's side of the wire.
//
// The fast lane exists because a gRPC call through go-plugin cost several
// times our budget for a whole request's plugin hop (shared/PERFORMANCE.md),
// and since protocol version 2 it is the only transport, so that a plugin
// binary links no gRPC (docs/design/plugins.md); see
// `go test -run '^$' -bench BenchmarkHop ./gateway/internal/host/`. A fast-lane call is one write
// and one read on each side: a 4-byte big-endian length, then a protobuf
// svc.plugin.v1.InvokeRequest (gateway → plugin) or InvokeResponse
// (plugin → gateway), numbered by call_id. Each connection of a small,
// growing pool carries one call at a time, so that neither side hands a
// frame from one goroutine to another (see LaneClient). Only the gateway can
// connect: the socket lives in a folder the gateway created with mode 0700,
// and the plugin accepts a connection only when the kernel reports
// (SO_PEERCRED) that its peer is its parent process; the gateway, in turn,
// talks only to the process it started. A server-streaming call is a
// request frame with the top bit of its length set (frameFlag); its answers
// carry the same bit while more follow, and one frame without it ends the
// stream. The plugin watches a connection whose call runs longer than
// 10–20 ms, so that the gateway closing it (its client left) cancels the
// call; the gateway, in turn, watches a unary call's context once the call
// has run as long (at once when its deadline is near). One watchdog per
// process finds those calls; a short call sets no timer and no deadline.
//
// This package must not import the gateway or package sdk.
package protocol
