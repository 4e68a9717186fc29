// Package graph owns the Graph endpoint, /api/v1/graph: matching a node path
// against the node patterns that plugins declare (the node syntax and the
// patterns' rules are internal/plugin/manifestcheck's, shared with plugin
// tests; the router is built with each route table), binding
// path variables, query parameters and JSON or form-encoded bodies to
// request fields (a form by the JSON body's rules), reading an
// access_token parameter as the request's credential first, and
// the generic features every node gets — field selection with nested edge
// expansion, cursor paging, batch requests, idempotent writes and rate
// limits. Calls go through the dispatcher (the Dispatcher interface, which
// package dispatch satisfies), so a Graph call passes exactly the same
// validation and access checks as its Connect, gRPC and REST forms; graph
// imports nothing above route.
//
// graph has one parser for each of its inputs (fields, batch); each is
// fuzzed. A write's body is decoded by encoding/json and protojson, but for
// the usual flat body of strings, which body.go reads in one pass and binds
// only where the result is the general path's (a fuzz target compares
// them). It knows nothing about any product.
package graph
