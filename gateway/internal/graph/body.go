package graph

import (
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/internal/plugin/manifestcheck"
)

// A Graph write's body is a JSON object whose keys are request fields. The
// general path decodes it with encoding/json into each field's raw JSON
// (decodeObject) and each field with protojson on its own (bindBody), so
// that a refusal names its field: about 40 allocations for a post's two
// strings, half the gateway's garbage per write (BenchmarkGraphWrite).
// Nearly every write is flatter than that: a few keys, each a string. Such
// a body is read in one pass here, its strings cut from one copy of the
// body (flatBody), and bindFlat sets them on the request when it can bind
// them exactly as bindBody would (singular string fields, proto3 optional
// ones too, outside real oneofs, each once). Anything else — another value type, an escape this reader
// does not decode, invalid UTF-8, a repeated key, an unknown field, a path
// variable that differs — takes the general path, which also writes the
// refusal. FuzzFlatBodyBindsAsTheGeneralPath compares both.

// A form-encoded body (Meta's habit, CONTRACT §20) is bound by the same
// rules: formFields turns it into the fields of the JSON body it stands
// for, which bindBody binds, so that its refusals are the JSON body's.

// writeBody is the JSON object of a Graph write: read flat when it could
// be, else as its fields' raw JSON; or a form-encoded body.
type writeBody struct {
	// fields is the general path's form; nil while flat holds the body.
	fields map[string]json.RawMessage
	// form is a form-encoded body, bound by formFields; nil for JSON.
	form   url.Values
	flat   flatBody
	isFlat bool
}

// useForm takes a form-encoded body, its access_token taken out. Each key
// is given once. A batch's value is its JSON text.
func (b *writeBody) useForm(form url.Values) error {
	for _, k := range slices.Sorted(maps.Keys(form)) {
		if n := len(form[k]); n != 1 {
			return apierr.Invalid(k, "Invalid parameter: %s is given %d times.", k, n)
		}
		if !utf8.ValidString(k) || !utf8.ValidString(form[k][0]) {
			return apierr.Invalid(k, "Invalid parameter: %s is not valid UTF-8.", k)
		}
	}
	if batch, ok := form["batch"]; ok {
		b.fields = make(map[string]json.RawMessage, len(form))
		for k, v := range form {
			b.fields[k] = jsonString(v[0])
		}
		b.fields["batch"] = json.RawMessage(batch[0])
		return nil
	}
	b.form = form
	return nil
}

// formFields is a form body as the fields of a JSON body for msg: a value
// is its field's JSON text (events=["a","b"], message={"text":"hi"},
// limit=5, published=true) when it is JSON, and a JSON string of the text
// otherwise, and always for a singular string or bytes field (scalars as
// their text). A value that is neither is refused by bindBody with its
// field's usual error, as in a JSON body.
func formFields(md protoreflect.MessageDescriptor, form url.Values) map[string]json.RawMessage {
	fields := make(map[string]json.RawMessage, len(form))
	for k, v := range form {
		text := v[0]
		fd := manifestcheck.FieldByName(md, k)
		asText := fd == nil || !fd.IsList() && !fd.IsMap() &&
			(fd.Kind() == protoreflect.StringKind || fd.Kind() == protoreflect.BytesKind)
		if !asText && json.Valid([]byte(text)) {
			fields[k] = json.RawMessage(text)
		} else {
			fields[k] = jsonString(text)
		}
	}
	return fields
}

// jsonString is s as a JSON string; s is valid UTF-8.
func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// parse reads raw, which must be one JSON object.
func (b *writeBody) parse(raw []byte) error {
	if b.isFlat = parseFlat(raw, &b.flat); b.isFlat {
		return nil
	}
	return b.decode(raw)
}

// decode reads raw into fields. (Into a variable of its own: decodeObject's
// pointer would move the whole body, flat form included, to the heap.)
func (b *writeBody) decode(raw []byte) error {
	var fields map[string]json.RawMessage
	err := decodeObject(raw, &fields)
	b.fields = fields
	return err
}

// general is the body's general form, read again from its bytes when it
// was read flat. A flat body is one JSON object, so it cannot fail.
func (b *writeBody) general() (map[string]json.RawMessage, error) {
	if b.isFlat {
		if err := b.decode(b.flat.raw); err != nil {
			return nil, err
		}
		b.isFlat = false
	}
	return b.fields, nil
}

// node is the body's node key, "" when it has none.
func (b *writeBody) node() (string, error) {
	if b.form != nil {
		return b.form.Get("node"), nil
	}
	if b.isFlat {
		for _, f := range b.flat.fields[:b.flat.n] {
			if f.key == "node" {
				return f.value, nil // null is ""
			}
		}
		return "", nil
	}
	raw, ok := b.fields["node"]
	if !ok {
		return "", nil
	}
	var node string
	if err := json.Unmarshal(raw, &node); err != nil {
		return "", apierr.Invalid("node", "Invalid parameter: node must be a string.")
	}
	return node, nil
}

// bind sets the body's fields on msg, as bindBody does.
func (b *writeBody) bind(msg protoreflect.Message, vars manifestcheck.NodeVars) error {
	if b.isFlat && bindFlat(msg, &b.flat, vars) {
		return nil
	}
	if b.form != nil {
		return bindBody(msg, formFields(msg.Descriptor(), b.form), vars)
	}
	fields, err := b.general()
	if err != nil {
		return err
	}
	return bindBody(msg, fields, vars)
}

