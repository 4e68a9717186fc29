package server

import (
	"context"
	"net/http"
	"sync/atomic"
)

// restStatusKey carries a REST request's *restStatus through the transcoder
// to the method handler behind it.
type restStatusKey struct{}

// restStatus is the success status the method behind a REST request asked
// for (the svc.plugin.v1.rest_success_status option); 0 means 200.
type restStatus struct{ code atomic.Int32 }

// SetRESTSuccessStatus asks that the REST answer of the call running under
// ctx carry code (e.g. 202) instead of 200 when it succeeds. The transcoder
// answers every REST success with 200 and has no hook for this, so the
// method handler leaves the code here before it answers. For Connect, gRPC
// and Graph calls it does nothing.
func SetRESTSuccessStatus(ctx context.Context, code int) {
	if s, ok := ctx.Value(restStatusKey{}).(*restStatus); ok && code >= 200 && code < 300 {
		s.code.Store(int32(code))
	}
}

// withRESTStatus prepares r to receive a success status from its handler.
func withRESTStatus(r *http.Request) (*http.Request, *restStatus) {
	s := new(restStatus)
	return r.WithContext(context.WithValue(r.Context(), restStatusKey{}, s)), s
}
