package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	_ "github.com/svcplatform/svc/gen/svc/ads/v1"
	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	_ "github.com/svcplatform/svc/gen/svc/commerce/v1"
	_ "github.com/svcplatform/svc/gen/svc/completions/v1"
	_ "github.com/svcplatform/svc/gen/svc/core/v1"
	_ "github.com/svcplatform/svc/gen/svc/extmsg/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	_ "github.com/svcplatform/svc/gen/svc/social/v1"
	_ "github.com/svcplatform/svc/gen/svc/svcchat/v1"
	_ "github.com/svcplatform/svc/gen/svc/wearables/v1"
)

// allKinds is a proto3 message with every field shape the wire renderer
// covers: each scalar kind singular, optional and repeated (packed and
// not), an enum, a oneof, and a recursive message field.
var allKinds = func() protoreflect.MessageDescriptor {
	f := &descriptorpb.FileDescriptorProto{
		Name: proto.String("graph_wire_test.proto"), Package: proto.String("graphtest"), Syntax: proto.String("proto3"),
		EnumType: []*descriptorpb.EnumDescriptorProto{{Name: proto.String("Colour"), Value: []*descriptorpb.EnumValueDescriptorProto{
			{Name: proto.String("COLOUR_UNSPECIFIED"), Number: proto.Int32(0)},
			{Name: proto.String("RED"), Number: proto.Int32(1)},
			{Name: proto.String("BLUE"), Number: proto.Int32(-2)},
		}}},
	}
	kinds := []descriptorpb.FieldDescriptorProto_Type{
		descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, descriptorpb.FieldDescriptorProto_TYPE_FLOAT,
		descriptorpb.FieldDescriptorProto_TYPE_INT64, descriptorpb.FieldDescriptorProto_TYPE_UINT64,
		descriptorpb.FieldDescriptorProto_TYPE_INT32, descriptorpb.FieldDescriptorProto_TYPE_FIXED64,
		descriptorpb.FieldDescriptorProto_TYPE_FIXED32, descriptorpb.FieldDescriptorProto_TYPE_BOOL,
		descriptorpb.FieldDescriptorProto_TYPE_STRING, descriptorpb.FieldDescriptorProto_TYPE_BYTES,
		descriptorpb.FieldDescriptorProto_TYPE_UINT32, descriptorpb.FieldDescriptorProto_TYPE_SFIXED32,
		descriptorpb.FieldDescriptorProto_TYPE_SFIXED64, descriptorpb.FieldDescriptorProto_TYPE_SINT32,
		descriptorpb.FieldDescriptorProto_TYPE_SINT64, descriptorpb.FieldDescriptorProto_TYPE_ENUM,
		descriptorpb.FieldDescriptorProto_TYPE_MESSAGE,
	}
	m := &descriptorpb.DescriptorProto{Name: proto.String("All"), OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("choice")}}}
	num := int32(1)
	add := func(name string, k descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label, optional bool, oneof *int32) {
		fd := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: k.Enum(), Label: label.Enum(), OneofIndex: oneof}
		switch k {
		case descriptorpb.FieldDescriptorProto_TYPE_ENUM:
			fd.TypeName = proto.String(".graphtest.Colour")
		case descriptorpb.FieldDescriptorProto_TYPE_MESSAGE:
			fd.TypeName = proto.String(".graphtest.All")
		}
		if optional {
			fd.Proto3Optional = proto.Bool(true)
			fd.OneofIndex = proto.Int32(int32(len(m.OneofDecl)))
			m.OneofDecl = append(m.OneofDecl, &descriptorpb.OneofDescriptorProto{Name: proto.String("_" + name)})
		}
		m.Field = append(m.Field, fd)
		num++
	}
	// Declared out of number order on purpose: protojson writes fields in
	// declaration order.
	num = 100
	add("late", descriptorpb.FieldDescriptorProto_TYPE_STRING, descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL, false, nil)
	num = 1
	optional := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
	repeated := descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	for _, k := range kinds {
		name := strings.ToLower(strings.TrimPrefix(k.String(), "TYPE_"))
		add(name, k, optional, false, nil)
		add("rep_"+name, k, repeated, false, nil)
		if k != descriptorpb.FieldDescriptorProto_TYPE_MESSAGE {
			add("opt_"+name, k, optional, true, nil)
		}
	}
	add("choice_text", descriptorpb.FieldDescriptorProto_TYPE_STRING, optional, false, proto.Int32(0))
	add("choice_count", descriptorpb.FieldDescriptorProto_TYPE_INT64, optional, false, proto.Int32(0))
	add("choice_child", descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, optional, false, proto.Int32(0))
	// Unpacked repeated scalars are also legal on the wire.
	add("rep_unpacked", descriptorpb.FieldDescriptorProto_TYPE_SINT32, repeated, false, nil)
	m.Field[len(m.Field)-1].Options = &descriptorpb.FieldOptions{Packed: proto.Bool(false)}
	f.MessageType = []*descriptorpb.DescriptorProto{m}
	fd, err := protodesc.NewFile(f, protoregistry.GlobalFiles)
	if err != nil {
		panic(err)
	}
	return fd.Messages().Get(0)
}()

