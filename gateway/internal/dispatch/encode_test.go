package dispatch

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
)

// scalars is a proto3 request with every scalar kind singular, optional
// (explicit presence) and in a oneof, declared out of number order, plus a
// repeated field and a message field, which take proto.Marshal.
var scalars = func() protoreflect.MessageDescriptor {
	types := []descriptorpb.FieldDescriptorProto_Type{
		descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, descriptorpb.FieldDescriptorProto_TYPE_FLOAT,
		descriptorpb.FieldDescriptorProto_TYPE_INT64, descriptorpb.FieldDescriptorProto_TYPE_UINT64,
		descriptorpb.FieldDescriptorProto_TYPE_INT32, descriptorpb.FieldDescriptorProto_TYPE_FIXED64,
		descriptorpb.FieldDescriptorProto_TYPE_FIXED32, descriptorpb.FieldDescriptorProto_TYPE_BOOL,
		descriptorpb.FieldDescriptorProto_TYPE_STRING, descriptorpb.FieldDescriptorProto_TYPE_BYTES,
		descriptorpb.FieldDescriptorProto_TYPE_UINT32, descriptorpb.FieldDescriptorProto_TYPE_SFIXED32,
		descriptorpb.FieldDescriptorProto_TYPE_SFIXED64, descriptorpb.FieldDescriptorProto_TYPE_SINT32,
		descriptorpb.FieldDescriptorProto_TYPE_SINT64, descriptorpb.FieldDescriptorProto_TYPE_ENUM,
	}
	m := &descriptorpb.DescriptorProto{Name: proto.String("Scalars"),
		OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("choice")}}}
	num := int32(200)
	add := func(name string, t descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label) *descriptorpb.FieldDescriptorProto {
		fd := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: t.Enum(), Label: label.Enum()}
		switch t {
		case descriptorpb.FieldDescriptorProto_TYPE_ENUM:
			fd.TypeName = proto.String(".routetest.Colour")
		case descriptorpb.FieldDescriptorProto_TYPE_MESSAGE:
			fd.TypeName = proto.String(".routetest.Scalars")
		}
		m.Field = append(m.Field, fd)
		num--
		return fd
	}
	optional := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
	for _, t := range types {
		name := strings.ToLower(strings.TrimPrefix(t.String(), "TYPE_"))
		add(name, t, optional)
		fd := add("opt_"+name, t, optional)
		fd.Proto3Optional = proto.Bool(true)
		fd.OneofIndex = proto.Int32(int32(len(m.OneofDecl)))
		m.OneofDecl = append(m.OneofDecl, &descriptorpb.OneofDescriptorProto{Name: proto.String("_opt_" + name)})
	}
	for _, t := range types {
		add("choice_"+strings.ToLower(strings.TrimPrefix(t.String(), "TYPE_")), t, optional).OneofIndex = proto.Int32(0)
	}
	add("list", descriptorpb.FieldDescriptorProto_TYPE_STRING, descriptorpb.FieldDescriptorProto_LABEL_REPEATED)
	add("child", descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, optional)
	f := &descriptorpb.FileDescriptorProto{
		Name: proto.String("route_codec_test.proto"), Package: proto.String("routetest"), Syntax: proto.String("proto3"),
		EnumType: []*descriptorpb.EnumDescriptorProto{{Name: proto.String("Colour"), Value: []*descriptorpb.EnumValueDescriptorProto{
			{Name: proto.String("COLOUR_UNSPECIFIED"), Number: proto.Int32(0)},
			{Name: proto.String("RED"), Number: proto.Int32(1)},
			{Name: proto.String("BLUE"), Number: proto.Int32(-2)},
		}}},
		MessageType: []*descriptorpb.DescriptorProto{m},
	}
	fd, err := protodesc.NewFile(f, protoregistry.GlobalFiles)
	if err != nil {
		panic(err)
	}
	return fd.Messages().Get(0)
}()

