package route

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"sync/atomic"

	"connectrpc.com/connect"
	"connectrpc.com/vanguard"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/observe"
	"github.com/svcplatform/svc/gateway/internal/server"
	"github.com/svcplatform/svc/gateway/internal/validate"
	errorsv1 "github.com/svcplatform/svc/gen/svc/errors/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
	"github.com/svcplatform/svc/internal/plugin/wire"
)

// Invoker runs one unary call of a plugin.
type Invoker interface {
	Invoke(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error)
}

// AnswerInvoker is an Invoker that can read a call's answer into a buffer
// its caller owns, sparing a copy (a plugin's fast lane); see
// Table.CallInto.
type AnswerInvoker interface {
	InvokeInto(ctx context.Context, req *pluginv1.InvokeRequest, answer []byte) (*pluginv1.InvokeResponse, error)
}

// StreamInvoker runs one server-streaming call, handing each response to
// send. Invokers that serve streaming methods implement it.
type StreamInvoker interface {
	InvokeStream(ctx context.Context, req *pluginv1.InvokeRequest, send func(*pluginv1.InvokeResponse) error) error
}

// Guard enforces a method's access rule for the caller carried by ctx.
type Guard interface {
	// Admit refuses a caller without a valid credential for a method that
	// is not public (nil access: a method not known yet). It is the first
	// step of a call, before anything of the request is read (Table.Admit).
	Admit(ctx context.Context, access *pluginv1.Access) error
	// Check applies the rest of the rule to the decoded, validated request
	// and returns the principal the plugin will see.
	Check(ctx context.Context, access *pluginv1.Access, target Target) (Grant, error)
}

// Grant is what a passed access check gives the call: the principal the
// plugin sees, and the facts of the target Page the check read (nil when
// the rule names no Page), which travel with the call.
type Grant struct {
	Principal  *pluginv1.Principal
	PageAccess *pluginv1.PageAccessResponse
}

// Reads decides which reads a read replica may serve (gateway/internal/replica).
type Reads interface {
	// MayRead answers whether a read by p may be served by the replica.
	MayRead(p *pluginv1.Principal) bool
	// Wrote says that a call of p with side effects has ended.
	Wrote(p *pluginv1.Principal)
}

// Source is one plugin (or the gateway's own in-process services) as the
// router sees it: its description, checked when it was loaded, and where
// its calls go.
type Source struct {
	Plugin  *manifestcheck.Plugin
	Invoker Invoker
	// PrimaryOnly: the source never reads a replica (the gateway's own
	// services), so its reads are not offered one.
	PrimaryOnly bool
}

// Method is one routable method: a method of a checked manifest (its
// procedure, descriptor, access rule, Graph bindings, REST status and
// read-only flag) and where it is served.
type Method struct {
	*manifestcheck.Method
	Plugin      string
	Input       protoreflect.MessageType
	Output      protoreflect.MessageType
	primaryOnly bool
	invoker     Invoker
}

// Table is one immutable generation of routes.
type Table struct {
	sources  []Source
	methods  map[string]*Method
	services []server.Service
	files    Files
	guard    Guard
	reads    Reads
	rates    *UserRates
}

// Build makes a route table from sources, each checked by
// internal/plugin/manifestcheck when it was loaded. It fails when two
// sources serve one service or bind one Graph node.
func Build(sources []Source, guard Guard) (*Table, error) {
	t := &Table{sources: sources, methods: map[string]*Method{}, guard: guard}
	checked := make([]*manifestcheck.Plugin, 0, len(sources))
	for _, src := range sources {
		checked = append(checked, src.Plugin)
	}
	if err := manifestcheck.Together(checked); err != nil {
		return nil, err
	}
	for _, src := range sources {
		p := src.Plugin
		t.files = append(t.files, p.Files)
		types := dynamicTypes(p.Files)
		for _, sd := range p.Services {
			t.services = append(t.services, t.service(src, sd, p.Methods, types))
		}
	}
	return t, nil
}

func (t *Table) service(src Source, sd protoreflect.ServiceDescriptor, checked []*manifestcheck.Method, types *protoregistry.Types) server.Service {
	mux := http.NewServeMux()
	for _, c := range checked {
		if c.Desc.Parent() != sd {
			continue
		}
		m := &Method{
			Method:      c,
			Plugin:      src.Plugin.Name,
			Input:       dynamicpb.NewMessageType(c.Desc.Input()),
			Output:      dynamicpb.NewMessageType(c.Desc.Output()),
			primaryOnly: src.PrimaryOnly,
			invoker:     src.Invoker,
		}
		t.methods[m.Procedure] = m
		mux.Handle(m.Procedure, t.handler(m))
	}
	return server.Service{
		Schema:    sd,
		Handler:   mux,
		Admission: t.admission,
		Options: []vanguard.ServiceOption{
			vanguard.WithTypeResolver(types),
			// Plugins speak protobuf only: JSON and REST callers are transcoded
			// once here, protobuf callers pass through untouched.
			vanguard.WithTargetCodecs(vanguard.CodecProto),
		},
	}
}

