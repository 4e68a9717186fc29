package route

import (
	"context"
	"sort"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	errorsv1 "github.com/svcplatform/svc/gen/svc/errors/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
)

// Invoker runs one unary call of a plugin. A Source carries the one that
// serves its methods; route only holds it, for the dispatcher to call.
type Invoker interface {
	Invoke(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error)
}

// AnswerInvoker is an Invoker that can read a call's answer into a buffer
// its caller owns, sparing a copy (a plugin's fast lane). InvokeInto keeps
// nothing of req once it returns: the caller reuses it.
type AnswerInvoker interface {
	InvokeInto(ctx context.Context, req *pluginv1.InvokeRequest, answer []byte) (*pluginv1.InvokeResponse, error)
}

// StreamInvoker runs one server-streaming call, handing each response to
// send. Invokers that serve streaming methods implement it.
type StreamInvoker interface {
	InvokeStream(ctx context.Context, req *pluginv1.InvokeRequest, send func(*pluginv1.InvokeResponse) error) error
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
	Plugin string
	Input  protoreflect.MessageType
	Output protoreflect.MessageType
	// PrimaryOnly: the method's source never reads a replica.
	PrimaryOnly bool
	// Invoker serves the method (its source's).
	Invoker Invoker
}

// Service is one proto service of a table: its schema, the types its
// messages resolve to (for transcoding), and its methods.
type Service struct {
	Desc    protoreflect.ServiceDescriptor
	Types   *protoregistry.Types
	Methods []*Method
}

// Table is one immutable generation of routes.
type Table struct {
	sources  []Source
	methods  map[string]*Method
	services []Service
	files    Files
	// paths are the methods bound to plain HTTP paths (edge option
	// http_path), by verb and path; declaring are the methods declaring
	// any edge option, by procedure. prefixes are the paths bound as
	// prefixes ("/posts/"), looked up when no exact path matches.
	paths     map[httpPath]*Method
	prefixes  map[httpPath]*Method
	declaring []*Method
}

// httpPath is a plain HTTP path and its verb, a key that costs no
// allocation to look up.
type httpPath struct{ verb, path string }

// Build makes a route table from sources, each checked by
// internal/plugin/manifestcheck when it was loaded. It fails when two
// sources serve one service or bind one Graph node.
func Build(sources []Source) (*Table, error) {
	t := &Table{sources: sources, methods: map[string]*Method{}, paths: map[httpPath]*Method{}, prefixes: map[httpPath]*Method{}}
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
	for _, m := range t.Methods() {
		if e := m.Edge; e != nil {
			t.declaring = append(t.declaring, m)
			switch {
			case e.Prefix:
				t.prefixes[httpPath{e.Verb, e.Path}] = m
			case e.Path != "":
				t.paths[httpPath{e.Verb, e.Path}] = m
			}
		}
	}
	return t, nil
}

// HTTPPath finds the method bound to the plain HTTP path verb ("GET",
// "POST") and path by its edge option http_path: the exact path, else the
// prefix binding the path without its last segment (never an empty one).
func (t *Table) HTTPPath(verb, path string) (*Method, bool) {
	if m, ok := t.paths[httpPath{verb, path}]; ok {
		return m, true
	}
	i := strings.LastIndexByte(path, '/')
	if i <= 0 || i == len(path)-1 || len(t.prefixes) == 0 {
		return nil, false
	}
	m, ok := t.prefixes[httpPath{verb, path[:i+1]}]
	return m, ok
}

// Declaring lists the methods whose edge options f accepts, sorted by
// procedure.
func (t *Table) Declaring(f func(*manifestcheck.Edge) bool) []*Method {
	var out []*Method
	for _, m := range t.declaring {
		if f(m.Edge) {
			out = append(out, m)
		}
	}
	return out
}

func (t *Table) service(src Source, sd protoreflect.ServiceDescriptor, checked []*manifestcheck.Method, types *protoregistry.Types) Service {
	svc := Service{Desc: sd, Types: types}
	for _, c := range checked {
		if c.Desc.Parent() != sd {
			continue
		}
		m := &Method{
			Method:      c,
			Plugin:      src.Plugin.Name,
			Input:       dynamicpb.NewMessageType(c.Desc.Input()),
			Output:      dynamicpb.NewMessageType(c.Desc.Output()),
			PrimaryOnly: src.PrimaryOnly,
			Invoker:     src.Invoker,
		}
		t.methods[m.Procedure] = m
		svc.Methods = append(svc.Methods, m)
	}
	return svc
}

// Sources are the plugins (and in-process services) the table was built
// from, in order.
func (t *Table) Sources() []Source { return t.sources }

// Services are the table's services, in the order of their sources.
func (t *Table) Services() []Service { return t.services }

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

// AccessOf is the access rule of a method: its own access option, else its
// service's default_access, else a credential of any kind but the
// operator's (closed by default).
func AccessOf(md protoreflect.MethodDescriptor) *pluginv1.Access { return manifestcheck.AccessOf(md) }

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
