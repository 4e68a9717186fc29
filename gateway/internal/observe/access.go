package observe

import "context"

// Access is what a request's access log line says beyond what the HTTP
// layer sees: the Graph node and the Graph error code, noted by the
// handlers that know them. The server keeps one per request (only while
// the access log is on) and names it in the request's Request; the notes
// are no-ops without it.
type Access struct {
	Node string
	Code int
}

// access is the notes of the request ctx serves, or nil.
func access(ctx context.Context) *Access {
	if rq, _ := ctx.Value(traceKey{}).(*Request); rq != nil {
		return rq.Access
	}
	return nil
}

// NoteNode records the Graph node a request addressed; the first note
// wins, so that a batch is logged as the batch, not as its last item.
func NoteNode(ctx context.Context, node string) {
	if a := access(ctx); a != nil && a.Node == "" {
		a.Node = node
	}
}

// NoteErrorCode records the Graph error code a request was answered with.
func NoteErrorCode(ctx context.Context, code int) {
	if a := access(ctx); a != nil {
		a.Code = code
	}
}
