package manifestcheck

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Plugin is a plugin's description as the platform holds it: a manifest
// that follows the rules, its descriptors resolved and its methods with
// their options read. It is made once, where the manifest crosses the wire
// (the gateway's host, when a process describes itself), and every part of
// the gateway reads it; the wire form, svc.plugin.v1.Manifest, goes no
// further. A plugin author's side of it is sdk.Info.
type Plugin struct {
	// Name is the plugin's name: the file name the gateway loaded it from,
	// which the manifest must repeat.
	Name string
	// Version is the plugin's own version, shown to operators.
	Version string
	// Events are the event types the plugin may emit.
	Events   []string
	Files    *protoregistry.Files
	Services []protoreflect.ServiceDescriptor
	// Methods of every service, in the manifest's service order, then in
	// declaration order.
	Methods []*Method
	// Scopes are the OAuth scopes the plugin introduces, declared on its
	// services (the scopes option), in the manifest's service order.
	Scopes []Scope
	// OnUserLeft: the plugin erases a person's data when they leave; the
	// gateway calls its reserved hook (sdk.OnUserLeft) through the host.
	OnUserLeft bool
}

// reservedHooks is the service of the plugins' reserved hooks
// (pluginrt.UserLeftProcedure): no plugin serves it in the route table.
const reservedHooks = "svc.plugin.v1.Hooks"

// Method is one method of a checked manifest.
type Method struct {
	// Procedure is "/<package>.<Service>/<Method>".
	Procedure string
	Desc      protoreflect.MethodDescriptor
	// Access is the method's access rule (AccessOf).
	Access *pluginv1.Access
	// Graph is the method's graph option, nil without one; Nodes are its
	// bindings, compiled.
	Graph *pluginv1.GraphRoute
	Nodes []Node
	// RESTSuccessStatus is the rest_success_status option; 0 means 200.
	RESTSuccessStatus int
	// UserRatePerMinute is the user_rate_per_minute option: calls one user
	// may make per minute; 0 means no limit of the method's own.
	UserRatePerMinute int
	// ReadOnly: idempotency_level NO_SIDE_EFFECTS, so a read replica may
	// serve the method and Connect clients may call it with GET.
	ReadOnly bool
	// Edge is what the method asks of the gateway's edge beyond the Graph
	// and REST (svc/plugin/v1/edge.proto); nil for most methods.
	Edge *Edge
}

// Node is one Graph node binding: an HTTP method and a node pattern.
type Node struct {
	Verb    string
	Pattern *Pattern
}

// String is the binding as operators read it: "GET page/{page_id}/posts".
func (n Node) String() string { return n.Verb + " " + n.Pattern.String() }

// Routes lists the method's bindings as the gateway's admin API does: its
// Graph nodes ("GET hello/{name}"), then "RPC <procedure>".
func (m *Method) Routes() []string {
	out := make([]string, 0, len(m.Nodes)+1)
	for _, n := range m.Nodes {
		out = append(out, n.String())
	}
	return append(out, "RPC "+m.Procedure)
}

// Routes lists the bindings of every method of p, sorted by procedure.
func (p *Plugin) Routes() []string {
	methods := slices.Clone(p.Methods)
	sort.Slice(methods, func(i, j int) bool { return methods[i].Procedure < methods[j].Procedure })
	var out []string
	for _, m := range methods {
		out = append(out, m.Routes()...)
	}
	return out
}

// Check applies the gateway's rules for one plugin's manifest: its
// descriptors resolve and name its services; no method streams from the
// client; rest_success_status is a 2xx status; every Graph node pattern is
// well formed and its variables name singular scalar fields of the request;
// the Graph binds unary methods only; and every access rule can be
// enforced. Every problem found is reported, each naming its method.
func Check(m *pluginv1.Manifest) (*Plugin, error) { return CheckFiles(m, nil) }

