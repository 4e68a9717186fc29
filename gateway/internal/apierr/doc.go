// Package apierr writes the platform's errors: the Graph error envelope of
// CONTRACT §3 for REST callers, and Connect/gRPC errors carrying the same
// numbers as a svc.errors.v1.GraphError detail for RPC callers. It also
// names the refusals that only the gateway makes (no token, unknown node,
// unsupported version, …).
//
// The error type itself is the SDK's (sdk.Error, aliased as Error here), so
// that a plugin's refusal, a partner's and the gateway's are one model and
// cross the plugin wire unchanged. Handlers return errors; they never write
// error bodies themselves. apierr must not depend on any other gateway
// package except observe (for the trace id).
package apierr
