package openapi

import (
	"regexp"
	"slices"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// rules are a field's protovalidate rules; nil when it has none.
func rules(fd protoreflect.FieldDescriptor) *validate.FieldRules {
	r, _ := proto.GetExtension(fd.Options(), validate.E_Field).(*validate.FieldRules)
	return r
}

// required reports whether a request must carry fd: protovalidate refuses
// the message without it. That is its required rule, or, for a field
// without presence (a plain proto3 scalar, list or map, whose rules
// protovalidate applies even when it is unset), a rule its zero value
// breaks: a minimum length or item count of one or more, a set of allowed
// values without the zero value, a pattern or format the empty string does
// not match, a bound that excludes zero. A field with presence (a message,
// an optional scalar, a oneof member) is checked only when set, and a field
// whose rules ignore its zero value is never required. CEL rules are not
// looked at: they stay the gateway's (docs/design/console.md, "The API
// reference").
func required(fd protoreflect.FieldDescriptor) bool {
	r := rules(fd)
	if r == nil {
		return false
	}
	if r.GetRequired() {
		return true
	}
	if ig := r.GetIgnore(); ig == validate.Ignore_IGNORE_IF_ZERO_VALUE || ig == validate.Ignore_IGNORE_ALWAYS {
		return false
	}
	if fd.IsMap() {
		return r.GetMap().GetMinPairs() >= 1
	}
	if fd.IsList() {
		return r.GetRepeated().GetMinItems() >= 1
	}
	if fd.HasPresence() {
		return false
	}
	return zeroFails(r)
}

// zeroFails reports whether a scalar's zero value breaks one of r's rules.
func zeroFails(r *validate.FieldRules) bool {
	if s := r.GetString(); s != nil {
		switch {
		case s.GetMinLen() >= 1, s.GetLen() >= 1, s.GetMinBytes() >= 1, s.GetLenBytes() >= 1,
			s.HasConst() && s.GetConst() != "",
			len(s.GetIn()) > 0 && !slices.Contains(s.GetIn(), ""),
			slices.Contains(s.GetNotIn(), ""),
			s.GetPrefix() != "", s.GetSuffix() != "", s.GetContains() != "":
			return true
		case s.HasPattern():
			re, err := regexp.Compile(s.GetPattern())
			return err == nil && !re.MatchString("")
		case s.HasWellKnown() && s.GetWellKnownRegex() == validate.KnownRegex_KNOWN_REGEX_UNSPECIFIED:
			// email, hostname, ip, uri, uuid, …: each refuses "".
			return true
		}
		return false
	}
	if b := r.GetBytes(); b != nil {
		return b.GetMinLen() >= 1 || b.GetLen() >= 1 || (b.HasConst() && len(b.GetConst()) > 0)
	}
	if e := r.GetEnum(); e != nil {
		return (e.HasConst() && e.GetConst() != 0) || (len(e.GetIn()) > 0 && !slices.Contains(e.GetIn(), 0)) || slices.Contains(e.GetNotIn(), 0)
	}
	if b := r.GetBool(); b != nil {
		return b.HasConst() && b.GetConst()
	}
	type num = numberRule
	var n *num
	switch {
	case r.GetInt32() != nil:
		i := r.GetInt32()
		n = &num{i.HasConst(), float64(i.GetConst()), floats(i.GetIn()), floats(i.GetNotIn()), i.HasGt(), float64(i.GetGt()), i.HasGte(), float64(i.GetGte()), i.HasLt(), float64(i.GetLt()), i.HasLte(), float64(i.GetLte())}
	case r.GetInt64() != nil:
		i := r.GetInt64()
		n = &num{i.HasConst(), float64(i.GetConst()), floats(i.GetIn()), floats(i.GetNotIn()), i.HasGt(), float64(i.GetGt()), i.HasGte(), float64(i.GetGte()), i.HasLt(), float64(i.GetLt()), i.HasLte(), float64(i.GetLte())}
	case r.GetUint32() != nil:
		i := r.GetUint32()
		n = &num{i.HasConst(), float64(i.GetConst()), floats(i.GetIn()), floats(i.GetNotIn()), i.HasGt(), float64(i.GetGt()), i.HasGte(), float64(i.GetGte()), i.HasLt(), float64(i.GetLt()), i.HasLte(), float64(i.GetLte())}
	case r.GetUint64() != nil:
		i := r.GetUint64()
		n = &num{i.HasConst(), float64(i.GetConst()), floats(i.GetIn()), floats(i.GetNotIn()), i.HasGt(), float64(i.GetGt()), i.HasGte(), float64(i.GetGte()), i.HasLt(), float64(i.GetLt()), i.HasLte(), float64(i.GetLte())}
	case r.GetDouble() != nil:
		d := r.GetDouble()
		n = &num{d.HasConst(), d.GetConst(), d.GetIn(), d.GetNotIn(), d.HasGt(), d.GetGt(), d.HasGte(), d.GetGte(), d.HasLt(), d.GetLt(), d.HasLte(), d.GetLte()}
	case r.GetFloat() != nil:
		d := r.GetFloat()
		n = &num{d.HasConst(), float64(d.GetConst()), floats(d.GetIn()), floats(d.GetNotIn()), d.HasGt(), float64(d.GetGt()), d.HasGte(), float64(d.GetGte()), d.HasLt(), float64(d.GetLt()), d.HasLte(), float64(d.GetLte())}
	}
	return n != nil && n.refusesZero()
}

// numberRule is a number's rules, as float64s.
type numberRule struct {
	hasConst  bool
	constant  float64
	in, notIn []float64
	hasGt     bool
	gt        float64
	hasGte    bool
	gte       float64
	hasLt     bool
	lt        float64
	hasLte    bool
	lte       float64
}

func (n *numberRule) refusesZero() bool {
	if (n.hasConst && n.constant != 0) || (len(n.in) > 0 && !slices.Contains(n.in, 0)) || slices.Contains(n.notIn, 0) {
		return true
	}
	aboveLow := (!n.hasGt || 0 > n.gt) && (!n.hasGte || 0 >= n.gte)
	belowHigh := (!n.hasLt || 0 < n.lt) && (!n.hasLte || 0 <= n.lte)
	low, high := n.hasGt || n.hasGte, n.hasLt || n.hasLte
	if low && high {
		lo, hi := n.gt, n.lt
		if n.hasGte {
			lo = n.gte
		}
		if n.hasLte {
			hi = n.lte
		}
		if lo > hi {
			// protovalidate's exclusive range: outside [hi, lo].
			return !(aboveLow || belowHigh)
		}
	}
	return !(aboveLow && belowHigh)
}

func floats[T int32 | int64 | uint32 | uint64 | float32](xs []T) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// constrain copies the protovalidate rules that have a JSON Schema keyword
// onto s: string lengths and pattern, integer bounds, list sizes and
// uniqueness. CEL rules and the rest stay enforced by the gateway only.
func constrain(s *Schema, fd protoreflect.FieldDescriptor) {
	r := rules(fd)
	if r == nil {
		return
	}
	if rep := r.GetRepeated(); rep != nil && s.Type == "array" {
		if rep.HasMinItems() {
			s.MinItems = ptr(rep.GetMinItems())
		}
		if rep.HasMaxItems() {
			s.MaxItems = ptr(rep.GetMaxItems())
		}
		s.UniqueItems = rep.GetUnique()
		if s.Items != nil && s.Items.Ref == "" {
			scalar(s.Items, rep.GetItems())
		}
		return
	}
	if s.Type != "array" && s.Ref == "" {
		scalar(s, r)
	}
}

func scalar(s *Schema, r *validate.FieldRules) {
	if str := r.GetString(); str != nil {
		if str.HasLen() {
			s.MinLength, s.MaxLength = ptr(str.GetLen()), ptr(str.GetLen())
		}
		if str.HasMinLen() {
			s.MinLength = ptr(str.GetMinLen())
		}
		if str.HasMaxLen() {
			s.MaxLength = ptr(str.GetMaxLen())
		}
		if str.HasPattern() {
			s.Pattern = str.GetPattern()
		}
		if len(str.GetIn()) > 0 {
			s.Enum = append([]string{}, str.GetIn()...)
		}
		switch {
		case str.GetEmail():
			s.Format = "email"
		case str.GetUri():
			s.Format = "uri"
		case str.GetUuid():
			s.Format = "uuid"
		}
	}
	if i := r.GetInt32(); i != nil {
		bounds(s, i.HasGte(), float64(i.GetGte()), i.HasGt(), float64(i.GetGt()), i.HasLte(), float64(i.GetLte()), i.HasLt(), float64(i.GetLt()))
	}
	if i := r.GetInt64(); i != nil && s.Type == "integer" {
		bounds(s, i.HasGte(), float64(i.GetGte()), i.HasGt(), float64(i.GetGt()), i.HasLte(), float64(i.GetLte()), i.HasLt(), float64(i.GetLt()))
	}
	if i := r.GetUint32(); i != nil {
		bounds(s, i.HasGte(), float64(i.GetGte()), i.HasGt(), float64(i.GetGt()), i.HasLte(), float64(i.GetLte()), i.HasLt(), float64(i.GetLt()))
	}
	if d := r.GetDouble(); d != nil {
		bounds(s, d.HasGte(), d.GetGte(), d.HasGt(), d.GetGt(), d.HasLte(), d.GetLte(), d.HasLt(), d.GetLt())
	}
}

// bounds sets minimum and maximum (OpenAPI 3.0: exclusive ones as flags).
func bounds(s *Schema, hasGte bool, gte float64, hasGt bool, gt float64, hasLte bool, lte float64, hasLt bool, lt float64) {
	switch {
	case hasGte:
		s.Minimum = ptr(gte)
	case hasGt:
		s.Minimum, s.ExclusiveMinimum = ptr(gt), true
	}
	switch {
	case hasLte:
		s.Maximum = ptr(lte)
	case hasLt:
		s.Maximum, s.ExclusiveMaximum = ptr(lt), true
	}
}
