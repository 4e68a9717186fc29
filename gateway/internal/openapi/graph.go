package openapi

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/svcplatform/svc/gateway/internal/graph"
	"github.com/svcplatform/svc/gateway/internal/route"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
)

// style is how a message is written: REST and Connect use protojson's JSON
// names (lowerCamelCase), the Graph the proto names (snake_case) and its own
// paging object.
type style int

const (
	rest style = iota
	graphStyle
)

func (st style) name(fd protoreflect.FieldDescriptor) string {
	if st == graphStyle {
		return string(fd.Name())
	}
	return fd.JSONName()
}

// Node is one Graph binding, listed under the Graph endpoint with what it
// takes and answers.
type Node struct {
	Method    string          `json:"method"`
	Node      string          `json:"node"`
	Plugin    string          `json:"plugin"`
	Procedure string          `json:"procedure"`
	Access    json.RawMessage `json:"access,omitempty"`
	// Summary is the method's leading comment.
	Summary string `json:"summary,omitempty"`
	// Parameters are the query parameters of a read or delete: the
	// request's fields the node path does not give.
	Parameters []Parameter `json:"parameters,omitempty"`
	// RequestBody is a write's body: the request's fields the node path
	// does not give, with the node itself optional (it may be in the
	// query); no other key is accepted.
	RequestBody *Schema `json:"requestBody,omitempty"`
	// Response is the answer's schema (HTTP 200).
	Response *Schema `json:"response"`
	// pattern matches the node path (NodePattern).
	pattern string
}

// graphNodes describes each Graph binding of m.
func (b *builder) graphNodes(m *route.Method) []Node {
	var out []Node
	for _, n := range m.Nodes {
		in := m.Desc.Input()
		bound := map[string]bool{}
		for _, v := range n.Pattern.Vars() {
			if fd := manifestcheck.FieldByName(in, v); fd != nil {
				bound[string(fd.Name())] = true
			}
		}
		node := Node{Method: n.Verb, Node: n.Pattern.String(), Plugin: m.Plugin, Procedure: m.Procedure,
			Access: accessJSON(m.Access), Summary: comments(m.Desc), pattern: NodePattern(n.Pattern.String()),
			Response: b.messageRef(m.Desc.Output(), nil, graphStyle)}
		if n.Verb == "POST" {
			body := b.object(in, bound, graphStyle)
			body.Description = ""
			body.Properties["node"] = &Schema{Type: "string", Pattern: node.pattern,
				Description: "The node, when the query does not name it."}
			body.Closed = true
			node.RequestBody = body
		} else {
			node.Parameters = b.queryParams(in, bound, graphStyle)
		}
		out = append(out, node)
	}
	return out
}

// NodePattern is the regular expression of the node paths a pattern
// matches: "page/{page_id}/posts" → "^/?page/[A-Za-z0-9_.:@-]+/posts/?$"
// (a variable is one segment of manifestcheck's node characters).
func NodePattern(pattern string) string {
	segs := strings.Split(strings.Trim(pattern, "/"), "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = `[A-Za-z0-9_.:@-]+`
		} else {
			segs[i] = regexp.QuoteMeta(s)
		}
	}
	return "^/?" + strings.Join(segs, "/") + "/?$"
}

// isList reports whether md follows the Graph's list convention: data and
// a svc.plugin.v1.Paging, which the Graph answers as graph.Paging.
func isList(md protoreflect.MessageDescriptor) bool {
	data, paging := md.Fields().ByName("data"), md.Fields().ByName("paging")
	return data != nil && data.IsList() && data.Message() != nil &&
		paging != nil && paging.Message() != nil && paging.Message().FullName() == "svc.plugin.v1.Paging"
}

// sameInGraph reports whether msg's Graph schema is its REST one: every
// field's proto name is its JSON name, no singular message field (null in
// the Graph when unset) and no list answer is inside.
func (b *builder) sameInGraph(msg protoreflect.MessageDescriptor) bool {
	if same, ok := b.graphNames[msg.FullName()]; ok {
		return same
	}
	b.graphNames[msg.FullName()] = true // a cycle does not decide
	same := !isList(msg)
	fields := msg.Fields()
	for i := 0; same && i < fields.Len(); i++ {
		fd := fields.Get(i)
		if string(fd.Name()) != fd.JSONName() || (fd.Message() != nil && !fd.IsList() && !fd.IsMap()) {
			// Renamed, or a message field the Graph writes as null when unset.
			same = false
		}
		if fd.IsMap() {
			fd = fd.MapValue()
		}
		if fd.Message() != nil && wellKnown(fd.Message()) == nil && !b.sameInGraph(fd.Message()) {
			same = false
		}
	}
	b.graphNames[msg.FullName()] = same
	return same
}

