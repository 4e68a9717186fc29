package openapi

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/svcplatform/svc/gateway/internal/route"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Compiled is a Connect service compiled into the gateway (outside the
// route table), described with how it is reached.
type Compiled struct {
	Service protoreflect.ServiceDescriptor
	// Public: callable with no credential. Otherwise a bearer credential
	// is required (the admin service takes the admin token).
	Public bool
	// Access describes who may call it, in words, for the reference.
	Access string
}

// Info names the document.
type Info struct {
	Title, Version, ServerURL string
}

// Build makes the document for a route table and the compiled services.
// t may be nil (no table yet).
func Build(info Info, t *route.Table, compiled []Compiled) *Document {
	b := &builder{graphNames: map[protoreflect.FullName]bool{}, doc: &Document{
		OpenAPI: "3.0.3",
		Info: DocInfo{Title: info.Title, Version: info.Version,
			Description: "Generated from the protobuf descriptors of the services this installation serves now: the gateway's own and every loaded plugin's. Errors use the envelope of components/schemas/Error (CONTRACT §3)."},
		Paths:    map[string]PathItem{},
		Security: []map[string][]string{{"bearer": {}}},
		Components: Components{
			Schemas: map[string]*Schema{"Error": errorSchema()},
			Responses: map[string]*Response{"Error": {
				Description: "A refusal or failure, in the platform's error envelope.",
				Content:     map[string]MediaType{"application/json": {Schema: ref("Error")}},
			}},
			SecuritySchemes: map[string]*SecurityScheme{"bearer": {Type: "http", Scheme: "bearer",
				Description: "An access token, app key, system user token, session or the operator's admin token, as the operation's x-svc-access says."},
				"access_token": {Type: "apiKey", In: "query", Name: "access_token",
					Description: "On the Graph only (Meta's habit): the bearer credential as the access_token parameter, in the query or a form-encoded body, in place of the Authorization header; both with different tokens are refused."}},
		},
	}}
	if info.ServerURL != "" {
		b.doc.Servers = []Server{{URL: info.ServerURL}}
	}
	b.handwritten()
	for _, c := range compiled {
		methods := c.Service.Methods()
		for i := range methods.Len() {
			b.method(methods.Get(i), "gateway", "", c.Public, c.Access, nil)
		}
	}
	var nodes []Node
	if t != nil {
		for _, m := range t.Methods() {
			access := m.Access
			b.method(m.Desc, m.Plugin, m.Procedure, access.GetPublic(), "", access)
			nodes = append(nodes, b.graphNodes(m)...)
		}
	}
	b.graph(nodes)
	return b.doc
}

type builder struct {
	doc *Document
	// graphNames: whether a message's Graph schema (proto field names,
	// Graph paging) is its REST schema, by message.
	graphNames map[protoreflect.FullName]bool
}

// binding is one google.api.http rule, flattened.
type binding struct {
	method, path, body, responseBody string
}

func bindings(md protoreflect.MethodDescriptor) []binding {
	rule, _ := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
	if rule == nil {
		return nil
	}
	var out []binding
	add := func(r *annotations.HttpRule) {
		b := binding{body: r.GetBody(), responseBody: r.GetResponseBody()}
		switch {
		case r.GetGet() != "":
			b.method, b.path = "get", r.GetGet()
		case r.GetPost() != "":
			b.method, b.path = "post", r.GetPost()
		case r.GetPut() != "":
			b.method, b.path = "put", r.GetPut()
		case r.GetPatch() != "":
			b.method, b.path = "patch", r.GetPatch()
		case r.GetDelete() != "":
			b.method, b.path = "delete", r.GetDelete()
		case r.GetCustom() != nil:
			b.method, b.path = strings.ToLower(r.GetCustom().GetKind()), r.GetCustom().GetPath()
		default:
			return
		}
		out = append(out, b)
	}
	add(rule)
	for _, extra := range rule.GetAdditionalBindings() {
		add(extra)
	}
	return out
}