// fill sets random values on m: each field with some probability, lists of
// up to three elements, nested messages to a small depth.
func fill(r *rand.Rand, m protoreflect.Message, depth int) {
	fds := m.Descriptor().Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if r.IntN(3) == 0 || fd.IsMap() {
			continue
		}
		if fd.Message() != nil && (depth > 2 || strings.HasPrefix(string(fd.Message().FullName()), "google.protobuf.")) {
			continue
		}
		if fd.IsList() {
			l := m.Mutable(fd).List()
			for range r.IntN(4) {
				if fd.Message() != nil {
					e := l.NewElement()
					fill(r, e.Message(), depth+1)
					l.Append(e)
				} else {
					l.Append(randomScalar(r, fd))
				}
			}
			continue
		}
		if fd.Message() != nil {
			fill(r, m.Mutable(fd).Message(), depth+1)
			continue
		}
		m.Set(fd, randomScalar(r, fd))
	}
}

var wireStrings = []string{"", "plain", `quote " and \ backslash`, "line\nbreak\ttab\r\b\f", "\x00\x01\x1f control", "café ☕ 咖啡 😀", "<html> & 'amp'", "\u2028\u2029"}

var wireFloats = []float64{0, 1, -1.5, 1e-7, 1e21, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1), 3.4e38, 1e-6, 9.999e20}

func randomScalar(r *rand.Rand, fd protoreflect.FieldDescriptor) protoreflect.Value {
	ints := []int64{0, 1, -1, 42, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64, r.Int64()}
	i := ints[r.IntN(len(ints))]
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(r.IntN(2) == 0)
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		return protoreflect.ValueOfEnum(vals.Get(r.IntN(vals.Len())).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(i))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(i))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(i)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(i))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(wireFloats[r.IntN(len(wireFloats))]))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(wireFloats[r.IntN(len(wireFloats))])
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(wireStrings[r.IntN(len(wireStrings))])
	case protoreflect.BytesKind:
		b := make([]byte, r.IntN(6))
		for j := range b {
			b[j] = byte(r.IntN(256))
		}
		return protoreflect.ValueOfBytes(b)
	}
	panic("kind " + fd.Kind().String())
}

// sameJSON compares two JSON texts token by token: the same keys in the
// same order and the same values, numbers compared as numbers.
func sameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	dg, dw := json.NewDecoder(bytes.NewReader(got)), json.NewDecoder(bytes.NewReader(want))
	dg.UseNumber()
	dw.UseNumber()
	for {
		tg, eg := dg.Token()
		tw, ew := dw.Token()
		if errors.Is(eg, io.EOF) && errors.Is(ew, io.EOF) {
			return
		}
		if eg != nil || ew != nil {
			t.Fatalf("decoding: got %v, want %v\ngot  %s\nwant %s", eg, ew, got, want)
		}
		if ng, ok := tg.(json.Number); ok {
			nw, ok := tw.(json.Number)
			fg, _ := strconv.ParseFloat(string(ng), 64)
			fw, _ := strconv.ParseFloat(string(nw), 64)
			if !ok || fg != fw {
				t.Fatalf("number %v, want %v\ngot  %s\nwant %s", tg, tw, got, want)
			}
			continue
		}
		if tg != tw {
			t.Fatalf("token %#v, want %#v\ngot  %s\nwant %s", tg, tw, got, want)
		}
	}
}

func graphMessages(t *testing.T) []protoreflect.MessageDescriptor {
	var out []protoreflect.MessageDescriptor
	var walk func(protoreflect.MessageDescriptors)
	walk = func(ms protoreflect.MessageDescriptors) {
		for i := range ms.Len() {
			out = append(out, ms.Get(i))
			walk(ms.Get(i).Messages())
		}
	}
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if strings.HasPrefix(string(fd.Package()), "svc.") {
			walk(fd.Messages())
		}
		return true
	})
	if len(out) < 50 {
		t.Fatalf("only %d svc messages registered", len(out))
	}
	return append(out, allKinds, (&descriptorpb.FileDescriptorProto{}).ProtoReflect().Descriptor())
}

