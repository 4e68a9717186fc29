// Package dispatch is the path of every call to a plugin, as one straight
// line:
//
//	authenticate → route → admit → decode → validate → authorize → invoke
//
// Authenticate (run by the server's first middleware, with the trace id)
// resolves the request's credential once, before routing. The route table
// (gateway/internal/route), rebuilt from the plugins' manifests whenever
// one loads, restarts or goes, finds the method. Admit answers a caller
// without a valid credential for a method that is not public with 401
// before anything of the request is read (CONTRACT §15): the Graph handler
// runs it once it knows the node, the Connect, gRPC and REST handlers
// before they read the body. The entry point decodes the request; then
// Call (or Stream) validates it with protovalidate, applies the method's
// access rule with gateway/internal/auth, counts the method's per-user
// rate, and invokes it, in a plugin process through the host
// (gateway/internal/host) or in-process for the gateway's own services,
// counting it in the call metrics. The caller is the gateway's one
// principal (auth.Principal) all along; it takes its wire form only in the
// plugin request built here.
//
// A plugin calling another plugin back through the Host service takes the
// same path from "route" on, as the principal the host resolved for it (the
// caller of the call it serves, or itself).
//
// The route table is swapped make-before-break: a table that does not
// build (two plugins serving one service or claiming one Graph node,
// descriptors that do not resolve), or that a Follower (the server's
// transcoder, the Graph node router) cannot serve, is refused and the one
// in use stays. The edges (server, graph, openai, catalog, coregraph) reach
// the Dispatcher through small interfaces of their own; dispatch imports
// none of them.
package dispatch
