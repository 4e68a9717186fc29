package graph

import (
	"encoding/base64"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The Graph renders a plugin's answer as the JSON that protojson would
// write for it (proto field names, unpopulated fields emitted), but straight
// from the wire bytes: decoding into a reflection-based message and encoding
// that again cost more CPU than the rest of the gateway's work on a read
// (bench/RESULTS.md, "Where the CPU goes"). A wirePlan is compiled once per
// message type when the route table's node router is built. Shapes it does
// not cover (maps, well-known types, groups) have no plan, and bytes it
// cannot render exactly as protojson would (a singular field twice, a wire
// type that does not match, invalid UTF-8, an unknown enum number) give
// errFallback: the caller then takes the decoding path, which also produces
// the right error.

// errFallback says the wire bytes need the decoding path.
var errFallback = errors.New("graph: wire bytes need the decoding path")

// wirePlan renders one message type.
type wirePlan struct {
	fields []wireField // declaration order, as protojson writes them
	byNum  map[protowire.Number]int
}

// wireField is one field of a wirePlan.
type wireField struct {
	num  protowire.Number
	kind protoreflect.Kind
	list bool
	// key is `"name":`.
	key string
	// absent is the JSON of the field when the wire has none of it; empty
	// for a oneof member or proto3 optional field, which protojson leaves
	// out.
	absent string
	// utf8 is set when the string must be valid UTF-8 (proto3 and editions'
	// default); the decoding path refuses such a string otherwise.
	utf8 bool
	msg  *wirePlan
	enum protoreflect.EnumValueDescriptors
}

// compileWirePlan returns the plan of md, or nil when md has a shape the
// wire renderer does not cover.
func compileWirePlan(md protoreflect.MessageDescriptor) *wirePlan {
	return compileWire(md, map[protoreflect.FullName]*wirePlan{})
}

func compileWire(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]*wirePlan) *wirePlan {
	if p, ok := seen[md.FullName()]; ok {
		return p // recursive types share the plan being built
	}
	if strings.HasPrefix(string(md.FullName()), "google.protobuf.") || md.ExtensionRanges().Len() > 0 {
		return nil // well-known types have their own JSON forms
	}
	p := &wirePlan{byNum: map[protowire.Number]int{}}
	seen[md.FullName()] = p
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if fd.IsMap() || fd.Kind() == protoreflect.GroupKind {
			return nil
		}
		f := wireField{num: fd.Number(), kind: fd.Kind(), list: fd.IsList(),
			key:  strconv.Quote(string(fd.Name())) + ":",
			utf8: fd.Kind() == protoreflect.StringKind && fd.Syntax() != protoreflect.Proto2}
		switch fd.Kind() {
		case protoreflect.MessageKind:
			if f.msg = compileWire(fd.Message(), seen); f.msg == nil {
				return nil
			}
		case protoreflect.EnumKind:
			if fd.Enum().FullName() == "google.protobuf.NullValue" {
				return nil
			}
			f.enum = fd.Enum().Values()
		}
		switch {
		case fd.ContainingOneof() != nil:
			// A oneof member, or a proto3 optional field: left out when
			// unset.
		case f.list:
			f.absent = "[]"
		case fd.HasPresence(): // messages, proto2 optional
			f.absent = "null"
		default:
			f.absent = string(appendDefault(nil, fd))
		}
		p.byNum[fd.Number()] = len(p.fields)
		p.fields = append(p.fields, f)
	}
	return p
}

// appendDefault writes the default value of a field without presence.
func appendDefault(b []byte, fd protoreflect.FieldDescriptor) []byte {
	v := fd.Default()
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return strconv.AppendBool(b, v.Bool())
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return appendJSONString(b, string(ev.Name()))
		}
		return strconv.AppendInt(b, int64(v.Enum()), 10)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return strconv.AppendInt(b, v.Int(), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return strconv.AppendUint(b, v.Uint(), 10)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return strconv.AppendQuote(b, strconv.FormatInt(v.Int(), 10))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return strconv.AppendQuote(b, strconv.FormatUint(v.Uint(), 10))
	case protoreflect.FloatKind:
		return appendJSONFloat(b, v.Float(), 32)
	case protoreflect.DoubleKind:
		return appendJSONFloat(b, v.Float(), 64)
	case protoreflect.StringKind:
		return appendJSONString(b, v.String())
	case protoreflect.BytesKind:
		return appendBase64(b, v.Bytes())
	}
	return append(b, "null"...)
}

// wireSpan is one occurrence of a field in a message's wire bytes.
type wireSpan struct {
	field int // index into wirePlan.fields
	typ   protowire.Type
	val   []byte // the value: varint, fixed bytes, or length-delimited payload
}

