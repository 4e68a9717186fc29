package openapi

import (
	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// rules are a field's protovalidate rules; nil when it has none.
func rules(fd protoreflect.FieldDescriptor) *validate.FieldRules {
	r, _ := proto.GetExtension(fd.Options(), validate.E_Field).(*validate.FieldRules)
	return r
}

// required: protovalidate's required rule.
func required(fd protoreflect.FieldDescriptor) bool { return rules(fd).GetRequired() }

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
