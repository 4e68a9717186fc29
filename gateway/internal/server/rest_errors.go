package server

import (
	"bytes"
	"net/http"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/svcplatform/svc/gateway/internal/apierr"
)

// envelopeErrors rewrites the transcoder's REST error bodies (a JSON
// google.rpc.Status) into the Graph error envelope, so that REST callers see
// one error shape whichever layer refused the request. Success responses
// pass through untouched and unbuffered.
func envelopeErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ew := &errorCapture{ResponseWriter: w}
		next.ServeHTTP(ew, r)
		if !ew.capturing {
			return
		}
		// The rewritten body is written by apierr; drop the transcoder's headers
		// that describe its own body.
		w.Header().Del("Content-Encoding")
		if bodyExceeded(r) {
			apierr.Write(w, r, apierr.TooLarge(MaxBodyBytes))
			return
		}
		apierr.Write(w, r, decodeStatus(ew.status, ew.body.Bytes()))
	})
}

// decodeStatus turns a transcoder error body into our error, keeping a
// GraphError detail when the service attached one.
func decodeStatus(httpStatus int, body []byte) error {
	var st status.Status
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(body, &st); err != nil {
		if httpStatus == http.StatusNotFound {
			return apierr.UnknownPath("")
		}
		return apierr.Internal(err)
	}
	ce := connect.NewWireError(connect.Code(st.GetCode()), errorString(st.GetMessage()))
	for _, d := range st.GetDetails() {
		if m, err := d.UnmarshalNew(); err == nil {
			if detail, err := connect.NewErrorDetail(m); err == nil {
				ce.AddDetail(detail)
			}
		}
	}
	return apierr.FromConnect(ce)
}

type errorString string

func (e errorString) Error() string { return string(e) }

// errorCapture buffers the body of a response whose status is an error.
type errorCapture struct {
	http.ResponseWriter
	capturing   bool
	wroteHeader bool
	status      int
	body        bytes.Buffer
}

func (w *errorCapture) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	if code >= 400 {
		w.capturing, w.status = true, code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *errorCapture) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.capturing {
		return w.body.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

func (w *errorCapture) Flush() {
	if w.capturing {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *errorCapture) Unwrap() http.ResponseWriter { return w.ResponseWriter }
