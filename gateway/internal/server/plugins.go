package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"connectrpc.com/connect"
	"connectrpc.com/vanguard"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/route"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Calls runs the calls of the route table's methods (dispatch.Dispatcher):
// the server decodes each request and answers in its protocol; the call
// itself is the dispatcher's, whatever protocol it came in on.
type Calls interface {
	// Admit refuses a caller without a valid credential for a method that
	// is not public, before anything of the request is read.
	Admit(ctx context.Context, access *pluginv1.Access) error
	// Call validates, authorizes and invokes one unary call.
	Call(ctx context.Context, m *route.Method, req proto.Message, raw []byte) ([]byte, error)
	// Stream is Call for a server-streaming method.
	Stream(ctx context.Context, m *route.Method, req proto.Message, raw []byte, send func([]byte) error) error
}

// Compiled sets the compiled-in Connect services served beside the route
// table's (they do not take the plugin path). Call it before the first
// Prepare.
func (s *Server) Compiled(services ...Service) { s.compiled = services }

// Prepare builds the transcoder for the compiled-in services and every
// service of t, each method served over REST, Connect, gRPC and gRPC-Web
// through Options.Calls; commit switches to it (dispatch.Follower). A set
// of services the transcoder refuses (two serving one name) is an error,
// and the services in use stay.
func (s *Server) Prepare(t *route.Table) (commit func(), err error) {
	services := append(make([]Service, 0, len(s.compiled)+len(t.Services())), s.compiled...)
	for _, svc := range t.Services() {
		services = append(services, s.pluginService(svc))
	}
	rt, err := newRPCTable(services, t.Files())
	if err != nil {
		return nil, err
	}
	return func() { s.rpc.Store(rt) }, nil
}

// pluginService serves one service of the route table. A method bound to
// a plain HTTP path (http_path), or called for one when its request
// streams, is served at that path only: over RPC a caller could hand it a
// path or a public URL the gateway never chose.
func (s *Server) pluginService(svc route.Service) Service {
	httpOnly := map[string]string{}
	for _, m := range svc.Methods {
		if at := m.Edge.HTTP(); at != "" {
			httpOnly[m.Procedure] = at
			if m.Edge.StreamProcedure != "" {
				httpOnly[m.Edge.StreamProcedure] = at
			}
		}
	}
	mux := http.NewServeMux()
	for _, m := range svc.Methods {
		if at, ok := httpOnly[m.Procedure]; ok {
			mux.Handle(m.Procedure, servedAt(m, at))
			continue
		}
		mux.Handle(m.Procedure, s.pluginMethod(m))
	}
	return Service{
		Schema:    svc.Desc,
		Handler:   mux,
		Admission: s.admission,
		Options: []vanguard.ServiceOption{
			vanguard.WithTypeResolver(svc.Types),
			// Plugins speak protobuf only: JSON and REST callers are transcoded
			// once here, protobuf callers pass through untouched.
			vanguard.WithTargetCodecs(vanguard.CodecProto),
		},
	}
}

// servedAt refuses an RPC call of m, which is served at the plain HTTP
// path at ("GET /api/v1/oembed") only, with the envelope's unknown path.
func servedAt(m *route.Method, at string) http.Handler {
	refuse := func() error {
		return apierr.ToConnect(apierr.UnknownPath(m.Procedure + " (served at " + at + " only)"))
	}
	opts := []connect.HandlerOption{connect.WithCodec(rawCodec{}), connect.WithSchema(m.Desc)}
	if m.Desc.IsStreamingServer() {
		return connect.NewServerStreamHandler(m.Procedure, func(context.Context, *connect.Request[rawMessage], *connect.ServerStream[rawMessage]) error {
			return refuse()
		}, opts...)
	}
	return connect.NewUnaryHandler(m.Procedure, func(context.Context, *connect.Request[rawMessage]) (*connect.Response[rawMessage], error) {
		return nil, refuse()
	}, opts...)
}

// pluginMethod serves one method over Connect, gRPC and gRPC-Web, with the
// request and response kept as bytes.
func (s *Server) pluginMethod(m *route.Method) http.Handler {
	calls := s.opts.Calls
	opts := []connect.HandlerOption{connect.WithCodec(rawCodec{}), connect.WithSchema(m.Desc)}
	if m.ReadOnly {
		// Lets Connect clients call it with GET, cacheable.
		opts = append(opts, connect.WithIdempotency(connect.IdempotencyNoSideEffects))
	}
	if m.Desc.IsStreamingServer() {
		return s.admitting(m, connect.NewServerStreamHandler(m.Procedure, func(ctx context.Context, req *connect.Request[rawMessage], stream *connect.ServerStream[rawMessage]) error {
			in := m.Input.New().Interface()
			if err := proto.Unmarshal(req.Msg.b, in); err != nil {
				return apierr.ToConnect(apierr.Invalid("", "The request is not a valid %s message.", m.Desc.Input().FullName()))
			}
			err := calls.Stream(ctx, m, in, req.Msg.b, func(b []byte) error {
				return stream.Send(&rawMessage{b: b})
			})
			return connectError(ctx, err)
		}, opts...))
	}
	return s.admitting(m, connect.NewUnaryHandler(m.Procedure, func(ctx context.Context, req *connect.Request[rawMessage]) (*connect.Response[rawMessage], error) {
		in := m.Input.New().Interface()
		if err := proto.Unmarshal(req.Msg.b, in); err != nil {
			return nil, apierr.ToConnect(apierr.Invalid("", "The request is not a valid %s message.", m.Desc.Input().FullName()))
		}
		out, err := calls.Call(ctx, m, in, req.Msg.b)
		if err != nil {
			return nil, connectError(ctx, err)
		}
		if m.RESTSuccessStatus != 0 {
			SetRESTSuccessStatus(ctx, m.RESTSuccessStatus)
		}
		return connect.NewResponse(&rawMessage{b: out}), nil
	}, opts...))
}

// admission is the first step of a REST call of md (Service.Admission):
// the server runs it before the transcoder decodes the path and query of a
// REST GET, which it does before calling the method's handler (admitting
// then comes too late). nil for a public method.
func (s *Server) admission(md protoreflect.MethodDescriptor) func(ctx context.Context) error {
	access := route.AccessOf(md)
	if access.GetPublic() {
		return nil
	}
	return func(ctx context.Context) error { return s.opts.Calls.Admit(ctx, access) }
}

// admitError writes a refusal in the protocol of the request (Connect,
// gRPC, gRPC-Web; the transcoder turns it into REST's).
var admitError = connect.NewErrorWriter()

// admitting runs Admit for m before next reads anything of the request:
// a Connect, gRPC or gRPC-Web body is decoded only as next reads it, so a
// caller without a credential is refused before a bad body is noticed. A
// REST call was admitted already (admission); here it costs a context
// lookup.
func (s *Server) admitting(m *route.Method, next http.Handler) http.Handler {
	if m.Access.GetPublic() {
		return next
	}
	calls := s.opts.Calls
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := calls.Admit(r.Context(), m.Access); err != nil {
			_ = admitError.Write(w, r, apierr.ToConnect(apierr.From(err)))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// connectError is err as a Connect error; an unexpected failure of the
// gateway's own is logged.
func connectError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return err
	}
	e := apierr.From(err)
	if e.HTTPStatus >= 500 && !e.Transient {
		slog.ErrorContext(ctx, "call failed", "error", e.Error())
	}
	return apierr.ToConnect(e)
}
