package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/svcplatform/svc/internal/jsonobj"
)

// chatRequest is a validated chat completion request. fields keeps every
// top-level field as sent, unknown ones included, so that the request can
// be passed on to an upstream with only what the router must change.
type chatRequest struct {
	Model        string
	Messages     []message // contents flattened to text, for svc-builtin and token counts
	Stream       bool
	IncludeUsage bool
	MaxTokens    int // 0: none given
	N            int
	// tool is the function svc-builtin calls instead of answering in text
	// (see checkBuiltinTools); "" for text and for other models.
	tool          string
	fields        map[string]json.RawMessage
	fieldsInOrder []string
	// raw is the body as sent; passed on as it is when nothing in it must
	// change and no key appears twice (an upstream might read the other
	// one than the router did).
	raw     []byte
	dupKeys bool
}

// roles are the message roles accepted (CONTRACT §7, §20): a tool
// message carries a tool's result back to the model.
var roles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true}

// parseRequest reads and validates an OpenAI chat completion body (see
// check for what is checked, the refusal naming the field in param);
// every field, known or not, is kept as it came.
func parseRequest(body []byte) (*chatRequest, *apiError) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return nil, invalid("", "invalid_json", "We could not parse the JSON body of your request: it must be a JSON object.")
	}
	if !utf8.Valid(body) {
		return nil, invalid("", "invalid_json", "We could not parse the JSON body of your request: it is not valid UTF-8.")
	}
	if !json.Valid(body) {
		var v any
		return nil, badJSON(json.Unmarshal(body, &v)) // for the message saying where
	}
	req := &chatRequest{fields: make(map[string]json.RawMessage, 8), fieldsInOrder: make([]string, 0, 8), N: 1}
	// The walk reads each top-level member once, without decoding it;
	// check decodes the known ones.
	if !jsonobj.Members(body, func(key, value []byte) bool {
		k := fieldName(key)
		if _, dup := req.fields[k]; !dup {
			req.fieldsInOrder = append(req.fieldsInOrder, k)
		} else {
			req.dupKeys = true
		}
		req.fields[k] = value
		return true
	}) {
		return nil, invalid("", "invalid_json", "We could not parse the JSON body of your request: it must be a JSON object.")
	}
	if e := req.check(); e != nil {
		return nil, e
	}
	req.raw = body
	return req, nil
}

// fieldName is key as a string: a constant for the fields OpenAI's
// clients send most (no allocation per field), a copy for others.
func fieldName(key []byte) string {
	switch string(key) {
	case "model":
		return "model"
	case "messages":
		return "messages"
	case "stream":
		return "stream"
	case "stream_options":
		return "stream_options"
	case "temperature":
		return "temperature"
	case "top_p":
		return "top_p"
	case "max_tokens":
		return "max_tokens"
	case "max_completion_tokens":
		return "max_completion_tokens"
	case "n":
		return "n"
	case "tools":
		return "tools"
	case "tool_choice":
		return "tool_choice"
	case "response_format":
		return "response_format"
	case "user":
		return "user"
	}
	return string(key)
}

func badJSON(err error) *apiError {
	return invalid("", "invalid_json", "We could not parse the JSON body of your request: %v.", err)
}

