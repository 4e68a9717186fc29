// Package graph owns the Graph endpoint, /api/v1/graph: parsing a node path
// and matching it against the node patterns that plugins declare, binding
// path variables, query parameters and JSON bodies to request fields, and
// the generic features every node gets — field selection with nested edge
// expansion, cursor paging, batch requests, idempotent writes and rate
// limits. Calls go through route.Table, so a Graph call passes exactly the
// same validation and access checks as its Connect, gRPC and REST forms.
//
// graph has one parser for each input (node, fields, batch); each is
// fuzzed. It knows nothing about any product.
package graph
