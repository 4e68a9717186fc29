// Package server owns the gateway's one HTTP port: the middleware every
// request passes (trace id and credential, panic recovery, API version,
// body limit), the dispatch between operational endpoints (/healthz,
// /readyz; /metrics is added by the gateway's wiring, on this port for the
// admin token only or on a listener of its own), HTML pages, gRPC health and reflection, and the
// transcoder that serves every proto service as REST, Connect, gRPC and
// gRPC-Web.
//
// Every method of the route table in use is served here as REST, Connect,
// gRPC and gRPC-Web (plugins.go): the server admits, decodes and answers in
// the request's protocol, and the call itself is the dispatcher's (the
// Calls interface). The server follows the route table make-before-break
// (Prepare, a dispatch.Follower).
//
// REST callers get errors in the Graph envelope: errors produced by the
// transcoder are rewritten here through apierr.Write. The set of services is
// swapped atomically when plugins change, so a reload never drops a request.
// server knows nothing of any product: services are given to it.
package server
