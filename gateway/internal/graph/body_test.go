package graph

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
)

// writeShapes is a proto3 write request with a field of each shape a flat
// body must leave to the general path — a field with presence (proto3
// optional), a oneof member, a JSON name of its own, repeated, message,
// enum, integer and boolean fields — beside plain strings.
var writeShapes = func() protoreflect.MessageDescriptor {
	str, i32, boolean := descriptorpb.FieldDescriptorProto_TYPE_STRING, descriptorpb.FieldDescriptorProto_TYPE_INT32, descriptorpb.FieldDescriptorProto_TYPE_BOOL
	optional, repeated := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL, descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	field := func(num int32, name string, t descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: t.Enum(), Label: label.Enum()}
	}
	fields := []*descriptorpb.FieldDescriptorProto{
		field(1, "page_id", str, optional), field(2, "content", str, optional), field(3, "audience", str, optional),
		field(4, "link_url", str, optional), field(5, "note", str, optional), field(6, "count", i32, optional),
		field(7, "pinned", boolean, optional), field(8, "tags", str, repeated), field(9, "kind", descriptorpb.FieldDescriptorProto_TYPE_ENUM, optional),
		field(10, "child", descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, optional), field(11, "choice_a", str, optional),
		field(12, "choice_b", str, optional),
	}
	fields[3].JsonName = proto.String("url") // a JSON name that is not the camel case of its name
	fields[4].OneofIndex, fields[4].Proto3Optional = proto.Int32(1), proto.Bool(true)
	fields[8].TypeName = proto.String(".graphtest.Kind")
	fields[9].TypeName = proto.String(".graphtest.Write")
	fields[10].OneofIndex, fields[11].OneofIndex = proto.Int32(0), proto.Int32(0)
	file := &descriptorpb.FileDescriptorProto{Name: proto.String("graphtest/write.proto"), Package: proto.String("graphtest"),
		Syntax: proto.String("proto3"),
		EnumType: []*descriptorpb.EnumDescriptorProto{{Name: proto.String("Kind"), Value: []*descriptorpb.EnumValueDescriptorProto{
			{Name: proto.String("KIND_UNSPECIFIED"), Number: proto.Int32(0)}, {Name: proto.String("KIND_NOTE"), Number: proto.Int32(1)}}}},
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Write"), Field: fields,
			OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("choice")}, {Name: proto.String("_note")}}}}}
	fd, err := protodesc.NewFile(file, nil)
	if err != nil {
		panic(err)
	}
	return fd.Messages().Get(0)
}()

// nameClash is a proto3 write request one of whose fields has for JSON
// name another field's name (title's JSON name is name, name's is label):
// protoc and protodesc accept it, the JSON names being distinct.
var nameClash = func() protoreflect.MessageDescriptor {
	field := func(num int32, name, jsonName string) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{Name: proto.String(name), JsonName: proto.String(jsonName), Number: proto.Int32(num),
			Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()}
	}
	file := &descriptorpb.FileDescriptorProto{Name: proto.String("graphtest/clash.proto"), Package: proto.String("graphtest"),
		Syntax: proto.String("proto3"), MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Clash"),
			Field: []*descriptorpb.FieldDescriptorProto{field(1, "title", "name"), field(2, "name", "label"), field(3, "page_id", "pageId")}}}}
	fd, err := protodesc.NewFile(file, nil)
	if err != nil {
		panic(err)
	}
	return fd.Messages().Get(0)
}()

// bound is what binding a write body gave: the node, the request, or the
// refusal.
type bound struct {
	node string
	msg  protoreflect.Message
	err  error
}

// bindGeneral binds raw as the Graph did before flat bodies: decodeObject,
// the node decoded with encoding/json, bindBody.
func bindGeneral(md protoreflect.MessageDescriptor, raw []byte) bound {
	var fields map[string]json.RawMessage
	if err := decodeObject(raw, &fields); err != nil {
		return bound{err: err}
	}
	var node string
	if v, ok := fields["node"]; ok && json.Unmarshal(v, &node) != nil {
		return bound{err: apierr.Invalid("node", "Invalid parameter: node must be a string.")}
	}
	msg := dynamicpb.NewMessage(md)
	if err := bindBody(msg, fields, pageVarsOf("1")); err != nil {
		return bound{err: err}
	}
	return bound{node: node, msg: msg}
}

