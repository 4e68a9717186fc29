// Package openapi builds the platform's API reference: an OpenAPI 3.0
// document (GET /api/v1/openapi.json) generated from the protobuf
// descriptors of the route table in use (the gateway's core services and
// every loaded plugin) and of the gateway's compiled-in services.
//
// It owns the mapping from descriptors to OpenAPI: google.api.http
// bindings become paths and operations, messages become
// components/schemas (JSON names, as protojson writes them), protovalidate
// rules become the cheap JSON Schema keywords, access rules become the
// x-svc-access extension and the operation's security, and the Graph
// endpoint is described once with its nodes in x-svc-nodes. The document
// is rebuilt only when the route table changes (a plugin loads, restarts
// or is removed), so a partner plugin's REST paths appear in it without
// rebuilding the gateway.
//
// It must not route or authorize anything: it only describes what the
// route table and the compiled services already serve.
package openapi