// CheckFiles is Check with the manifest's descriptors already resolved
// (the gateway's host resolves a plugin's once, when it starts); nil
// resolves them from the manifest.
func CheckFiles(m *pluginv1.Manifest, files *protoregistry.Files) (*Plugin, error) {
	if files == nil {
		var err error
		if files, err = protodesc.NewFiles(m.GetFiles()); err != nil {
			return nil, fmt.Errorf("descriptors: %w", err)
		}
	}
	p := &Plugin{Name: m.GetName(), Version: m.GetVersion(), Events: m.GetEvents(), Files: files, OnUserLeft: m.GetOnUserLeft()}
	var errs []error
	for _, name := range m.GetServices() {
		if name == reservedHooks {
			errs = append(errs, fmt.Errorf("service %s is reserved: the gateway alone calls it (sdk.OnUserLeft)", name))
			continue
		}
		d, err := files.FindDescriptorByName(protoreflect.FullName(name))
		if err != nil {
			errs = append(errs, fmt.Errorf("service %s: %w", name, err))
			continue
		}
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if !ok {
			errs = append(errs, fmt.Errorf("%s is not a service", name))
			continue
		}
		p.Services = append(p.Services, sd)
		p.Scopes = append(p.Scopes, ServiceScopes(sd)...)
		methods := sd.Methods()
		for i := range methods.Len() {
			cm, err := checkMethod(methods.Get(i))
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", methods.Get(i).FullName(), err))
				continue
			}
			p.Methods = append(p.Methods, cm)
		}
	}
	errs = append(errs, checkScopes(p.Scopes)...)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

func checkMethod(md protoreflect.MethodDescriptor) (*Method, error) {
	m := &Method{
		Procedure: "/" + string(md.Parent().FullName()) + "/" + string(md.Name()),
		Desc:      md,
		Access:    AccessOf(md),
		ReadOnly:  readOnly(md),
	}
	var errs []error
	if md.IsStreamingClient() {
		errs = append(errs, errors.New("client streaming is not supported"))
	}
	status, _ := proto.GetExtension(md.Options(), pluginv1.E_RestSuccessStatus).(int32)
	if status != 0 && (status < 200 || status > 299) {
		errs = append(errs, fmt.Errorf("rest_success_status %d is not a 2xx status", status))
	}
	m.RESTSuccessStatus = int(status)
	rate, _ := proto.GetExtension(md.Options(), pluginv1.E_UserRatePerMinute).(int32)
	if rate < 0 || (rate > 0 && m.Access.GetPublic()) {
		errs = append(errs, fmt.Errorf("user_rate_per_minute %d: want a positive count on a method that is not public (it counts per user)", rate))
	}
	m.UserRatePerMinute = int(rate)
	m.Graph, _ = proto.GetExtension(md.Options(), pluginv1.E_Graph).(*pluginv1.GraphRoute)
	for _, b := range [][2]string{{http.MethodGet, m.Graph.GetGet()}, {http.MethodPost, m.Graph.GetPost()}, {http.MethodDelete, m.Graph.GetDelete()}} {
		if b[1] == "" {
			continue
		}
		if md.IsStreamingServer() {
			errs = append(errs, fmt.Errorf("graph %s %s: the Graph serves unary methods only", b[0], b[1]))
			continue
		}
		pat, err := CompilePattern(b[1])
		if err != nil {
			errs = append(errs, fmt.Errorf("graph %s: %w", b[0], err))
			continue
		}
		for _, v := range pat.Vars() {
			if fd := FieldByName(md.Input(), v); !scalar(fd) {
				errs = append(errs, fmt.Errorf("graph %s %s: {%s} is not a singular scalar field of %s", b[0], b[1], v, md.Input().FullName()))
			}
		}
		m.Nodes = append(m.Nodes, Node{Verb: b[0], Pattern: pat})
	}
	if err := checkAccess(md.Input(), m.Access); err != nil {
		errs = append(errs, err)
	}
	m.Edge, errs = checkEdge(md, errs)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m, nil
}

