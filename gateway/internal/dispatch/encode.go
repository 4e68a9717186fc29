package dispatch

import (
	"math"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// marshalRequest encodes a request the gateway built itself (a Graph
// binding, CallJSON) for the plugin. Such requests are mostly a few
// singular scalars (a Page id, a limit, a cursor, a post's text): those are
// appended straight with protowire, in declaration order, into one buffer
// of the exact size. proto.Marshal would encode a dynamic message through
// reflection, sorting its fields and checking it first, about a dozen
// allocations per call; it still encodes everything else (repeated, map and
// message fields, extensions, unknown bytes, required fields, and a string
// it would refuse as invalid UTF-8, so that the refusal is its own).
func marshalRequest(req proto.Message) ([]byte, error) {
	m := req.ProtoReflect()
	md := m.Descriptor()
	if md.ExtensionRanges().Len() > 0 || len(m.GetUnknown()) > 0 {
		return slowMarshal(req)
	}
	// The first pass checks the fields, sizes the buffer and keeps the
	// first values it read (reflection on a dynamic message is a map
	// lookup each), the second fills the buffer.
	const kept = 16
	var (
		set     [kept]protoreflect.FieldDescriptor
		values  [kept]protoreflect.Value
		n, size int
		resume  int // the field after the last one kept
	)
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if fd.Cardinality() == protoreflect.Required {
			return slowMarshal(req)
		}
		if !m.Has(fd) {
			continue
		}
		if fd.IsList() || fd.IsMap() || fd.Message() != nil {
			return slowMarshal(req)
		}
		v := m.Get(fd)
		if fd.Kind() == protoreflect.StringKind && !utf8.ValidString(v.String()) {
			return slowMarshal(req)
		}
		size += protowire.SizeTag(fd.Number()) + scalarSize(fd.Kind(), v)
		if n < kept {
			set[n], values[n] = fd, v
			n++
			resume = i + 1
		}
	}
	b := make([]byte, 0, size)
	for i, fd := range set[:n] {
		b = appendScalar(b, fd, values[i])
	}
	if n == kept { // more than were kept
		for i := resume; i < fds.Len(); i++ {
			if fd := fds.Get(i); m.Has(fd) {
				b = appendScalar(b, fd, m.Get(fd))
			}
		}
	}
	return b, nil
}

// scalarSize is the encoded size of a singular scalar's value.
func scalarSize(k protoreflect.Kind, v protoreflect.Value) int {
	switch k {
	case protoreflect.StringKind:
		return protowire.SizeBytes(len(v.String()))
	case protoreflect.BytesKind:
		return protowire.SizeBytes(len(v.Bytes()))
	case protoreflect.BoolKind:
		return 1
	case protoreflect.EnumKind:
		return protowire.SizeVarint(uint64(v.Enum()))
	case protoreflect.Int32Kind, protoreflect.Int64Kind:
		return protowire.SizeVarint(uint64(v.Int()))
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return protowire.SizeVarint(protowire.EncodeZigZag(v.Int()))
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind:
		return protowire.SizeVarint(v.Uint())
	case protoreflect.Sfixed32Kind, protoreflect.Fixed32Kind, protoreflect.FloatKind:
		return 4
	}
	return 8 // the 64-bit fixed kinds and double
}

// appendScalar appends a singular scalar field with its tag.
func appendScalar(b []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) []byte {
	switch fd.Kind() {
	case protoreflect.StringKind:
		b = protowire.AppendTag(b, fd.Number(), protowire.BytesType)
		return protowire.AppendString(b, v.String())
	case protoreflect.BytesKind:
		b = protowire.AppendTag(b, fd.Number(), protowire.BytesType)
		return protowire.AppendBytes(b, v.Bytes())
	case protoreflect.BoolKind:
		b = protowire.AppendTag(b, fd.Number(), protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(v.Bool()))
	case protoreflect.EnumKind:
		b = protowire.AppendTag(b, fd.Number(), protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.Enum()))
	case protoreflect.Int32Kind, protoreflect.Int64Kind:
		b = protowire.AppendTag(b, fd.Number(), protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.Int()))
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		b = protowire.AppendTag(b, fd.Number(), protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeZigZag(v.Int()))
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind:
		b = protowire.AppendTag(b, fd.Number(), protowire.VarintType)
		return protowire.AppendVarint(b, v.Uint())
	case protoreflect.Sfixed32Kind:
		b = protowire.AppendTag(b, fd.Number(), protowire.Fixed32Type)
		return protowire.AppendFixed32(b, uint32(v.Int()))
	case protoreflect.Fixed32Kind:
		b = protowire.AppendTag(b, fd.Number(), protowire.Fixed32Type)
		return protowire.AppendFixed32(b, uint32(v.Uint()))
	case protoreflect.FloatKind:
		b = protowire.AppendTag(b, fd.Number(), protowire.Fixed32Type)
		return protowire.AppendFixed32(b, math.Float32bits(float32(v.Float())))
	case protoreflect.Sfixed64Kind:
		b = protowire.AppendTag(b, fd.Number(), protowire.Fixed64Type)
		return protowire.AppendFixed64(b, uint64(v.Int()))
	case protoreflect.Fixed64Kind:
		b = protowire.AppendTag(b, fd.Number(), protowire.Fixed64Type)
		return protowire.AppendFixed64(b, v.Uint())
	}
	b = protowire.AppendTag(b, fd.Number(), protowire.Fixed64Type) // double
	return protowire.AppendFixed64(b, math.Float64bits(v.Float()))
}

func slowMarshal(req proto.Message) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(req)
}