func TestWireRenderingWritesWhatProtojsonWrites(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	planned := 0
	for _, md := range graphMessages(t) {
		plan := compileWirePlan(md)
		if plan == nil {
			continue
		}
		planned++
		for range 40 {
			m := dynamicpb.NewMessage(md)
			fill(r, m, 0)
			raw, err := proto.MarshalOptions{Deterministic: r.IntN(2) == 0}.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			want, wantErr := renderJSON.Marshal(m)
			got, err := plan.render(nil, raw)
			if wantErr != nil {
				// protojson refuses (a proto2 string with invalid UTF-8
				// cannot happen here); the wire path must not answer.
				if err == nil {
					t.Fatalf("%s: protojson refused (%v) but the wire path wrote %s", md.FullName(), wantErr, got)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v for %s", md.FullName(), err, want)
			}
			sameJSON(t, got, want)
		}
	}
	if planned < 50 {
		t.Fatalf("only %d message types have a wire plan", planned)
	}
}

func TestWireRenderingFallsBackOnBytesItCannotWriteExactly(t *testing.T) {
	t.Parallel()
	plan := compileWirePlan(allKinds)
	str := allKinds.Fields().ByName("string").Number()
	en := allKinds.Fields().ByName("enum").Number()
	i64 := allKinds.Fields().ByName("int64").Number()
	cases := map[string][]byte{
		"a singular field twice":   protowireAppend(protowireAppend(nil, str, "a"), str, "b"),
		"invalid UTF-8":            protowireAppend(nil, str, "\xff\xfe"),
		"an unknown enum number":   varintField(nil, en, 7),
		"a wire type that differs": protowireAppend(nil, i64, "x"),
		"a truncated tag":          {0x80},
		"a truncated value":        append(protowire.AppendTag(nil, str, protowire.BytesType), 5, 'a'),
	}
	for name, raw := range cases {
		if out, err := plan.render(nil, raw); !errors.Is(err, errFallback) {
			t.Errorf("%s: wrote %s, err %v; want errFallback", name, out, err)
		}
	}
}

func TestShapesWithOwnJSONFormsHaveNoWirePlan(t *testing.T) {
	t.Parallel()
	// Well-known types (Timestamp, Struct, …) and maps have JSON forms of
	// their own: the decoding path writes them.
	for _, md := range graphMessages(t) {
		fds := md.Fields()
		for i := range fds.Len() {
			fd := fds.Get(i)
			own := fd.IsMap() || (fd.Message() != nil && strings.HasPrefix(string(fd.Message().FullName()), "google.protobuf."))
			if own && compileWirePlan(md) != nil {
				t.Errorf("%s has %s (%s) but got a wire plan", md.FullName(), fd.Name(), fd.Kind())
			}
		}
	}
}

func protowireAppend(b []byte, num protoreflect.FieldNumber, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func varintField(b []byte, num protoreflect.FieldNumber, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func FuzzWireRendering(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		m := dynamicpb.NewMessage(allKinds)
		fill(r, m, 0)
		raw, _ := proto.Marshal(m)
		f.Add(raw)
	}
	plan := compileWirePlan(allKinds)
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := plan.render(nil, raw)
		if err != nil {
			if !errors.Is(err, errFallback) {
				t.Fatalf("error %v is not errFallback", err)
			}
			return
		}
		m := dynamicpb.NewMessage(allKinds)
		if err := proto.Unmarshal(raw, m); err != nil {
			t.Fatalf("the wire path wrote %s for bytes the decoder refuses: %v", got, err)
		}
		want, err := renderJSON.Marshal(m)
		if err != nil {
			t.Fatalf("the wire path wrote %s where protojson refuses: %v", got, err)
		}
		sameJSON(t, got, want)
	})
}

// BenchmarkRenderPageOfPosts compares the two ways to render a page of ten
// posts: decoding into a dynamic message and writing protojson, and
// writing from the wire bytes.
func BenchmarkRenderPageOfPosts(b *testing.B) {
	res := &bookv1.ListPostsResponse{Paging: &pluginv1.Paging{Before: "MTAwMDAwMTAwMA", After: "MTAwMDAwMDk5MQ", HasNext: true}}
	for i := range 10 {
		res.Data = append(res.Data, &bookv1.Post{Id: strconv.Itoa(1000001000 - i), PageId: "100000000000003",
			Content: "Seed post " + strconv.Itoa(i) + ": coffee ☕ café 咖啡", Audience: "everyone", CreatedTime: "2026-11-24T04:05:39Z"})
	}
	raw, err := proto.Marshal(res)
	if err != nil {
		b.Fatal(err)
	}
	md := res.ProtoReflect().Descriptor()
	mt := dynamicpb.NewMessageType(md)
	h := New(Options{PublicURL: "http://127.0.0.1:8080"})
	q := url.Values{"node": {"page/100000000000003/posts"}, "limit": {"10"}}
	node := q.Get("node")
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out := mt.New()
			if err := proto.Unmarshal(raw, out.Interface()); err != nil {
				b.Fatal(err)
			}
			items := out.Get(md.Fields().ByName("data")).List()
			buf := []byte(`{"data":[`)
			for i := range items.Len() {
				if i > 0 {
					buf = append(buf, ',')
				}
				item, err := renderJSON.Marshal(items.Get(i).Message().Interface())
				if err != nil {
					b.Fatal(err)
				}
				buf = append(buf, item...)
			}
			buf = append(buf, `],"paging":`...)
			buf = h.appendPaging(buf, node, q, pageOf(out))
			_ = append(buf, '}')
		}
	})
	answer := compileAnswer(md)
	b.Run("wire", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := answer.render(make([]byte, 0, 2*len(raw)+256), raw, func(dst []byte, p listPage) []byte {
				return h.appendPaging(dst, node, q, p)
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