// WithReads has the table ask reads, per call, whether a read replica may
// serve a read, and tell it of every call with side effects. Call it before
// the table is in use.
func (t *Table) WithReads(reads Reads) *Table {
	t.reads = reads
	return t
}

// WithUserRates has the table count the calls of methods that declare
// user_rate_per_minute in rates. Call it before the table is in use.
func (t *Table) WithUserRates(rates *UserRates) *Table {
	t.rates = rates
	return t
}

// Sources are the plugins (and in-process services) the table was built
// from, in order.
func (t *Table) Sources() []Source { return t.sources }

// Services are the table's services, for server.SetServices.
func (t *Table) Services() []server.Service { return t.services }

// Files resolves the descriptors of every source, for reflection.
func (t *Table) Files() Files { return t.files }

// Method finds a method by procedure ("/pkg.Service/Method").
func (t *Table) Method(procedure string) (*Method, bool) {
	m, ok := t.methods[procedure]
	return m, ok
}

// Methods lists every method, sorted by procedure.
func (t *Table) Methods() []*Method {
	out := make([]*Method, 0, len(t.methods))
	for _, m := range t.methods {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Procedure < out[j].Procedure })
	return out
}

// Admit is the first step of every call of a method with access rule
// access (nil: a method not known yet, hence not public): a caller without
// a valid credential is refused (401) before the request's body,
// parameters or the method's own rules are looked at (CONTRACT §15). The
// entry points call it before they decode anything: the Graph handler once
// it knows the node, the server before the transcoder decodes a REST
// request's path, query or body (admission), the Connect, gRPC and gRPC-Web
// handlers before reading the body (admitting). It costs a context lookup
// for a caller with a credential.
func (t *Table) Admit(ctx context.Context, access *pluginv1.Access) error {
	return t.guard.Admit(ctx, access)
}

// Call runs one unary call of m with an already decoded request. raw, when
// not nil, is req's wire form and is forwarded as is.
func (t *Table) Call(ctx context.Context, m *Method, req proto.Message, raw []byte) ([]byte, error) {
	return t.CallInto(ctx, m, req, raw, nil)
}

// CallInto is Call reading the answer into answer's capacity when m's
// invoker can (AnswerInvoker): the bytes returned may then alias answer,
// which the caller owns and may reuse once done with them. A nil answer
// is Call.
func (t *Table) CallInto(ctx context.Context, m *Method, req proto.Message, raw, answer []byte) ([]byte, error) {
	ireq, err := t.prepare(ctx, m, req, raw)
	if err != nil {
		return nil, err
	}
	defer t.wrote(m, ireq)
	var res *pluginv1.InvokeResponse
	if ai, ok := m.invoker.(AnswerInvoker); ok && answer != nil {
		res, err = ai.InvokeInto(ctx, ireq, answer)
	} else {
		res, err = m.invoker.Invoke(ctx, ireq)
	}
	if err != nil {
		return nil, err
	}
	if e := res.GetError(); e != nil {
		return nil, wire.ErrorFromProto(e)
	}
	return res.GetResponse(), nil
}

// Stream runs one server-streaming call of m with an already decoded
// request, handing each response message to send in order. raw, when not
// nil, is req's wire form. A refusal by the plugin, before or between
// messages, is returned as the platform's error. A stream lasts as long as
// its client wants, so it is ended when the gateway shuts down (503, code
// 2), for every protocol that streams: the shutdown need not wait for it.
func (t *Table) Stream(ctx context.Context, m *Method, req proto.Message, raw []byte, send func([]byte) error) error {
	si, ok := m.invoker.(StreamInvoker)
	if !ok {
		return apierr.Internal(fmt.Errorf("plugin %s cannot stream", m.Plugin))
	}
	ireq, err := t.prepare(ctx, m, req, raw)
	if err != nil {
		return err
	}
	defer t.wrote(m, ireq)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var shutdown atomic.Bool
	if closing := server.Closing(ctx); closing != nil {
		stop := context.AfterFunc(closing, func() {
			shutdown.Store(true)
			cancel()
		})
		defer stop()
	}
	err = si.InvokeStream(ctx, ireq, func(res *pluginv1.InvokeResponse) error {
		if e := res.GetError(); e != nil {
			return wire.ErrorFromProto(e)
		}
		return send(res.GetResponse())
	})
	if err != nil && shutdown.Load() {
		return apierr.Unavailable("This gateway (shutting down)")
	}
	return err
}

