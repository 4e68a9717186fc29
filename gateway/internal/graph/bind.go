package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
	"github.com/svcplatform/svc/sdk"
)

// Paging limits of Graph list reads (CONTRACT §2), the SDK's: a plugin
// that pages with sdk.ParseWindow agrees with the Graph layer.
const (
	DefaultLimit = sdk.DefaultPageSize
	MaxLimit     = sdk.MaxPageSize
)

// reserved query parameters are read by the Graph layer itself.
var reserved = map[string]bool{"node": true, "fields": true, "access_token": true}

// bindPath sets the node's variables on msg.
func bindPath(msg protoreflect.Message, vars manifestcheck.NodeVars) error {
	for name, value := range vars.All() {
		fd := manifestcheck.FieldByName(msg.Descriptor(), name)
		if fd == nil {
			return apierr.Internal(fmt.Errorf("node variable %s is not a field of %s", name, msg.Descriptor().FullName()))
		}
		if err := setScalar(msg, fd, value); err != nil {
			return err
		}
	}
	return nil
}

// bindQuery sets query parameters on msg. Unknown parameters are refused,
// naming them.
func bindQuery(msg protoreflect.Message, q url.Values, vars manifestcheck.NodeVars) error {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, name := range keys {
		if reserved[name] {
			continue
		}
		fd := manifestcheck.FieldByName(msg.Descriptor(), name)
		if fd == nil {
			return apierr.Invalid(name, "Invalid parameter: %s is not a parameter of this node.", name)
		}
		if _, isPath := vars.Get(string(fd.Name())); isPath {
			return apierr.Invalid(name, "Invalid parameter: %s is given by the node path.", name)
		}
		values := q[name]
		if fd.IsList() {
			for _, v := range values {
				for _, part := range strings.Split(v, ",") {
					if err := appendScalar(msg, fd, part); err != nil {
						return err
					}
				}
			}
			continue
		}
		if len(values) != 1 {
			return apierr.Invalid(name, "Invalid parameter: %s is given %d times.", name, len(values))
		}
		if fd.Message() != nil {
			if err := mergeJSONField(msg, fd, json.RawMessage(values[0])); err != nil {
				return err
			}
			continue
		}
		if err := setScalar(msg, fd, values[0]); err != nil {
			return err
		}
	}
	return nil
}

// bindBody sets the fields of a JSON object body on msg. The node key is
// skipped; unknown keys are refused, naming them; each value is decoded on
// its own so a type error names its field.
func bindBody(msg protoreflect.Message, body map[string]json.RawMessage, vars manifestcheck.NodeVars) error {
	keys := make([]string, 0, len(body))
	for k := range body {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, name := range keys {
		if name == "node" {
			continue
		}
		fd := manifestcheck.FieldByName(msg.Descriptor(), name)
		if fd == nil {
			return apierr.Invalid(name, "Invalid parameter: unknown field %q.", name)
		}
		if v, isPath := vars.Get(string(fd.Name())); isPath {
			var s string
			if json.Unmarshal(body[name], &s) != nil || s != v {
				return apierr.Invalid(name, "Invalid parameter: %s does not match the node path.", name)
			}
			continue
		}
		if err := mergeJSONField(msg, fd, body[name]); err != nil {
			return err
		}
	}
	return nil
}

func mergeJSONField(msg protoreflect.Message, fd protoreflect.FieldDescriptor, value json.RawMessage) error {
	if bytes.Equal(bytes.TrimSpace(value), []byte("null")) {
		return nil
	}
	var doc bytes.Buffer
	doc.WriteString(`{`)
	// protojson looks a key up as a JSON name first: fd's name may be
	// another field's JSON name (title's json_name being "name"), while
	// fd's JSON name is its own unless JSON names clash (proto2 only).
	key := fd.JSONName()
	if msg.Descriptor().Fields().ByJSONName(key) != fd {
		key = string(fd.Name())
	}
	name, _ := json.Marshal(key)
	doc.Write(name)
	doc.WriteByte(':')
	doc.Write(value)
	doc.WriteByte('}')
	// protojson resets its target, so decode the one field alone and merge.
	one := msg.New()
	if err := protojson.Unmarshal(doc.Bytes(), one.Interface()); err != nil {
		return apierr.Invalid(string(fd.Name()), "Invalid parameter: %s must be %s.", fd.Name(), describeKind(fd))
	}
	proto.Merge(msg.Interface(), one.Interface())
	return nil
}

func setScalar(msg protoreflect.Message, fd protoreflect.FieldDescriptor, s string) error {
	v, err := parseScalar(fd, s)
	if err != nil {
		return err
	}
	msg.Set(fd, v)
	return nil
}

func appendScalar(msg protoreflect.Message, fd protoreflect.FieldDescriptor, s string) error {
	v, err := parseScalar(fd, s)
	if err != nil {
		return err
	}
	msg.Mutable(fd).List().Append(v)
	return nil
}

func parseScalar(fd protoreflect.FieldDescriptor, s string) (protoreflect.Value, error) {
	bad := func() (protoreflect.Value, error) {
		return protoreflect.Value{}, apierr.Invalid(string(fd.Name()), "Invalid parameter: %s must be %s.", fd.Name(), describeKind(fd))
	}
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(s), nil
	case protoreflect.BoolKind:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return bad()
		}
		return protoreflect.ValueOfBool(b), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return bad()
		}
		return protoreflect.ValueOfInt32(int32(n)), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return bad()
		}
		return protoreflect.ValueOfInt64(n), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return bad()
		}
		return protoreflect.ValueOfUint32(uint32(n)), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return bad()
		}
		return protoreflect.ValueOfUint64(n), nil
	case protoreflect.DoubleKind, protoreflect.FloatKind:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return bad()
		}
		if fd.Kind() == protoreflect.FloatKind {
			return protoreflect.ValueOfFloat32(float32(f)), nil
		}
		return protoreflect.ValueOfFloat64(f), nil
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByName(protoreflect.Name(s)); ev != nil {
			return protoreflect.ValueOfEnum(ev.Number()), nil
		}
		return bad()
	}
	return bad()
}

func describeKind(fd protoreflect.FieldDescriptor) string {
	kind := ""
	switch fd.Kind() {
	case protoreflect.StringKind:
		kind = "a string"
	case protoreflect.BoolKind:
		kind = "a boolean"
	case protoreflect.DoubleKind, protoreflect.FloatKind:
		kind = "a number"
	case protoreflect.EnumKind:
		kind = "one of the documented values"
	case protoreflect.MessageKind, protoreflect.GroupKind:
		kind = "an object"
	default:
		kind = "an integer"
	}
	if fd.IsMap() {
		if fd.MapValue().Kind() == protoreflect.StringKind {
			return "an object whose values are strings"
		}
		return "an object"
	}
	if fd.IsList() {
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(kind, "a "), "an ") + "s"
	}
	return kind
}

// applyLimit fills the default page size and refuses sizes over MaxLimit,
// for any request message with a limit field.
func applyLimit(msg protoreflect.Message) error {
	fd := msg.Descriptor().Fields().ByName("limit")
	if fd == nil || fd.Kind() != protoreflect.Int32Kind || fd.IsList() {
		return nil
	}
	n := msg.Get(fd).Int()
	switch {
	case n == 0:
		msg.Set(fd, protoreflect.ValueOfInt32(DefaultLimit))
	case n < 0 || n > MaxLimit:
		return apierr.Invalid("limit", "Invalid parameter: limit must be between 1 and %d.", MaxLimit)
	}
	return nil
}