// PathTemplate turns a google.api.http template into an OpenAPI path and
// the field paths of its variables: "/v1/{name=pages/*}" → "/v1/{name}",
// ["name"].
func PathTemplate(tmpl string) (string, []string) {
	var out strings.Builder
	var vars []string
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			out.WriteString(tmpl)
			return out.String(), vars
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			out.WriteString(tmpl)
			return out.String(), vars
		}
		v := tmpl[i+1 : i+j]
		if k := strings.IndexByte(v, '='); k >= 0 {
			v = v[:k]
		}
		vars = append(vars, v)
		out.WriteString(tmpl[:i] + "{" + v + "}")
		tmpl = tmpl[i+j+1:]
	}
}

func (b *builder) method(md protoreflect.MethodDescriptor, plugin, procedure string, public bool, accessText string, access *pluginv1.Access) {
	if procedure == "" {
		procedure = "/" + string(md.Parent().FullName()) + "/" + string(md.Name())
	}
	status := 200
	if s, _ := proto.GetExtension(md.Options(), pluginv1.E_RestSuccessStatus).(int32); s != 0 {
		status = int(s)
	}
	for n, bd := range bindings(md) {
		path, vars := PathTemplate(bd.path)
		op := &Operation{
			OperationID: strings.ReplaceAll(strings.TrimPrefix(procedure, "/"), "/", "."),
			Summary:     string(md.Name()),
			Description: comments(md),
			Tags:        []string{plugin},
			Responses:   map[string]*Response{},
			Plugin:      plugin,
			Procedure:   procedure,
			Access:      accessJSON(access),
		}
		if n > 0 {
			op.OperationID += fmt.Sprintf(".%d", n)
		}
		if accessText != "" {
			op.Description = strings.TrimSpace(op.Description + "\n\nWho may call: " + accessText)
		}
		if public {
			// A credential is optional: a good one is passed on.
			op.Security = &[]map[string][]string{{}, {"bearer": {}}}
		}
		if md.IsStreamingServer() {
			op.Streaming = true
		}
		in := md.Input()
		bound := map[string]bool{}
		for _, v := range vars {
			bound[v] = true
			op.Parameters = append(op.Parameters, Parameter{Name: v, In: "path", Required: true,
				Schema: b.fieldPathSchema(in, v, rest)})
		}
		switch bd.body {
		case "":
			op.Parameters = append(op.Parameters, b.queryParams(in, bound, rest)...)
		case "*":
			op.RequestBody = &RequestBody{Required: true, Content: map[string]MediaType{
				"application/json": {Schema: b.messageRef(in, bound, rest)}}}
		default:
			if fd := in.Fields().ByName(protoreflect.Name(bd.body)); fd != nil {
				op.RequestBody = &RequestBody{Required: true, Content: map[string]MediaType{
					"application/json": {Schema: b.fieldSchema(fd, rest)}}}
				bound[bd.body] = true
				op.Parameters = append(op.Parameters, b.queryParams(in, bound, rest)...)
			}
		}
		out := b.messageRef(md.Output(), nil, rest)
		if bd.responseBody != "" {
			if fd := md.Output().Fields().ByName(protoreflect.Name(bd.responseBody)); fd != nil {
				out = b.fieldSchema(fd, rest)
			}
		}
		op.Responses[fmt.Sprint(status)] = &Response{Description: "Success.",
			Content: map[string]MediaType{"application/json": {Schema: out}}}
		op.Responses["default"] = &Response{Ref: "#/components/responses/Error"}
		item := b.doc.Paths[path]
		if item == nil {
			item = PathItem{}
			b.doc.Paths[path] = item
		}
		item[bd.method] = op
	}
}