// bindWrite binds raw as the Graph does: writeBody. flat reports whether
// the flat path bound it.
func bindWrite(md protoreflect.MessageDescriptor, raw []byte) (b bound, flat bool) {
	var body writeBody
	if err := body.parse(raw); err != nil {
		return bound{err: err}, false
	}
	node, err := body.node()
	if err != nil {
		return bound{err: err}, false
	}
	msg := dynamicpb.NewMessage(md)
	flat = body.isFlat && bindFlat(dynamicpb.NewMessage(md), &body.flat, pageVarsOf("1"))
	if err := body.bind(msg, pageVarsOf("1")); err != nil {
		return bound{err: err}, false
	}
	return bound{node: node, msg: msg}, flat
}

// pagePosts is the pattern of page/<id>/posts.
var pagePosts = func() *manifestcheck.Pattern {
	p, err := manifestcheck.CompilePattern("page/{page_id}/posts")
	if err != nil {
		panic(err)
	}
	return p
}()

// pageVarsOf are the variables of the node page/<id>/posts.
func pageVarsOf(id string) manifestcheck.NodeVars {
	vars, _ := pagePosts.Match([]string{"page", id, "posts"})
	return vars
}

// sameBinding says how got differs from want, or "".
func sameBinding(got, want bound) string {
	switch {
	case (got.err == nil) != (want.err == nil):
		return fmt.Sprintf("error %v, want %v", got.err, want.err)
	case want.err != nil:
		g, gok := apierr.As(got.err)
		w, wok := apierr.As(want.err)
		if !gok || !wok || g.HTTPStatus != w.HTTPStatus || g.Code != w.Code || g.Field != w.Field || g.Message != w.Message {
			return fmt.Sprintf("error %#v, want %#v", got.err, want.err)
		}
	case got.node != want.node:
		return fmt.Sprintf("node %q, want %q", got.node, want.node)
	case !proto.Equal(got.msg.Interface(), want.msg.Interface()):
		return fmt.Sprintf("request %v, want %v", got.msg, want.msg)
	}
	return ""
}

// flatBodies are write bodies that take the flat path, with the usual
// write first; flatShapesBodies take it for writeShapes (CreatePostRequest
// has none of their fields); generalBodies are bodies it leaves to the
// general path, valid or not.
var (
	flatBodies = []string{
		`{"content":"Benchmark post 1: ☕ 咖啡 🚀","audience":"everyone"}`,
		"{}", " { } ", "\t{\r\n\"content\" :\n\"x\" }\n",
		`{"node":"page/1/posts","content":"hi","page_id":"1"}`,
		`{"node":null,"content":"a"}`,
		`{"content":"line\nbreak \"quoted\" back\\slash \/ \b\f\r\t é \u00e9 \u20AC \u0000 end"}`,
		`{"content":"","audience":null}`,
		`{"content":"` + strings.Repeat("é", 5000) + `"}`,
	}
	flatShapesBodies = []string{
		`{"content":"x","count":null,"tags":null,"child":null,"note":null}`,
		`{"url":"https://example.com/a"}`, `{"link_url":"https://example.com/a","content":"b"}`,
		`{"note":""}`, `{"note":"n"}`, `{"note":"","content":""}`, // proto3 optional: "" is set
	}
	generalBodies = []string{
		`{"content":"hi","colour":"red"}`,          // unknown field
		`{"content":5}`,                            // wrong type
		`{"content":["a"]}`,                        // wrong type
		`{"audience":{"x":1}}`,                     // wrong type
		`{"page_id":"8","content":"x"}`,            // path variable differs
		`{"page_id":null,"content":"x"}`,           // path variable null
		`{"content":"a","content":"b"}`,            // a key twice
		`{"content":"a","link_url":"b","url":"c"}`, // a field by its name and JSON name
		`{"content":"\ud83d\ude80"}`,               // a surrogate pair
		`{"content":"\ud83d"}`,                     // a lone surrogate
		`{"content":"\x"}`,                         // a bad escape
		"{\"content\":\"a\xffb\"}",                 // invalid UTF-8
		"{\"content\":\"a\x01b\"}",                 // a control character
		`{"co\u006etent":"a"}`,                     // an escaped key
		`{"content":"a",}`, `{"content":"a"} {}`, `{"content":"a"`, `{"content" "a"}`, `{content:"a"}`,
		`[]`, `null`, `"x"`, ``, `{"node":5,"content":"a"}`,
		`{"count":3}`, `{"count":"3"}`, `{"pinned":true}`, `{"kind":"KIND_NOTE"}`, `{"tags":["a","b"]}`,
		`{"choice_a":"a"}`, `{"choice_a":"a","choice_b":"b"}`, // a real oneof's members
		`{"batch":[]}`, `{"batch":"x","content":"y"}`, `{"child":{"content":"x"}}`,
		`{"content":nul}`, `{"content":nullx}`, `{"content":true}`,
		`{"a0":"","a1":"","a2":"","a3":"","a4":"","a5":"","a6":"","a7":"","a8":"","a9":"","b0":"","b1":"","b2":"","b3":"","b4":"","b5":"","b6":""}`,
	}
)

