package openapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// ruled is a proto3 message with one field per case, each with its rules.
func ruled(t *testing.T, cases map[string]struct {
	typ      descriptorpb.FieldDescriptorProto_Type
	label    descriptorpb.FieldDescriptorProto_Label
	optional bool
	rules    *validate.FieldRules
}) *descriptorpb.DescriptorProto {
	t.Helper()
	msg := &descriptorpb.DescriptorProto{Name: proto.String("Ruled")}
	n := int32(0)
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		c := cases[name]
		n++
		opts := &descriptorpb.FieldOptions{}
		if c.rules != nil {
			proto.SetExtension(opts, validate.E_Field, c.rules)
		}
		label := c.label
		if label == 0 {
			label = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		}
		fd := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(n), Type: c.typ.Enum(),
			Label: label.Enum(), JsonName: proto.String(name), Options: opts}
		if c.optional {
			fd.Proto3Optional = proto.Bool(true)
			fd.OneofIndex = proto.Int32(int32(len(msg.OneofDecl)))
			msg.OneofDecl = append(msg.OneofDecl, &descriptorpb.OneofDescriptorProto{Name: proto.String("_" + name)})
		}
		msg.Field = append(msg.Field, fd)
	}
	return msg
}

func TestAFieldIsRequiredExactlyWhenProtovalidateRefusesTheRequestWithoutIt(t *testing.T) {
	t.Parallel()
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING
	i32 := descriptorpb.FieldDescriptorProto_TYPE_INT32
	rep := descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	type c = struct {
		typ      descriptorpb.FieldDescriptorProto_Type
		label    descriptorpb.FieldDescriptorProto_Label
		optional bool
		rules    *validate.FieldRules
	}
	s := func(r *validate.StringRules) *validate.FieldRules {
		return &validate.FieldRules{Type: &validate.FieldRules_String_{String_: r}}
	}
	i := func(r *validate.Int32Rules) *validate.FieldRules {
		return &validate.FieldRules{Type: &validate.FieldRules_Int32{Int32: r}}
	}
	cases := map[string]c{
		"required_rule":       {typ: str, rules: &validate.FieldRules{Required: proto.Bool(true)}},
		"min_len_1":           {typ: str, rules: s(&validate.StringRules{MinLen: proto.Uint64(1)})},
		"in_without_empty":    {typ: str, rules: s(&validate.StringRules{In: []string{"a", "b"}})},
		"pattern_not_empty":   {typ: str, rules: s(&validate.StringRules{Pattern: proto.String("^[a-z]+$")})},
		"email":               {typ: str, rules: s(&validate.StringRules{WellKnown: &validate.StringRules_Email{Email: true}})},
		"min_items_1":         {typ: str, label: rep, rules: &validate.FieldRules{Type: &validate.FieldRules_Repeated{Repeated: &validate.RepeatedRules{MinItems: proto.Uint64(1)}}}},
		"gt_0":                {typ: i32, rules: i(&validate.Int32Rules{GreaterThan: &validate.Int32Rules_Gt{Gt: 0}})},
		"gte_1":               {typ: i32, rules: i(&validate.Int32Rules{GreaterThan: &validate.Int32Rules_Gte{Gte: 1}})},
		"no_rules":            {typ: str},
		"max_len_only":        {typ: str, rules: s(&validate.StringRules{MaxLen: proto.Uint64(10)})},
		"in_with_empty":       {typ: str, rules: s(&validate.StringRules{In: []string{"", "a"}})},
		"pattern_allows_none": {typ: str, rules: s(&validate.StringRules{Pattern: proto.String("^[a-z]*$")})},
		"gte_0_lte_100":       {typ: i32, rules: i(&validate.Int32Rules{GreaterThan: &validate.Int32Rules_Gte{Gte: 0}, LessThan: &validate.Int32Rules_Lte{Lte: 100}})},
		"max_items_only":      {typ: str, label: rep, rules: &validate.FieldRules{Type: &validate.FieldRules_Repeated{Repeated: &validate.RepeatedRules{MaxItems: proto.Uint64(3)}}}},
		"optional_min_len":    {typ: str, optional: true, rules: s(&validate.StringRules{MinLen: proto.Uint64(1)})},
		"ignored_if_zero":     {typ: str, rules: &validate.FieldRules{Ignore: validate.Ignore_IGNORE_IF_ZERO_VALUE.Enum(), Type: &validate.FieldRules_String_{String_: &validate.StringRules{MinLen: proto.Uint64(1)}}}},
	}
	file := &descriptorpb.FileDescriptorProto{Name: proto.String("ruled.proto"), Package: proto.String("ruled"), Syntax: proto.String("proto3"),
		Dependency: []string{"buf/validate/validate.proto"}, MessageType: []*descriptorpb.DescriptorProto{ruled(t, cases)}}
	fd, err := protodesc.NewFile(file, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	msg := fd.Messages().Get(0)
	for name := range cases {
		want := !slices.Contains([]string{"no_rules", "max_len_only", "in_with_empty", "pattern_allows_none",
			"gte_0_lte_100", "max_items_only", "optional_min_len", "ignored_if_zero"}, name)
		if got := required(msg.Fields().ByName(protoreflect.Name(name))); got != want {
			t.Errorf("%s: required %v, want %v", name, got, want)
		}
	}
}

func TestEveryGraphNodeListsItsParametersBodyAndAnswer(t *testing.T) {
	t.Parallel()
	doc := Build(Info{Title: "svc", Version: "test"}, table(t), nil)
	byKey := map[string]Node{}
	for _, n := range doc.Nodes {
		byKey[n.Method+" "+n.Node] = n
		if n.Response == nil {
			t.Errorf("%s %s has no response schema", n.Method, n.Node)
		}
		if n.Method == "POST" && (n.RequestBody == nil || n.RequestBody.Properties["node"] == nil || !n.RequestBody.Closed) {
			t.Errorf("%s %s has no closed request body with its node", n.Method, n.Node)
		}
	}
	// Bodies list their fields by proto name, required from the rules;
	// the node's own variables are not in them.
	post := byKey["POST page/{page_id}/posts"].RequestBody
	if post == nil || post.Properties["content"] == nil || post.Properties["page_id"] != nil ||
		strings.Join(post.Required, ",") != "content" {
		t.Fatalf("POST page/{page_id}/posts body: %+v", post)
	}
	subs := byKey["POST app/{app_id}/subscriptions"].RequestBody
	if strings.Join(subs.Required, ",") != "callback_url,events,verify_token" {
		t.Fatalf("POST app/{app_id}/subscriptions requires %v", subs.Required)
	}
	// A read's parameters are the request's other fields.
	var params []string
	for _, p := range byKey["GET page/{page_id}/posts"].Parameters {
		params = append(params, p.Name)
	}
	if strings.Join(params, ",") != "limit,after,before" {
		t.Fatalf("GET page/{page_id}/posts parameters: %v", params)
	}
	// The Graph endpoint's operations take any node's parameters and body.
	spec := load(t, doc)
	get := spec.Paths.Find("/api/v1/graph").Get
	if get.Parameters.GetByInAndName("query", "limit") == nil {
		t.Fatal("GET /api/v1/graph does not take limit")
	}
	if n := len(spec.Paths.Find("/api/v1/graph").Post.RequestBody.Value.Content["application/json"].Schema.Value.AnyOf); n < 10 {
		t.Fatalf("the Graph POST body is any of %d bodies", n)
	}
	// A Graph list answer as the Graph writes it validates against the
	// node's response schema: proto names, the Graph's paging.
	list := byKey["GET page/{page_id}/posts"].Response
	answer := `{"data":[{"id":"1","page_id":"2","content":"hi","audience":"everyone","created_time":"2024-01-01T00:00:00Z"}],
		"paging":{"cursors":{"before":"a","after":"b"},"next":"http://localhost/api/v1/graph?node=page/2/posts&after=b"}}`
	if err := schemaOf(t, spec, list).VisitJSON(decodeAny(t, answer)); err != nil {
		t.Fatalf("a Graph list answer does not match its node's schema: %v", err)
	}
	if err := schemaOf(t, spec, list).VisitJSON(decodeAny(t, `{"data":[{"id":1}]}`)); err == nil {
		t.Fatal("an answer without paging and a numeric id matched")
	}
}

// schemaOf resolves a schema of the document (a $ref or inline) in spec.
func schemaOf(t *testing.T, spec *openapi3.T, s *Schema) *openapi3.Schema {
	t.Helper()
	if name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/"); ok {
		return spec.Components.Schemas[name].Value
	}
	t.Fatalf("not a component reference: %+v", s)
	return nil
}