// randomScalar is a value of fd's kind, often an edge one.
func randomScalar(r *rand.Rand, fd protoreflect.FieldDescriptor) protoreflect.Value {
	edge := r.IntN(3) == 0
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(r.IntN(2) == 0)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum([]protoreflect.EnumNumber{0, 1, -2, 7}[r.IntN(4)])
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if edge {
			return protoreflect.ValueOfInt32([]int32{0, -1, math.MinInt32, math.MaxInt32}[r.IntN(4)])
		}
		return protoreflect.ValueOfInt32(r.Int32() - math.MaxInt32/2)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		if edge {
			return protoreflect.ValueOfInt64([]int64{0, -1, math.MinInt64, math.MaxInt64}[r.IntN(4)])
		}
		return protoreflect.ValueOfInt64(r.Int64() - math.MaxInt64/2)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(r.Uint32())
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(r.Uint64())
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32([]float32{0, -0.5, float32(math.Inf(1)), r.Float32()}[r.IntN(4)])
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64([]float64{0, math.Copysign(0, -1), math.NaN(), r.NormFloat64()}[r.IntN(4)])
	case protoreflect.StringKind:
		return protoreflect.ValueOfString([]string{"", "page/1", "café ☕", strings.Repeat("x", 200)}[r.IntN(4)])
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte{0, 0xff, byte(r.IntN(256))}[:r.IntN(4)])
	}
	panic(fd.Kind())
}

func TestARequestTheGatewayBuiltEncodesAsProtoMarshalWouldDecode(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(15, 2026))
	fds := scalars.Fields()
	for range 2000 {
		m := dynamicpb.NewMessage(scalars)
		for i := range fds.Len() {
			fd := fds.Get(i)
			if r.IntN(2) == 0 || fd.IsList() || fd.Message() != nil {
				continue
			}
			m.Set(fd, randomScalar(r, fd))
		}
		switch r.IntN(10) {
		case 0:
			m.Mutable(fds.ByName("list")).List().Append(protoreflect.ValueOfString("a"))
		case 1:
			m.Mutable(fds.ByName("child")).Message().Set(fds.ByName("int32"), protoreflect.ValueOfInt32(-3))
		}
		got, err := marshalRequest(m)
		if err != nil {
			t.Fatal(err)
		}
		back := dynamicpb.NewMessage(scalars)
		if err := proto.Unmarshal(got, back); err != nil {
			t.Fatalf("%v encodes as bytes the decoder refuses: %v", m, err)
		}
		if !proto.Equal(m, back) {
			t.Fatalf("%v encodes as %x, which decodes as %v", m, got, back)
		}
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%v encodes in %d bytes, proto.Marshal in %d", m, len(got), len(want))
		}
		if cap(got) != len(got) && !m.Has(fds.ByName("list")) && !m.Has(fds.ByName("child")) {
			t.Fatalf("%v encodes in %d bytes of a buffer of %d: its size is known", m, len(got), cap(got))
		}
	}
}

func TestARequestStringThatIsNotUTF8IsRefusedAsProtoMarshalRefusesIt(t *testing.T) {
	t.Parallel()
	m := dynamicpb.NewMessage(scalars)
	m.Set(scalars.Fields().ByName("string"), protoreflect.ValueOfString("\xff"))
	_, want := proto.Marshal(m)
	if _, err := marshalRequest(m); err == nil || want == nil || err.Error() != want.Error() {
		t.Fatalf("err = %v, want proto.Marshal's %v", err, want)
	}
}

// BenchmarkMarshalRequest encodes the request of the Graph read that make
// bench loads, as the Graph layer binds it.
func BenchmarkMarshalRequest(b *testing.B) {
	md := (&bookv1.ListPostsRequest{}).ProtoReflect().Descriptor()
	m := dynamicpb.NewMessage(md)
	m.Set(md.Fields().ByName("page_id"), protoreflect.ValueOfString("100000000000003"))
	m.Set(md.Fields().ByName("limit"), protoreflect.ValueOfInt32(10))
	b.Run("proto.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := slowMarshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gateway", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalRequest(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