// TestAFlatWriteBodyBindsAsTheGeneralPathDoes: the usual write body, and
// bodies like it, bind without the general path, to the same request; every
// other body, valid or not, gets what the general path gives it, the same
// refusal naming the same field.
func TestAFlatWriteBodyBindsAsTheGeneralPathDoes(t *testing.T) {
	t.Parallel()
	for _, md := range []protoreflect.MessageDescriptor{createPost, writeShapes} {
		for i, body := range append(append([]string{}, flatBodies...), flatShapesBodies...) {
			got, flat := bindWrite(md, []byte(body))
			if diff := sameBinding(got, bindGeneral(md, []byte(body))); diff != "" {
				t.Errorf("%s %.80s: %s", md.Name(), body, diff)
			}
			if !flat && (i < len(flatBodies) || md == writeShapes) {
				t.Errorf("%s %.80s: took the general path", md.Name(), body)
			}
		}
		for _, body := range generalBodies {
			got, flat := bindWrite(md, []byte(body))
			if diff := sameBinding(got, bindGeneral(md, []byte(body))); diff != "" {
				t.Errorf("%s %.80s: %s", md.Name(), body, diff)
			}
			if flat {
				t.Errorf("%s %.80s: bound flat", md.Name(), body)
			}
		}
	}
}

// TestABodyKeyBindsTheFieldItNamesThoughItIsAnotherFieldsJSONName: a key
// is a field's name, else a field's JSON name (manifestcheck.FieldByName),
// and its value goes to that field on both paths, flat or general — not to
// the field whose JSON name the key also is.
func TestABodyKeyBindsTheFieldItNamesThoughItIsAnotherFieldsJSONName(t *testing.T) {
	t.Parallel()
	fields := nameClash.Fields()
	title, name := fields.ByName("title"), fields.ByName("name")
	for _, c := range []struct {
		body string
		want map[protoreflect.FieldDescriptor]string
	}{
		{`{"name":"n"}`, map[protoreflect.FieldDescriptor]string{name: "n"}},
		{`{"label":"l"}`, map[protoreflect.FieldDescriptor]string{name: "l"}},
		{`{"title":"t"}`, map[protoreflect.FieldDescriptor]string{title: "t"}},
		{`{"name":"n","title":"t"}`, map[protoreflect.FieldDescriptor]string{name: "n", title: "t"}},
		{`{"name":"\ud83d\ude80"}`, map[protoreflect.FieldDescriptor]string{name: "🚀"}}, // the general path
	} {
		for path, b := range map[string]bound{"general": bindGeneral(nameClash, []byte(c.body)), "graph": func() bound {
			b, _ := bindWrite(nameClash, []byte(c.body))
			return b
		}()} {
			if b.err != nil {
				t.Errorf("%s, %s path: %v", c.body, path, b.err)
				continue
			}
			want := dynamicpb.NewMessage(nameClash)
			for fd, v := range c.want {
				want.Set(fd, protoreflect.ValueOfString(v))
			}
			if !proto.Equal(b.msg.Interface(), want.Interface()) {
				t.Errorf("%s, %s path: bound %v, want %v", c.body, path, b.msg, want)
			}
		}
	}
}