// present tells whether a field was sent with a value other than null.
func (r *chatRequest) present(name string) (json.RawMessage, bool) {
	raw, ok := r.fields[name]
	if !ok || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

// check validates what the plugin itself reads: the model (routing), the
// messages' shape (svc-builtin and usage estimates read their text; the
// roles are what every upstream knows), temperature's range (CONTRACT
// §7), and the fields that change what the plugin does (stream,
// stream_options, n and max_tokens, which svc-builtin obeys; tools and
// tool_choice for svc-builtin alone). Everything
// else (tools, response_format, top_p, stop, seed, logprobs, fields not
// invented yet) is the upstream's to judge: it goes there as sent.
func (r *chatRequest) check() *apiError {
	raw, ok := r.present("model")
	if !ok {
		return invalid("model", "missing_required_parameter", "Missing required parameter: 'model'.")
	}
	if r.Model, ok = jsonobj.String(raw); !ok || r.Model == "" {
		return invalid("model", "invalid_type", "Invalid type for 'model': expected a non-empty string.")
	}
	if e := r.checkMessages(); e != nil {
		return e
	}
	if e := checkNumber(r, "temperature", 0, 2, false); e != nil {
		return e
	}
	for _, name := range []string{"max_tokens", "max_completion_tokens"} {
		if e := checkNumber(r, name, 1, math.MaxInt32, true); e != nil {
			return e
		}
		if raw, ok := r.present(name); ok {
			v, _ := strconv.ParseFloat(string(raw), 64) // an integer, checked above
			if n := int(v); r.MaxTokens == 0 || n < r.MaxTokens {
				r.MaxTokens = n
			}
		}
	}
	if e := checkNumber(r, "n", 1, 128, true); e != nil {
		return e
	}
	if raw, ok := r.present("n"); ok {
		v, _ := strconv.ParseFloat(string(raw), 64) // an integer, checked above
		r.N = int(v)
	}
	if raw, ok := r.present("stream"); ok {
		if r.Stream, ok = jsonBool(raw); !ok {
			return invalid("stream", "invalid_type", "Invalid type for 'stream': expected a boolean.")
		}
	}
	if raw, ok := r.present("stream_options"); ok {
		var usage []byte // the last include_usage, as encoding/json reads duplicates
		if !jsonobj.Members(raw, func(k, v []byte) bool {
			if string(k) == "include_usage" {
				usage = v
			}
			return true
		}) {
			return invalid("stream_options", "invalid_type", "Invalid type for 'stream_options': expected an object.")
		}
		if usage != nil && string(usage) != "null" {
			if r.IncludeUsage, ok = jsonBool(usage); !ok {
				return invalid("stream_options.include_usage", "invalid_type", "Invalid type for 'stream_options.include_usage': expected a boolean.")
			}
		}
		if !r.Stream {
			return invalid("stream_options", "invalid_value", "The 'stream_options' parameter is only allowed when 'stream' is enabled.")
		}
	}
	if r.Model == builtinModel {
		return r.checkBuiltinTools()
	}
	return nil
}

func (r *chatRequest) checkMessages() *apiError {
	raw, ok := r.present("messages")
	if !ok {
		return invalid("messages", "missing_required_parameter", "Missing required parameter: 'messages'.")
	}
	// The body is valid JSON (parseRequest): the walks read its
	// structure, and only what is checked is decoded; tool_calls, name,
	// audio and the like stay in the raw body for the upstream.
	var e *apiError
	r.Messages = make([]message, 0, 4)
	if !jsonobj.Elements(raw, func(item []byte) bool {
		r.Messages, e = appendMessage(r.Messages, item)
		return e == nil
	}) {
		return invalid("messages", "invalid_type", "Invalid type for 'messages': expected an array of objects.")
	}
	if e != nil {
		return e
	}
	if len(r.Messages) == 0 {
		return invalid("messages", "empty_array", "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	return nil
}

// appendMessage checks message item (the len(msgs)th) and appends its
// role and text. Keys match as encoding/json matches a struct's fields:
// case-insensitively, the last one written winning.
func appendMessage(msgs []message, item []byte) ([]message, *apiError) {
	i := len(msgs)
	var roleRaw, content, toolCallID []byte
	if string(item) != "null" && !jsonobj.Members(item, func(k, v []byte) bool {
		switch {
		case bytes.EqualFold(k, []byte("role")):
			roleRaw = v
		case bytes.EqualFold(k, []byte("content")):
			content = v
		case bytes.EqualFold(k, []byte("tool_call_id")):
			toolCallID = v
		}
		return true
	}) {
		param := msgParam(i)
		return msgs, invalid(param, "invalid_type", "Invalid type for '%s': expected an object.", param)
	}
	if roleRaw == nil || string(roleRaw) == "null" {
		param := msgParam(i)
		return msgs, invalid(param+".role", "missing_required_parameter", "Missing required parameter: '%s.role'.", param)
	}
	role, ok := jsonobj.String(roleRaw)
	if !ok {
		param := msgParam(i)
		return msgs, invalid(param, "invalid_type", "Invalid type for '%s': expected an object.", param)
	}
	if !roles[role] {
		return msgs, invalid(msgParam(i)+".role", "invalid_value",
			"Invalid value: '%s'. Supported values are: 'system', 'developer', 'user', 'assistant' and 'tool'.", role)
	}
	if role == "tool" {
		// The upstream pairs the result with its call by this id.
		switch {
		case len(toolCallID) == 0 || string(toolCallID) == "null":
			param := msgParam(i)
			return msgs, invalid(param+".tool_call_id", "missing_required_parameter", "Missing required parameter: '%s.tool_call_id'.", param)
		case toolCallID[0] != '"':
			param := msgParam(i)
			return msgs, invalid(param+".tool_call_id", "invalid_type", "Invalid type for '%s.tool_call_id': expected a string.", param)
		}
	}
	text, e := contentText(content, i, role)
	if e != nil {
		return msgs, e
	}
	return append(msgs, message{Role: role, Content: text}), nil
}

// jsonBool reads a JSON boolean.
func jsonBool(raw []byte) (v, ok bool) {
	switch string(raw) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// msgParam names message i in a refusal's param. Only refusals need it,
// so it is not formatted for every message.
func msgParam(i int) string { return "messages[" + strconv.Itoa(i) + "]" }

// contentText accepts a string or an array of content parts and returns
// the text of its text parts. Parts of other types (image_url,
// input_audio, file, refusal, types to come) need only a type: they go to
// the upstream as sent. An assistant message may leave content out or
// null (a reply that only called tools).
func contentText(raw json.RawMessage, msg int, role string) (string, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		if role == "assistant" {
			return "", nil
		}
		param := msgParam(msg) + ".content"
		return "", invalid(param, "missing_required_parameter", "Missing required parameter: '%s'.", param)
	}
	switch raw[0] {
	case '"':
		s, ok := jsonobj.String(raw)
		if !ok {
			param := msgParam(msg) + ".content"
			return "", invalid(param, "invalid_type", "Invalid type for '%s': expected a string.", param)
		}
		return s, nil
	case '[':
		if s, e, ok := partsText(raw, msg); ok {
			return s, e
		}
	}
	param := msgParam(msg) + ".content"
	return "", invalid(param, "invalid_type", "Invalid type for '%s': expected a string or an array of content parts.", param)
}

// partsText returns the text of the text parts of content parts raw, or
// the refusal of a part without its type or text; ok is false when raw is
// not an array of objects whose type and text are strings, as
// encoding/json would fail to decode it (a null part is one without a
// type).
func partsText(raw []byte, msg int) (text string, e *apiError, ok bool) {
	var b strings.Builder
	i, bad := 0, false
	walked := jsonobj.Elements(raw, func(part []byte) bool {
		var typ, txt []byte
		if string(part) != "null" && !jsonobj.Members(part, func(k, v []byte) bool {
			switch {
			case bytes.EqualFold(k, []byte("type")):
				typ = v
			case bytes.EqualFold(k, []byte("text")):
				txt = v
			}
			return true
		}) {
			bad = true
			return false
		}
		t, tok := nullableString(typ)
		s, sok := nullableString(txt)
		if !tok || !sok {
			bad = true
			return false
		}
		switch {
		case e != nil:
			// The first refusal stands; the rest is still checked for type.
		case t == nil:
			pp := fmt.Sprintf("%s.content[%d]", msgParam(msg), i)
			e = invalid(pp+".type", "missing_required_parameter", "Missing required parameter: '%s.type'.", pp)
		case *t != "text":
		case s == nil:
			pp := fmt.Sprintf("%s.content[%d]", msgParam(msg), i)
			e = invalid(pp+".text", "missing_required_parameter", "Missing required parameter: '%s.text'.", pp)
		default:
			b.WriteString(*s)
		}
		i++
		return true
	})
	if !walked || bad {
		return "", nil, false
	}
	if e != nil {
		return "", e, true
	}
	return b.String(), nil, true
}

// nullableString reads an optional string member: nil when absent or
// null; ok is false when it is another type.
func nullableString(raw []byte) (s *string, ok bool) {
	if raw == nil || string(raw) == "null" {
		return nil, true
	}
	v, ok := jsonobj.String(raw)
	if !ok {
		return nil, false
	}
	return &v, true
}

// checkNumber checks an optional number field's type and range.
func checkNumber(r *chatRequest, name string, lo, hi float64, integer bool) *apiError {
	raw, ok := r.present(name)
	if !ok {
		return nil
	}
	v, err := jsonNumber(raw)
	if err != nil {
		what := "a number"
		if integer {
			what = "an integer"
		}
		return invalid(name, "invalid_type", "Invalid type for '%s': expected %s.", name, what)
	}
	if integer && v != math.Trunc(v) {
		return invalid(name, "invalid_type", "Invalid type for '%s': expected an integer, but got a decimal number instead.", name)
	}
	switch {
	case v < lo:
		return invalid(name, "decimal_below_min_value",
			"Invalid '%s': decimal below minimum value. Expected a value >= %s, but got %s instead.", name, num(lo), num(v))
	case v > hi:
		return invalid(name, "decimal_above_max_value",
			"Invalid '%s': decimal above maximum value. Expected a value <= %s, but got %s instead.", name, num(hi), num(v))
	}
	return nil
}

// jsonNumber reads a JSON number (the body is valid JSON) into a float64,
// refusing other types and numbers out of its range, as encoding/json.
func jsonNumber(raw []byte) (float64, error) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseFloat(string(raw), 64)
}

func num(v float64) string { return fmt.Sprint(v) }

// askUsage is the member a stream adds when the client did not ask for
// usage.
const askUsage = `,"stream_options":{"include_usage":true}`

// upstreamBody is the request as sent to an upstream: the client's fields
// as they came, unknown ones included, except that a stream always asks
// for usage (so that usage is recorded even when the client did not ask).
func (r *chatRequest) upstreamBody() []byte {
	if !r.dupKeys && (!r.Stream || r.IncludeUsage) {
		return r.raw // nothing to change: no copy, no encoding
	}
	if _, asked := r.fields["stream_options"]; !r.dupKeys && !asked {
		// Most streams: the body as sent with stream_options added at its
		// end, in one copy (raw is an object with members: it has a model).
		end := bytes.LastIndexByte(r.raw, '}')
		b := make([]byte, 0, end+len(askUsage)+1)
		b = append(b, r.raw[:end]...)
		b = append(b, askUsage...)
		return append(b, '}')
	}
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	put := func(k string, v []byte) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(v)
	}
	for _, k := range r.fieldsInOrder {
		if k == "stream_options" && r.Stream {
			continue
		}
		put(k, r.fields[k])
	}
	if r.Stream {
		so := map[string]json.RawMessage{}
		if raw, ok := r.present("stream_options"); ok {
			_ = json.Unmarshal(raw, &so)
		}
		so["include_usage"] = json.RawMessage("true")
		v, _ := json.Marshal(so)
		put("stream_options", v)
	}
	b.WriteByte('}')
	return b.Bytes()
}