// maxFlatFields is the most keys a flat body has; a body with more takes
// the general path.
const maxFlatFields = 16

// flatBody is a JSON object whose values are all strings or null, with no
// key twice and no key that needs unescaping.
type flatBody struct {
	raw    []byte
	n      int
	fields [maxFlatFields]flatField
}

// flatField is one key of a flatBody and its value.
type flatField struct {
	key, value string
	null       bool
}

// parseFlat reads raw into body when it is a flat JSON object whose strings
// both encoding/json and protojson decode as this reader does: keys of
// printable ASCII without escapes, other than batch; values that are null
// or strings of valid UTF-8 whose escapes are JSON's short ones or \u of a
// code point that is not a surrogate. It reports false for every other
// input, valid or not, leaving it to decodeObject.
func parseFlat(raw []byte, body *flatBody) bool {
	if len(raw) < 2 {
		return false
	}
	// One copy of the body: the keys and the unescaped values are cut from
	// it, so the request's strings cost one allocation together.
	s := string(raw)
	i := skipSpace(s, 0)
	if i == len(s) || s[i] != '{' {
		return false
	}
	body.raw, body.n = raw, 0
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return skipSpace(s, i+1) == len(s)
	}
	for {
		if i == len(s) || s[i] != '"' || body.n == maxFlatFields {
			return false
		}
		start := i + 1
		for i = start; i < len(s) && s[i] != '"'; i++ {
			if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '\\' {
				return false
			}
		}
		if i == len(s) {
			return false
		}
		key := s[start:i]
		if key == "batch" {
			return false // a batch request, the general path's
		}
		for _, f := range body.fields[:body.n] {
			if f.key == key {
				return false // encoding/json keeps the last; the general path says so
			}
		}
		if i = skipSpace(s, i+1); i == len(s) || s[i] != ':' {
			return false
		}
		f := flatField{key: key}
		switch i = skipSpace(s, i+1); {
		case strings.HasPrefix(s[i:], "null"):
			f.null, i = true, i+len("null")
		case i < len(s) && s[i] == '"':
			var ok bool
			if f.value, i, ok = flatString(s, i+1); !ok {
				return false
			}
		default:
			return false
		}
		body.fields[body.n] = f
		body.n++
		if i = skipSpace(s, i); i == len(s) {
			return false
		}
		switch s[i] {
		case ',':
			i = skipSpace(s, i+1)
		case '}':
			return skipSpace(s, i+1) == len(s)
		default:
			return false
		}
	}
}

// flatString reads the JSON string starting at s[i], just after its opening
// quote, and returns its value and the index after its closing quote.
func flatString(s string, i int) (string, int, bool) {
	start, ascii := i, true
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			if !ascii && !utf8.ValidString(s[start:i]) {
				return "", 0, false
			}
			return s[start:i], i + 1, true
		case c == '\\':
			return flatEscaped(s, start, i)
		case c < 0x20:
			return "", 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", 0, false
}

// flatEscaped reads the rest of a JSON string whose first escape is at
// s[i], the string having started at s[start].
func flatEscaped(s string, start, i int) (string, int, bool) {
	var b strings.Builder
	b.Grow(len(s) - start)
	b.WriteString(s[start:i])
	from := i // the start of the run not yet written
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(s[from:i])
			v := b.String()
			return v, i + 1, utf8.ValidString(v)
		case c < 0x20:
			return "", 0, false
		case c != '\\':
			i++
			continue
		}
		b.WriteString(s[from:i])
		if i+1 == len(s) {
			return "", 0, false
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(s, i+2)
			if !ok || utf16Surrogate(r) {
				return "", 0, false // pairs and lone halves: the decoders differ
			}
			b.WriteRune(r)
			i += 4
		default:
			return "", 0, false
		}
		i += 2
		from = i
	}
	return "", 0, false
}

// hex4 reads the four hex digits at s[i].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func utf16Surrogate(r rune) bool { return 0xd800 <= r && r < 0xe000 }

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// bindFlat sets a flat body's fields on msg when it can bind them exactly
// as bindBody would, and reports whether it did; it changes msg only then.
// The node key is skipped; a path variable's key must repeat its value; a
// null is skipped; every other key must name a singular string field
// without presence (so that an empty string leaves it unset, as
// proto.Merge does), and no field may be named twice (by its name and its
// JSON name).
func bindFlat(msg protoreflect.Message, body *flatBody, vars manifestcheck.NodeVars) bool {
	md := msg.Descriptor()
	var set [maxFlatFields]protoreflect.FieldDescriptor
	for i, f := range body.fields[:body.n] {
		if f.key == "node" {
			continue
		}
		fd := manifestcheck.FieldByName(md, f.key)
		if fd == nil {
			return false
		}
		if v, isPath := vars.Get(string(fd.Name())); isPath {
			if f.null || f.value != v {
				return false
			}
			continue
		}
		if f.null {
			continue
		}
		if fd.Kind() != protoreflect.StringKind || fd.IsList() || fd.IsMap() {
			return false
		}
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			return false // the general path's key order decides between members
		}
		for _, other := range set[:i] {
			if other == fd {
				return false
			}
		}
		set[i] = fd
	}
	for i, fd := range set[:body.n] {
		// "" sets a field with presence (proto3 optional), as protojson does.
		if fd != nil && (body.fields[i].value != "" || fd.HasPresence()) {
			msg.Set(fd, protoreflect.ValueOfString(body.fields[i].value))
		}
	}
	return true
}