func decodeAny(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTheDocumentDescribesChatCompletionsModelsOAuthAndTheMobileSession(t *testing.T) {
	t.Parallel()
	spec := load(t, Build(Info{Title: "svc", Version: "test"}, table(t), compiled))
	for _, want := range []string{"POST /v1/chat/completions", "GET /v1/models", "GET /oauth/authorize", "POST /oauth/authorize",
		"POST /api/oauth/token", "POST /api/oauth/introspect", "POST /api/oauth/revoke", "GET /api/oauth/userinfo",
		"GET /oauth/jwks", "GET /.well-known/openid-configuration", "GET /.well-known/oauth-authorization-server",
		"POST /api/mobile/auth/session", "GET /api/mobile/auth/session", "DELETE /api/mobile/auth/session", "POST /api/developers/explorer/token",
		"GET /healthz", "GET /readyz"} {
		method, path, _ := strings.Cut(want, " ")
		if item := spec.Paths.Find(path); item == nil || item.GetOperation(method) == nil {
			t.Errorf("%s is missing", want)
		}
	}
	// OpenAI's request: the fields the gateway reads, the rest passed through.
	req := spec.Components.Schemas["openai.ChatCompletionRequest"].Value
	if strings.Join(req.Required, ",") != "model,messages" || req.AdditionalProperties.Has == nil || !*req.AdditionalProperties.Has {
		t.Fatalf("chat completion request: required %v, additionalProperties %+v", req.Required, req.AdditionalProperties)
	}
	for _, body := range []string{
		`{"model":"svc-builtin","messages":[{"role":"user","content":"hi"}],"temperature":0.5,"future_field":1}`,
		`{"model":"agent","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required"}`,
	} {
		if err := req.VisitJSON(decodeAny(t, body)); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
	if err := req.VisitJSON(decodeAny(t, `{"messages":[{"role":"user","content":"hi"}],"temperature":3}`)); err == nil {
		t.Error("a request without model and with temperature 3 matched")
	}
	// The token endpoint's form: one schema per grant.
	token := spec.Components.Schemas["oauth.TokenRequest"].Value
	if len(token.OneOf) != 3 {
		t.Fatalf("token request grants: %d", len(token.OneOf))
	}
	if err := token.VisitJSON(map[string]any{"grant_type": "refresh_token"}); err == nil {
		t.Error("a refresh_token grant without its refresh_token matched")
	}
	if err := token.VisitJSON(map[string]any{"grant_type": "client_credentials", "scope": "pages:read"}); err != nil {
		t.Error(err)
	}
}
