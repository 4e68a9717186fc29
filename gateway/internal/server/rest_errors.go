package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/serving"
)

// envelopeErrors rewrites the transcoder's REST error bodies (a JSON
// google.rpc.Status) into the Graph error envelope, so that REST callers see
// one error shape whichever layer refused the request. Success responses
// pass through unbuffered, with the status the method asked for through
// success (nil: 200).
func envelopeErrors(next http.Handler, success *restStatus) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ew := &errorCapture{ResponseWriter: w, success: success}
		next.ServeHTTP(ew, r)
		if !ew.capturing {
			return
		}
		// The rewritten body is written by apierr; drop the transcoder's headers
		// that describe its own body.
		w.Header().Del("Content-Encoding")
		if bodyExceeded(r) {
			apierr.Write(w, r, apierr.TooLarge(serving.MaxBodyBytes))
			return
		}
		if isEnvelope(ew.body.Bytes()) {
			// Already ours (written through apierr by a handler behind the
			// transcoder): pass it on.
			apierr.WriteJSONBody(w, ew.status, ew.body.Bytes())
			return
		}
		apierr.Write(w, r, decodeStatus(r, ew.status, ew.body.Bytes()))
	})
}

// isEnvelope reports whether body is already a Graph error envelope.
func isEnvelope(body []byte) bool {
	var probe struct {
		Error *struct {
			Code *int `json:"code"`
		} `json:"error"`
	}
	return json.Unmarshal(body, &probe) == nil && probe.Error != nil && probe.Error.Code != nil
}

// decodeStatus turns a transcoder error body into our error, keeping a
// GraphError detail when the service attached one.
func decodeStatus(r *http.Request, httpStatus int, body []byte) error {
	var st status.Status
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(body, &st); err != nil || st.GetCode() == 0 {
		// Not a status body: the transcoder refused the request at the HTTP
		// level (no such route for this method, unsupported media type).
		switch httpStatus {
		case http.StatusNotFound:
			return apierr.UnknownPath(r.URL.Path)
		case http.StatusMethodNotAllowed:
			return apierr.MethodNotAllowed(r.Method)
		case http.StatusUnsupportedMediaType:
			return apierr.Invalid("Content-Type", "Invalid parameter: unsupported Content-Type %q.", r.Header.Get("Content-Type"))
		case http.StatusRequestEntityTooLarge:
			return apierr.TooLarge(serving.MaxBodyBytes)
		}
		if httpStatus < 500 {
			return apierr.Invalid("", "Invalid request: %s.", bytes.TrimSpace(body))
		}
		return apierr.Internal(fmt.Errorf("transcoder answered %d: %s", httpStatus, body))
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
	success     *restStatus
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
	if code == http.StatusOK && w.success != nil {
		if c := w.success.code.Load(); c != 0 {
			code = int(c)
		}
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