// TestABoundWriteKeepsNoByteOfItsBody: the body is read into a pooled
// buffer, reused by the next request once this one is answered, so what is
// bound from it (the request's strings, the node) must be copies.
func TestABoundWriteKeepsNoByteOfItsBody(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"node":"page/1/posts","content":"Benchmark post 1: ☕","audience":"everyone"}`,
		`{"node":"page/1/posts","content":"esc\u00e9aped","audience":"everyone"}`,
		`{"node":"page/1/posts","content":"general \ud83d\ude80","audience":"everyone"}`,
	} {
		raw := []byte(body)
		var b writeBody
		if err := b.parse(raw); err != nil {
			t.Fatal(err)
		}
		msg := dynamicpb.NewMessage(createPost)
		if err := b.bind(msg, pageVarsOf("1")); err != nil {
			t.Fatal(err)
		}
		node, err := b.node()
		if err != nil {
			t.Fatal(err)
		}
		want := proto.Clone(msg.Interface())
		for i := range raw {
			raw[i] = 'x'
		}
		if !proto.Equal(msg.Interface(), want) || node != "page/1/posts" {
			t.Fatalf("%s: overwriting the body changed what was bound: %v, node %q", body, msg, node)
		}
	}
}

// FuzzFlatBodyBindsAsTheGeneralPath: for any body, the Graph's binding
// gives what the general path gives, request or refusal.
func FuzzFlatBodyBindsAsTheGeneralPath(f *testing.F) {
	for _, bodies := range [][]string{flatBodies, flatShapesBodies, generalBodies} {
		for _, body := range bodies {
			f.Add(body)
		}
	}
	f.Add(`{"name":"n","title":"t","label":null}`)
	f.Fuzz(func(t *testing.T, body string) {
		for _, md := range []protoreflect.MessageDescriptor{createPost, writeShapes, nameClash} {
			got, _ := bindWrite(md, []byte(body))
			if diff := sameBinding(got, bindGeneral(md, []byte(body))); diff != "" {
				t.Fatalf("%s %q: %s", md.Name(), body, diff)
			}
		}
	})
}

// TestAQueryJSONValueBindsTheFieldItNamesThoughItIsAnotherFieldsJSONName:
// a message field given in the query as JSON is bound as a body's key is,
// to the field the parameter names.
func TestAQueryJSONValueBindsTheFieldItNamesThoughItIsAnotherFieldsJSONName(t *testing.T) {
	t.Parallel()
	field := func(num int32, name, jsonName string, typ descriptorpb.FieldDescriptorProto_Type) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), JsonName: proto.String(jsonName), Number: proto.Int32(num),
			Type: typ.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()}
		if typ == descriptorpb.FieldDescriptorProto_TYPE_MESSAGE {
			f.TypeName = proto.String(".graphtest.Query")
		}
		return f
	}
	file := &descriptorpb.FileDescriptorProto{Name: proto.String("graphtest/query.proto"), Package: proto.String("graphtest"),
		Syntax: proto.String("proto3"), MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Query"),
			Field: []*descriptorpb.FieldDescriptorProto{
				field(1, "other", "filter", descriptorpb.FieldDescriptorProto_TYPE_STRING),
				field(2, "filter", "flt", descriptorpb.FieldDescriptorProto_TYPE_MESSAGE)}}}}
	fd, err := protodesc.NewFile(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	md := fd.Messages().Get(0)
	msg := dynamicpb.NewMessage(md)
	if err := bindQuery(msg, url.Values{"filter": {`{"other":"x"}`}}, manifestcheck.NodeVars{}); err != nil {
		t.Fatal(err)
	}
	filter := msg.Get(md.Fields().ByName("filter")).Message()
	if got := filter.Get(md.Fields().ByName("other")).String(); got != "x" || msg.Has(md.Fields().ByName("other")) {
		t.Fatalf("filter={\"other\":\"x\"} bound as %v", msg)
	}
}