// render appends the JSON object of the message in raw.
func (p *wirePlan) render(b, raw []byte) ([]byte, error) {
	var stack [24]wireSpan
	spans := stack[:0]
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 || !num.IsValid() {
			return nil, errFallback
		}
		raw = raw[n:]
		m := protowire.ConsumeFieldValue(num, typ, raw)
		if m < 0 {
			return nil, errFallback
		}
		val := raw[:m]
		raw = raw[m:]
		i, ok := p.byNum[num]
		if !ok {
			continue // unknown fields are not rendered
		}
		if typ == protowire.BytesType {
			val, _ = protowire.ConsumeBytes(val)
		}
		spans = append(spans, wireSpan{field: i, typ: typ, val: val})
	}
	b = append(b, '{')
	first := true
	for i := range p.fields {
		f := &p.fields[i]
		count := 0
		for _, s := range spans {
			if s.field == i {
				count++
			}
		}
		if count == 0 && f.absent == "" {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, f.key...)
		if count == 0 {
			b = append(b, f.absent...)
			continue
		}
		if !f.list {
			if count > 1 {
				return nil, errFallback // last wins or merges: leave it to the decoder
			}
			for _, s := range spans {
				if s.field == i {
					var err error
					if b, err = f.value(b, s.typ, s.val); err != nil {
						return nil, err
					}
				}
			}
			continue
		}
		b = append(b, '[')
		n := 0
		for _, s := range spans {
			if s.field != i {
				continue
			}
			var err error
			if b, n, err = f.elements(b, n, s.typ, s.val); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// scalarType is the wire type of a non-packed value of kind k.
func scalarType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return protowire.BytesType
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	}
	return protowire.VarintType
}

// elements appends the elements of one occurrence of a repeated field,
// packed or not; n counts the elements written so far.
func (f *wireField) elements(b []byte, n int, typ protowire.Type, val []byte) ([]byte, int, error) {
	st := scalarType(f.kind)
	if typ == st {
		if n > 0 {
			b = append(b, ',')
		}
		b, err := f.value(b, typ, val)
		return b, n + 1, err
	}
	if typ != protowire.BytesType || st == protowire.BytesType {
		return nil, 0, errFallback
	}
	for len(val) > 0 {
		var m int
		switch st {
		case protowire.VarintType:
			_, m = protowire.ConsumeVarint(val)
		case protowire.Fixed32Type:
			_, m = protowire.ConsumeFixed32(val)
		default:
			_, m = protowire.ConsumeFixed64(val)
		}
		if m < 0 {
			return nil, 0, errFallback
		}
		if n > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = f.value(b, st, val[:m]); err != nil {
			return nil, 0, err
		}
		val = val[m:]
		n++
	}
	return b, n, nil
}

// value appends one value of the field.
func (f *wireField) value(b []byte, typ protowire.Type, val []byte) ([]byte, error) {
	if typ != scalarType(f.kind) {
		return nil, errFallback
	}
	switch typ {
	case protowire.BytesType:
		switch f.kind {
		case protoreflect.StringKind:
			if f.utf8 && !utf8.Valid(val) {
				return nil, errFallback
			}
			return appendJSONString(b, val), nil
		case protoreflect.BytesKind:
			return appendBase64(b, val), nil
		default:
			return f.msg.render(b, val)
		}
	case protowire.Fixed32Type:
		v, _ := protowire.ConsumeFixed32(val)
		switch f.kind {
		case protoreflect.FloatKind:
			return appendJSONFloat(b, float64(math.Float32frombits(v)), 32), nil
		case protoreflect.Sfixed32Kind:
			return strconv.AppendInt(b, int64(int32(v)), 10), nil
		}
		return strconv.AppendUint(b, uint64(v), 10), nil
	case protowire.Fixed64Type:
		v, _ := protowire.ConsumeFixed64(val)
		switch f.kind {
		case protoreflect.DoubleKind:
			return appendJSONFloat(b, math.Float64frombits(v), 64), nil
		case protoreflect.Sfixed64Kind:
			return appendQuotedInt(b, int64(v)), nil
		}
		return appendQuotedUint(b, v), nil
	}
	v, _ := protowire.ConsumeVarint(val)
	switch f.kind {
	case protoreflect.BoolKind:
		return strconv.AppendBool(b, v != 0), nil
	case protoreflect.Int32Kind:
		return strconv.AppendInt(b, int64(int32(v)), 10), nil
	case protoreflect.Sint32Kind:
		return strconv.AppendInt(b, int64(int32(protowire.DecodeZigZag(v&math.MaxUint32))), 10), nil
	case protoreflect.Uint32Kind:
		return strconv.AppendUint(b, uint64(uint32(v)), 10), nil
	case protoreflect.Int64Kind:
		return appendQuotedInt(b, int64(v)), nil
	case protoreflect.Sint64Kind:
		return appendQuotedInt(b, protowire.DecodeZigZag(v)), nil
	case protoreflect.Uint64Kind:
		return appendQuotedUint(b, v), nil
	case protoreflect.EnumKind:
		ev := f.enum.ByNumber(protoreflect.EnumNumber(int32(v)))
		if ev == nil {
			return nil, errFallback
		}
		return appendJSONString(b, string(ev.Name())), nil
	}
	return nil, errFallback
}

func appendQuotedInt(b []byte, v int64) []byte {
	b = append(b, '"')
	return append(strconv.AppendInt(b, v, 10), '"')
}

func appendQuotedUint(b []byte, v uint64) []byte {
	b = append(b, '"')
	return append(strconv.AppendUint(b, v, 10), '"')
}

