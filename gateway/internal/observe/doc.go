// Package observe owns what makes a request traceable: the trace id (the
// X-Svc-Trace-Id header and the fbtrace_id of errors), the slog handler that
// stamps it on every log line, the access log's per-request record of what
// only the handlers know (Access: the Graph node, the error code), and the
// Prometheus metrics of the HTTP port.
//
// It must not depend on any other gateway package.
package observe