// checkAccess refuses an access rule the gateway could not enforce as
// written: a public method with other requirements (public waives them
// all), an unspecified token kind, an empty scope, and a Page, app or
// business rule whose field is not a singular string field of the request
// (every call would be refused for want of it).
func checkAccess(in protoreflect.MessageDescriptor, a *pluginv1.Access) error {
	var errs []error
	if a.GetPublic() && (len(a.GetTokenKinds()) > 0 || len(a.GetScopes()) > 0 || len(a.GetAnyScopes()) > 0 || a.GetStaff() ||
		a.GetPageRole() != pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED || a.GetProduct() != "" ||
		a.GetAppRole() != pluginv1.AppRole_APP_ROLE_UNSPECIFIED || a.GetBusinessRole() != pluginv1.BusinessRole_BUSINESS_ROLE_UNSPECIFIED) {
		errs = append(errs, errors.New("access: public takes no other requirement (a public method is open to anyone)"))
	}
	if slices.Contains(a.GetTokenKinds(), pluginv1.TokenKind_TOKEN_KIND_UNSPECIFIED) {
		errs = append(errs, errors.New("access: token_kinds lists TOKEN_KIND_UNSPECIFIED"))
	}
	if slices.Contains(a.GetScopes(), "") {
		errs = append(errs, errors.New("access: scopes lists an empty scope"))
	}
	if slices.Contains(a.GetAnyScopes(), "") {
		errs = append(errs, errors.New("access: any_scopes lists an empty scope"))
	}
	page := a.GetPageRole() != pluginv1.PageRole_PAGE_ROLE_UNSPECIFIED || a.GetProduct() != ""
	if err := targetField(in, "page_field", a.GetPageField(), "page_id", page); err != nil {
		errs = append(errs, err)
	}
	app := a.GetAppRole() != pluginv1.AppRole_APP_ROLE_UNSPECIFIED
	if err := targetField(in, "app_field", a.GetAppField(), "app_id", app); err != nil {
		errs = append(errs, err)
	}
	business := a.GetBusinessRole() != pluginv1.BusinessRole_BUSINESS_ROLE_UNSPECIFIED
	if err := targetField(in, "business_field", a.GetBusinessField(), "business_id", business); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// targetField checks the request field an access rule reads its target
// from: named by option (or fallback when option is unset), it must be a
// singular string field when the rule is used, and the option must not be
// set when it is not.
func targetField(in protoreflect.MessageDescriptor, option, name, fallback string, used bool) error {
	if !used {
		if name != "" {
			return fmt.Errorf("access: %s %q is set, but no rule reads it", option, name)
		}
		return nil
	}
	if name == "" {
		name = fallback
	}
	fd := in.Fields().ByName(protoreflect.Name(name))
	if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() {
		return fmt.Errorf("access: %s %q is not a singular string field of %s", option, name, in.FullName())
	}
	return nil
}

// Together checks plugins that are to serve side by side, as one route
// table: no service is served by two of them, no Graph node (an HTTP
// method and a pattern shape) nor plain HTTP path is bound twice, within a
// plugin or across, no scope is declared by two of them, and every scope
// an access rule names is a core scope or one of them declares it.
func Together(plugins []*Plugin) error {
	services := map[protoreflect.FullName]string{}
	nodes := map[string]string{}
	paths := map[string]string{}
	for _, p := range plugins {
		for _, sd := range p.Services {
			if prev, dup := services[sd.FullName()]; dup {
				return fmt.Errorf("service %s is served by both %s and %s", sd.FullName(), prev, p.Name)
			}
			services[sd.FullName()] = p.Name
		}
		for _, m := range p.Methods {
			for _, n := range m.Nodes {
				key := n.Verb + " " + n.Pattern.Shape()
				if prev, dup := nodes[key]; dup {
					return fmt.Errorf("graph node %s is bound by both %s and %s", n, prev, m.Procedure)
				}
				nodes[key] = m.Procedure
			}
			if h := m.Edge.HTTP(); h != "" {
				if prev, dup := paths[h]; dup {
					return fmt.Errorf("HTTP path %s is bound by both %s and %s", h, prev, m.Procedure)
				}
				paths[h] = m.Procedure
			}
		}
	}
	return togetherScopes(plugins)
}

// AccessOf is the access rule of a method: its own access option, else its
// service's default_access, else a credential of any kind but the
// operator's (closed by default).
func AccessOf(md protoreflect.MethodDescriptor) *pluginv1.Access {
	if a, _ := proto.GetExtension(md.Options(), pluginv1.E_Access).(*pluginv1.Access); a != nil {
		return a
	}
	if sd, ok := md.Parent().(protoreflect.ServiceDescriptor); ok {
		if a, _ := proto.GetExtension(sd.Options(), pluginv1.E_DefaultAccess).(*pluginv1.Access); a != nil {
			return a
		}
	}
	return &pluginv1.Access{}
}

// FieldByName finds a request field by its proto name or its JSON name, as
// the Graph binds node variables and parameters.
func FieldByName(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
	fields := md.Fields()
	if fd := fields.ByName(protoreflect.Name(name)); fd != nil {
		return fd
	}
	return fields.ByJSONName(name)
}

// scalar reports whether fd is a singular field a node segment can set.
func scalar(fd protoreflect.FieldDescriptor) bool {
	return fd != nil && !fd.IsList() && !fd.IsMap() &&
		fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind && fd.Kind() != protoreflect.BytesKind
}

// readOnly reports whether md declares no side effects.
func readOnly(md protoreflect.MethodDescriptor) bool {
	mo, ok := md.Options().(*descriptorpb.MethodOptions)
	return ok && mo.GetIdempotencyLevel() == descriptorpb.MethodOptions_NO_SIDE_EFFECTS
}