// queryParams are the request's scalar fields (and lists of them) not
// bound to the path or body, by their names in style.
func (b *builder) queryParams(in protoreflect.MessageDescriptor, bound map[string]bool, st style) []Parameter {
	var out []Parameter
	fields := in.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if bound[string(fd.Name())] || fd.IsMap() || fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
			continue
		}
		p := Parameter{Name: st.name(fd), In: "query", Schema: b.fieldSchema(fd, st), Description: comments(fd)}
		if fd.IsList() {
			p.Explode = ptr(true)
		}
		out = append(out, p)
	}
	return out
}

// fieldPathSchema is the schema of a dotted field path of msg, a plain
// string when the path does not resolve.
func (b *builder) fieldPathSchema(msg protoreflect.MessageDescriptor, path string, st style) *Schema {
	parts := strings.Split(path, ".")
	for i, p := range parts {
		fd := msg.Fields().ByName(protoreflect.Name(p))
		if fd == nil {
			break
		}
		if i == len(parts)-1 {
			return b.fieldSchema(fd, st)
		}
		if fd.Message() == nil {
			break
		}
		msg = fd.Message()
	}
	return &Schema{Type: "string"}
}

// messageRef is a reference to msg's component schema; with fields left
// out (the ones bound to the path), an inline object of the others.
func (b *builder) messageRef(msg protoreflect.MessageDescriptor, without map[string]bool, st style) *Schema {
	if s := wellKnown(msg); s != nil {
		return s
	}
	if len(without) == 0 {
		return ref(b.component(msg, st))
	}
	return b.object(msg, without, st)
}

// component adds msg (and what it refers to) to components/schemas in
// style st, and returns its name: the message's full name, prefixed with
// "graph." for a Graph schema that differs from the REST one.
func (b *builder) component(msg protoreflect.MessageDescriptor, st style) string {
	if st == graphStyle && b.sameInGraph(msg) {
		st = rest
	}
	name := string(msg.FullName())
	if st == graphStyle {
		name = "graph." + name
	}
	if _, done := b.doc.Components.Schemas[name]; done {
		return name
	}
	b.doc.Components.Schemas[name] = &Schema{} // placeholder: breaks cycles
	b.doc.Components.Schemas[name] = b.object(msg, nil, st)
	return name
}

func (b *builder) object(msg protoreflect.MessageDescriptor, without map[string]bool, st style) *Schema {
	if st == graphStyle && isList(msg) && len(without) == 0 {
		return b.graphList(msg)
	}
	s := &Schema{Type: "object", Description: comments(msg), Properties: map[string]*Schema{}}
	fields := msg.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if without[string(fd.Name())] {
			continue
		}
		s.Properties[st.name(fd)] = b.fieldSchema(fd, st)
		if required(fd) {
			s.Required = append(s.Required, st.name(fd))
		}
	}
	sort.Strings(s.Required)
	return s
}

// fieldSchema is a field's schema: its type, list or map, and its
// protovalidate rules.
func (b *builder) fieldSchema(fd protoreflect.FieldDescriptor, st style) *Schema {
	if fd.IsMap() {
		return &Schema{Type: "object", AdditionalProperties: b.singular(fd.MapValue(), st), Description: comments(fd)}
	}
	s := b.singular(fd, st)
	if fd.IsList() {
		s = &Schema{Type: "array", Items: s}
	}
	constrain(s, fd)
	if st == graphStyle && !fd.IsList() && fd.Message() != nil {
		// The Graph writes an unset message field as null.
		if s.Ref != "" {
			s = &Schema{AllOf: []*Schema{s}}
		}
		s.Nullable = true
	}
	if d := comments(fd); d != "" {
		if s.Ref != "" {
			// $ref siblings are ignored in 3.0: wrap it.
			s = &Schema{AllOf: []*Schema{s}}
		}
		s.Description = d
	}
	return s
}