func appendBase64(b, v []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, v)
	return append(b, '"')
}

// appendJSONFloat writes a float as protojson does: NaN and the infinities
// as strings, otherwise the shortest decimal that reads back as the same
// float, in exponent form only for very small or very large magnitudes.
func appendJSONFloat(b []byte, v float64, bits int) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(v, -1):
		return append(b, `"-Infinity"`...)
	}
	format := byte('f')
	if a := math.Abs(v); a != 0 {
		small, large := a < 1e-6, a >= 1e21
		if bits == 32 {
			small, large = float32(a) < 1e-6, float32(a) >= 1e21
		}
		if small || large {
			format = 'e'
		}
	}
	start := len(b)
	b = strconv.AppendFloat(b, v, format, -1, bits)
	if format == 'e' {
		// 1e-07 → 1e-7, as JavaScript writes it.
		s := b[start:]
		if n := len(s); n >= 4 && s[n-4] == 'e' && s[n-3] == '-' && s[n-2] == '0' {
			s[n-2] = s[n-1]
			b = b[:len(b)-1]
		}
	}
	return b
}

// appendJSONString writes s as a JSON string. Only what JSON requires is
// escaped: the quote, the backslash and control characters.
func appendJSONString[T string | []byte](b []byte, s T) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// wireAnswer renders one Graph method's answer from its wire bytes: a list
// (data + paging) item by item with the Graph paging object, or an object
// whole.
type wireAnswer struct {
	whole *wirePlan // objects
	item  *wirePlan // lists: the plan of one item of data
	data  protowire.Number
	// paging and its fields' numbers.
	paging                              protowire.Number
	before, after, hasNext, hasPrevious protowire.Number
}

// compileAnswer returns the wire renderer of a response type, or nil.
func compileAnswer(md protoreflect.MessageDescriptor) *wireAnswer {
	if !isList(md) {
		if p := compileWirePlan(md); p != nil {
			return &wireAnswer{whole: p}
		}
		return nil
	}
	if md.Fields().Len() != 2 {
		return nil
	}
	data, paging := md.Fields().ByName("data"), md.Fields().ByName("paging")
	item := compileWirePlan(data.Message())
	if item == nil {
		return nil
	}
	pf := paging.Message().Fields()
	return &wireAnswer{item: item, data: data.Number(), paging: paging.Number(),
		before: pf.ByName("before").Number(), after: pf.ByName("after").Number(),
		hasNext: pf.ByName("has_next").Number(), hasPrevious: pf.ByName("has_previous").Number()}
}

// listPage is what a list answer's paging message says. The cursors alias
// the answer's bytes on the wire path.
type listPage struct {
	before, after        []byte
	hasNext, hasPrevious bool
}

// render appends the Graph JSON of the answer in raw; links renders the
// paging object of a list.
func (a *wireAnswer) render(b, raw []byte, links func(b []byte, p listPage) []byte) ([]byte, error) {
	if a.whole != nil {
		return a.whole.render(b, raw)
	}
	var page listPage
	b = append(b, `{"data":[`...)
	n := 0
	for len(raw) > 0 {
		num, typ, k := protowire.ConsumeTag(raw)
		if k < 0 || !num.IsValid() {
			return nil, errFallback
		}
		raw = raw[k:]
		m := protowire.ConsumeFieldValue(num, typ, raw)
		if m < 0 {
			return nil, errFallback
		}
		val := raw[:m]
		raw = raw[m:]
		if num != a.data && num != a.paging {
			continue
		}
		if typ != protowire.BytesType {
			return nil, errFallback
		}
		val, _ = protowire.ConsumeBytes(val)
		if num == a.paging {
			// Several paging occurrences merge in the decoder; the
			// plugins write one.
			if err := a.readPaging(&page, val); err != nil {
				return nil, err
			}
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		var err error
		if b, err = a.item.render(b, val); err != nil {
			return nil, err
		}
	}
	b = append(b, `],"paging":`...)
	b = links(b, page)
	return append(b, '}'), nil
}

// readPaging reads a Paging message into p, later fields winning as in the
// decoder.
func (a *wireAnswer) readPaging(p *listPage, raw []byte) error {
	for len(raw) > 0 {
		num, typ, k := protowire.ConsumeTag(raw)
		if k < 0 || !num.IsValid() {
			return errFallback
		}
		raw = raw[k:]
		m := protowire.ConsumeFieldValue(num, typ, raw)
		if m < 0 {
			return errFallback
		}
		val := raw[:m]
		raw = raw[m:]
		switch num {
		case a.before, a.after:
			s, k := protowire.ConsumeBytes(val)
			if typ != protowire.BytesType || k < 0 || !utf8.Valid(s) {
				return errFallback
			}
			if num == a.before {
				p.before = s
			} else {
				p.after = s
			}
		case a.hasNext, a.hasPrevious:
			v, k := protowire.ConsumeVarint(val)
			if typ != protowire.VarintType || k < 0 {
				return errFallback
			}
			if num == a.hasNext {
				p.hasNext = v != 0
			} else {
				p.hasPrevious = v != 0
			}
		}
	}
	return nil
}
