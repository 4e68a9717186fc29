// Package apierr owns the platform's error values and the single function
// that writes them: the Graph error envelope of CONTRACT §3 for REST callers,
// and Connect/gRPC errors carrying the same numbers as a svc.errors.v1.GraphError
// detail for RPC callers.
//
// Handlers return *Error values (or wrap them); they never write error
// bodies themselves. apierr must not depend on any other gateway package
// except observe (for the trace id).
package apierr