// prepare validates and authorizes a call, counts it against its method's
// per-user rate, and builds the plugin request.
func (t *Table) prepare(ctx context.Context, m *Method, req proto.Message, raw []byte) (*pluginv1.InvokeRequest, error) {
	if err := validate.Check(req); err != nil {
		return nil, err
	}
	grant, err := t.guard.Check(ctx, m.Access, TargetOf(req, m.Access))
	if err != nil {
		return nil, err
	}
	principal := grant.Principal
	if m.UserRatePerMinute > 0 && t.rates != nil && principal.GetUserId() != "" {
		if err := t.rates.Allow(m.Procedure, principal.GetUserId(), m.UserRatePerMinute); err != nil {
			return nil, err
		}
	}
	if raw == nil {
		if raw, err = marshalRequest(req); err != nil {
			return nil, apierr.Internal(err)
		}
	}
	ireq := &pluginv1.InvokeRequest{
		Procedure:  m.Procedure,
		Request:    raw,
		Principal:  principal,
		TraceId:    observe.TraceID(ctx),
		PageAccess: grant.PageAccess,
	}
	if d, ok := ctx.Deadline(); ok {
		ireq.DeadlineUnixNano = d.UnixNano()
	}
	if m.ReadOnly && !m.primaryOnly && t.reads != nil {
		ireq.ReadReplica = t.reads.MayRead(principal)
	}
	return ireq, nil
}

// wrote tells the read router that a call with side effects has ended,
// whatever its outcome (a refused call may still have committed something).
func (t *Table) wrote(m *Method, ireq *pluginv1.InvokeRequest) {
	if !m.ReadOnly && t.reads != nil {
		t.reads.Wrote(ireq.GetPrincipal())
	}
}

// AccessOf is the access rule of a method: its own access option, else its
// service's default_access, else a credential of any kind but the
// operator's (closed by default).
func AccessOf(md protoreflect.MethodDescriptor) *pluginv1.Access { return manifestcheck.AccessOf(md) }

// Target names what a call acts on, for its access rule: the Page of the
// rule's page_field and the app of its app_field, read from the request.
type Target struct {
	PageID string
	AppID  string
}

// TargetOf reads the ids the access rule refers to from the request.
func TargetOf(req proto.Message, access *pluginv1.Access) Target {
	var t Target
	if access.GetPageRole() != pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED || access.GetProduct() != "" {
		t.PageID = stringField(req, access.GetPageField(), "page_id")
	}
	if access.GetAppRole() != pluginv1.AppRole_APP_ROLE_UNSPECIFIED {
		t.AppID = stringField(req, access.GetAppField(), "app_id")
	}
	return t
}

// stringField reads the string field name (or fallback when name is "") of
// msg; "" when there is no such singular string field.
func stringField(req proto.Message, name, fallback string) string {
	if name == "" {
		name = fallback
	}
	msg := req.ProtoReflect()
	fd := msg.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() {
		return ""
	}
	return msg.Get(fd).String()
}

// handler serves one method over Connect, gRPC and gRPC-Web, with the
// request and response kept as bytes.
func (t *Table) handler(m *Method) http.Handler {
	opts := []connect.HandlerOption{connect.WithCodec(rawCodec{}), connect.WithSchema(m.Desc)}
	if m.ReadOnly {
		// Lets Connect clients call it with GET, cacheable.
		opts = append(opts, connect.WithIdempotency(connect.IdempotencyNoSideEffects))
	}
	if m.Desc.IsStreamingServer() {
		return t.admitting(m, connect.NewServerStreamHandler(m.Procedure, func(ctx context.Context, req *connect.Request[rawMessage], stream *connect.ServerStream[rawMessage]) error {
			return t.serveStream(ctx, m, req.Msg.b, stream)
		}, opts...))
	}
	return t.admitting(m, connect.NewUnaryHandler(m.Procedure, func(ctx context.Context, req *connect.Request[rawMessage]) (*connect.Response[rawMessage], error) {
		in := m.Input.New().Interface()
		if err := proto.Unmarshal(req.Msg.b, in); err != nil {
			return nil, apierr.ToConnect(apierr.Invalid("", "The request is not a valid %s message.", m.Desc.Input().FullName()))
		}
		out, err := t.Call(ctx, m, in, req.Msg.b)
		if err != nil {
			return nil, connectError(ctx, err)
		}
		if m.RESTSuccessStatus != 0 {
			server.SetRESTSuccessStatus(ctx, m.RESTSuccessStatus)
		}
		return connect.NewResponse(&rawMessage{b: out}), nil
	}, opts...))
}