func (b *builder) singular(fd protoreflect.FieldDescriptor, st style) *Schema {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return &Schema{Type: "boolean"}
	case protoreflect.StringKind:
		return &Schema{Type: "string"}
	case protoreflect.BytesKind:
		return &Schema{Type: "string", Format: "byte"}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return &Schema{Type: "integer", Format: "int32"}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return &Schema{Type: "integer", Format: "int64", Minimum: ptr(0.0)}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		// protojson writes 64-bit integers as strings.
		return &Schema{Type: "string", Format: "int64"}
	case protoreflect.FloatKind:
		return &Schema{Type: "number", Format: "float"}
	case protoreflect.DoubleKind:
		return &Schema{Type: "number", Format: "double"}
	case protoreflect.EnumKind:
		s := &Schema{Type: "string"}
		vals := fd.Enum().Values()
		for i := range vals.Len() {
			s.Enum = append(s.Enum, string(vals.Get(i).Name()))
		}
		return s
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return b.messageRef(fd.Message(), nil, st)
	}
	return &Schema{}
}

// wellKnown maps the well-known types to their JSON forms.
func wellKnown(msg protoreflect.MessageDescriptor) *Schema {
	switch msg.FullName() {
	case "google.protobuf.Timestamp":
		return &Schema{Type: "string", Format: "date-time"}
	case "google.protobuf.Duration":
		return &Schema{Type: "string", Pattern: `^-?[0-9]+(\.[0-9]+)?s$`}
	case "google.protobuf.FieldMask":
		return &Schema{Type: "string"}
	case "google.protobuf.Struct":
		return &Schema{Type: "object", AdditionalProperties: &Schema{}}
	case "google.protobuf.Value":
		return &Schema{}
	case "google.protobuf.ListValue":
		return &Schema{Type: "array", Items: &Schema{}}
	case "google.protobuf.Empty":
		return &Schema{Type: "object"}
	case "google.protobuf.Any":
		return &Schema{Type: "object", Properties: map[string]*Schema{"@type": {Type: "string"}}, AdditionalProperties: &Schema{}}
	case "google.protobuf.StringValue":
		return &Schema{Type: "string", Nullable: true}
	case "google.protobuf.BytesValue":
		return &Schema{Type: "string", Format: "byte", Nullable: true}
	case "google.protobuf.BoolValue":
		return &Schema{Type: "boolean", Nullable: true}
	case "google.protobuf.Int32Value":
		return &Schema{Type: "integer", Format: "int32", Nullable: true}
	case "google.protobuf.UInt32Value":
		return &Schema{Type: "integer", Format: "int64", Nullable: true}
	case "google.protobuf.Int64Value", "google.protobuf.UInt64Value":
		return &Schema{Type: "string", Format: "int64", Nullable: true}
	case "google.protobuf.FloatValue", "google.protobuf.DoubleValue":
		return &Schema{Type: "number", Nullable: true}
	}
	return nil
}

// comments is a descriptor's leading comment, when the descriptors carry
// source info.
func comments(d protoreflect.Descriptor) string {
	loc := d.ParentFile().SourceLocations().ByDescriptor(d)
	return strings.TrimSpace(loc.LeadingComments)
}

func accessJSON(a *pluginv1.Access) json.RawMessage {
	if a == nil {
		return nil
	}
	b, err := protojson.Marshal(a)
	if err != nil || string(b) == "{}" {
		return nil
	}
	return b
}

func ref(name string) *Schema { return &Schema{Ref: "#/components/schemas/" + name} }

func ptr[T any](v T) *T { return &v }

// errorSchema is the §3 envelope.
func errorSchema() *Schema {
	return &Schema{Type: "object", Required: []string{"error"}, Description: "The platform's error envelope (CONTRACT §3).",
		Properties: map[string]*Schema{"error": {Type: "object", Required: []string{"message", "type", "code"},
			Properties: map[string]*Schema{
				"message":       {Type: "string"},
				"type":          {Type: "string"},
				"code":          {Type: "integer"},
				"error_subcode": {Type: "integer"},
				"fbtrace_id":    {Type: "string"},
				"is_transient":  {Type: "boolean"},
			}}}}
}