// graphList is a list answer as the Graph writes it: data, the Graph's
// paging, and the message's other fields.
func (b *builder) graphList(msg protoreflect.MessageDescriptor) *Schema {
	s := &Schema{Type: "object", Description: comments(msg), Properties: map[string]*Schema{}, Required: []string{"data", "paging"}}
	fields := msg.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Name() == "paging" {
			s.Properties["paging"] = ref(b.graphPaging())
			continue
		}
		s.Properties[string(fd.Name())] = b.fieldSchema(fd, graphStyle)
	}
	return s
}

// graphPaging is the Graph's paging object (CONTRACT §2).
func (b *builder) graphPaging() string {
	const name = "graph.Paging"
	if _, done := b.doc.Components.Schemas[name]; !done {
		b.doc.Components.Schemas[name] = &Schema{Type: "object", Required: []string{"cursors"},
			Description: "Cursor paging of a Graph list (CONTRACT §2): next and previous are absolute URLs, absent at the ends.",
			Properties: map[string]*Schema{
				"cursors": {Type: "object", Required: []string{"before", "after"}, Properties: map[string]*Schema{
					"before": {Type: "string"}, "after": {Type: "string"}}},
				"next":     {Type: "string", Format: "uri"},
				"previous": {Type: "string", Format: "uri"},
			}}
	}
	return name
}

// graph describes the Graph endpoint with the nodes of the table: each
// method's node parameter matches its nodes, its parameters are theirs,
// its body and answer are any of theirs (anyOf), and x-svc-nodes tells
// which node takes and answers what.
func (b *builder) graph(nodes []Node) {
	sort.Slice(nodes, func(i, j int) bool {
		if nodes[i].Node != nodes[j].Node {
			return nodes[i].Node < nodes[j].Node
		}
		return nodes[i].Method < nodes[j].Method
	})
	var list strings.Builder
	for _, n := range nodes {
		fmt.Fprintf(&list, "\n- `%s %s` (%s)", n.Method, n.Node, n.Plugin)
	}
	desc := "The Graph endpoint (CONTRACT §2): the node parameter names the object or edge; the other parameters and the body are the node's fields (snake_case). The nodes served now are listed below and in x-svc-nodes, each with its parameters, body and answer; the answer of a read with `fields` holds the selected fields and expanded edges." + list.String()
	byVerb := map[string][]Node{}
	for _, n := range nodes {
		byVerb[n.Method] = append(byVerb[n.Method], n)
	}
	errors := &Response{Ref: "#/components/responses/Error"}
	item := PathItem{}
	for _, verb := range []string{"GET", "POST", "DELETE"} {
		ns := byVerb[verb]
		var patterns []string
		var answers []*Schema
		seen := map[string]bool{}
		for _, n := range ns {
			patterns = append(patterns, strings.TrimSuffix(strings.TrimPrefix(n.pattern, "^"), "$"))
			key, _ := json.Marshal(n.Response)
			if !seen[string(key)] {
				seen[string(key)] = true
				answers = append(answers, n.Response)
			}
		}
		nodeSchema := &Schema{Type: "string", Description: "The node path, e.g. page/{page_id}/posts."}
		if len(patterns) > 0 {
			nodeSchema.Pattern = "^(?:" + strings.Join(patterns, "|") + ")$"
		}
		// The Graph also takes the credential as the access_token
		// parameter (CONTRACT §20).
		op := &Operation{OperationID: "graph." + strings.ToLower(verb), Description: desc, Tags: []string{"graph"},
			Responses: map[string]*Response{"default": errors},
			Security:  &[]map[string][]string{{"bearer": {}}, {"access_token": {}}}}
		answer := &Schema{AnyOf: answers}
		switch verb {
		case "GET":
			op.Summary = "Read a Graph node"
			op.Parameters = append([]Parameter{{Name: "node", In: "query", Required: true, Schema: nodeSchema},
				{Name: "fields", In: "query", Schema: &Schema{Type: "string"},
					Description: "The fields to answer and edges to expand: id,name,posts.limit(5){id,content}."}},
				mergeParams(ns)...)
		case "DELETE":
			op.Summary = "Delete a Graph node"
			op.Parameters = append([]Parameter{{Name: "node", In: "query", Required: true, Schema: nodeSchema}}, mergeParams(ns)...)
		case "POST":
			op.Summary = "Write to a Graph node, or run a batch"
			op.Parameters = []Parameter{
				{Name: "node", In: "query", Schema: nodeSchema, Description: "The node path, unless the body names it."},
				{Name: "Idempotency-Key", In: "header", Schema: &Schema{Type: "string", MaxLength: ptr(uint64(255))},
					Description: "Replays the first answer for a repeated write."}}
			var bodies []*Schema
			for _, n := range ns {
				bodies = append(bodies, n.RequestBody)
			}
			bodies = append(bodies, ref(b.graphBatch()))
			op.RequestBody = &RequestBody{Required: true, Content: map[string]MediaType{
				"application/json": {Schema: &Schema{AnyOf: bodies}},
				"application/x-www-form-urlencoded": {Schema: &Schema{Type: "object",
					Description:          "The fields of the JSON body as form fields; nested values (objects, lists) as JSON text.",
					Properties:           map[string]*Schema{"node": {Type: "string"}},
					AdditionalProperties: &Schema{Type: "string"}}},
			}}
			answer.AnyOf = append(answer.AnyOf, &Schema{Type: "array", Items: ref(b.graphBatchResult()),
				Description: "A batch's answers, in request order."})
		}
		if len(answer.AnyOf) == 0 {
			answer = &Schema{Type: "object"}
		}
		op.Responses["200"] = &Response{Description: "The node's answer: its x-svc-nodes entry's response.",
			Content: map[string]MediaType{"application/json": {Schema: answer}}}
		item[strings.ToLower(verb)] = op
	}
	b.doc.Paths[graph.Path] = item
	b.doc.Nodes = nodes
	if b.doc.Nodes == nil {
		b.doc.Nodes = []Node{}
	}
}