// admission is the first step of a REST call of md (server.Service): the
// server runs it before the transcoder decodes the path and query of a
// REST GET, which it does before calling the method's handler (admitting
// then comes too late). nil for a public method.
func (t *Table) admission(md protoreflect.MethodDescriptor) func(ctx context.Context) error {
	access := AccessOf(md)
	if access.GetPublic() {
		return nil
	}
	return func(ctx context.Context) error { return t.Admit(ctx, access) }
}

// admitError writes a refusal in the protocol of the request (Connect,
// gRPC, gRPC-Web; the transcoder turns it into REST's).
var admitError = connect.NewErrorWriter()

// admitting runs Admit for m before next reads anything of the request:
// a Connect, gRPC or gRPC-Web body is decoded only as next reads it, so a
// caller without a credential is refused before a bad body is noticed. A
// REST call was admitted already (admission); here it costs a context
// lookup.
func (t *Table) admitting(m *Method, next http.Handler) http.Handler {
	if m.Access.GetPublic() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := t.Admit(r.Context(), m.Access); err != nil {
			_ = admitError.Write(w, r, apierr.ToConnect(apierr.From(err)))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (t *Table) serveStream(ctx context.Context, m *Method, raw []byte, stream *connect.ServerStream[rawMessage]) error {
	in := m.Input.New().Interface()
	if err := proto.Unmarshal(raw, in); err != nil {
		return apierr.ToConnect(apierr.Invalid("", "The request is not a valid %s message.", m.Desc.Input().FullName()))
	}
	err := t.Stream(ctx, m, in, raw, func(b []byte) error {
		return stream.Send(&rawMessage{b: b})
	})
	return connectError(ctx, err)
}

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

// dynamicTypes registers every message and enum of files, so the transcoder
// can resolve request, response and google.protobuf.Any types. The
// platform's error detail (svc.errors.v1.GraphError) is always there: every
// refusal carries it, and a REST refusal cannot be written without resolving
// it, even for a plugin whose files do not import it.
func dynamicTypes(files *protoregistry.Files) *protoregistry.Types {
	types := new(protoregistry.Types)
	_ = types.RegisterMessage((&errorsv1.GraphError{}).ProtoReflect().Type())
	files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		registerMessages(types, fd.Messages())
		enums := fd.Enums()
		for i := range enums.Len() {
			_ = types.RegisterEnum(dynamicpb.NewEnumType(enums.Get(i)))
		}
		exts := fd.Extensions()
		for i := range exts.Len() {
			_ = types.RegisterExtension(dynamicpb.NewExtensionType(exts.Get(i)))
		}
		return true
	})
	return types
}

func registerMessages(types *protoregistry.Types, msgs protoreflect.MessageDescriptors) {
	for i := range msgs.Len() {
		md := msgs.Get(i)
		_ = types.RegisterMessage(dynamicpb.NewMessageType(md))
		registerMessages(types, md.Messages())
		enums := md.Enums()
		for j := range enums.Len() {
			_ = types.RegisterEnum(dynamicpb.NewEnumType(enums.Get(j)))
		}
	}
}

// Files resolves descriptors across several sources' registries, first
// match wins, falling back to the gateway's own compiled-in files.
type Files []*protoregistry.Files

// FindFileByPath implements protodesc.Resolver.
func (f Files) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	for _, files := range f {
		if fd, err := files.FindFileByPath(path); err == nil {
			return fd, nil
		}
	}
	return protoregistry.GlobalFiles.FindFileByPath(path)
}

// FindDescriptorByName implements protodesc.Resolver.
func (f Files) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	for _, files := range f {
		if d, err := files.FindDescriptorByName(name); err == nil {
			return d, nil
		}
	}
	return protoregistry.GlobalFiles.FindDescriptorByName(name)
}

// Routes lists the bindings of a source's methods as operators read them:
// "GET page/{page_id}/posts" for Graph nodes, "POST /svc.x.v1.S/M" for RPC.
func (t *Table) Routes(plugin string) []string {
	var out []string
	for _, m := range t.Methods() {
		if m.Plugin != plugin {
			continue
		}
		out = append(out, m.Routes()...)
	}
	return out
}