// mergeParams is every query parameter of nodes, once by name: optional
// (each node takes its own), with the nodes that take it in the
// description, and a string when nodes disagree on its type.
func mergeParams(nodes []Node) []Parameter {
	byName := map[string]*Parameter{}
	takers := map[string][]string{}
	var names []string
	for _, n := range nodes {
		for _, p := range n.Parameters {
			if prev, ok := byName[p.Name]; ok {
				a, _ := json.Marshal(prev.Schema)
				c, _ := json.Marshal(p.Schema)
				if string(a) != string(c) {
					prev.Schema = &Schema{Type: "string"}
					prev.Explode = nil
				}
			} else {
				cp := p
				cp.Required, cp.Description = false, ""
				byName[p.Name] = &cp
				names = append(names, p.Name)
			}
			takers[p.Name] = append(takers[p.Name], n.Node)
		}
	}
	sort.Strings(names)
	out := make([]Parameter, 0, len(names))
	for _, name := range names {
		p := byName[name]
		p.Description = "Taken by " + strings.Join(takers[name], ", ") + "."
		out = append(out, *p)
	}
	return out
}

// graphBatch is a batch request (CONTRACT §2).
func (b *builder) graphBatch() string {
	const name = "graph.BatchRequest"
	if _, done := b.doc.Components.Schemas[name]; !done {
		b.doc.Components.Schemas[name] = &Schema{Type: "object", Required: []string{"batch"}, Closed: true,
			Description: "A batch: up to 50 Graph calls, answered in order; a later item may refer to an earlier named one's result as {result=<name>:$.id}.",
			Properties: map[string]*Schema{"batch": {Type: "array", MinItems: ptr(uint64(1)), MaxItems: ptr(uint64(graph.MaxBatch)),
				Items: &Schema{Type: "object", Required: []string{"method", "relative_url"}, Properties: map[string]*Schema{
					"method":       {Type: "string", Enum: []string{"GET", "POST", "DELETE"}},
					"relative_url": {Type: "string", MinLength: ptr(uint64(1)), Description: "The node and query, e.g. page/1/posts?limit=2."},
					"body":         {Type: "object", AdditionalProperties: &Schema{}},
					"name":         {Type: "string"},
				}}}}}
	}
	return name
}

// graphBatchResult is one answer of a batch.
func (b *builder) graphBatchResult() string {
	const name = "graph.BatchResult"
	if _, done := b.doc.Components.Schemas[name]; !done {
		b.doc.Components.Schemas[name] = &Schema{Type: "object", Required: []string{"code", "body"}, Nullable: true,
			Properties: map[string]*Schema{
				"code": {Type: "integer", Description: "The item's HTTP status."},
				"body": {Type: "string", Description: "The item's answer, as JSON text."},
			}}
	}
	return name
}
