package server

import (
	"fmt"

	"connectrpc.com/connect"
	"connectrpc.com/vanguard"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/validate"
)

// HandlerOptions are the options every compiled-in Connect handler uses:
// strict JSON (unknown fields refused, CONTRACT §1), protovalidate, and
// platform errors with their GraphError detail.
func HandlerOptions() []connect.HandlerOption {
	return []connect.HandlerOption{
		connect.WithCodec(strictJSON{}),
		connect.WithInterceptors(validate.Interceptor(), apierr.Interceptor()),
	}
}

// strictJSON is Connect's "json" codec with unknown fields refused.
type strictJSON struct{}

func (strictJSON) Name() string { return "json" }

func (strictJSON) Marshal(v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("json codec: %T is not a proto message", v)
	}
	b, err := protojson.Marshal(m)
	return compactJSON(b), err
}

func (strictJSON) Unmarshal(data []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("json codec: %T is not a proto message", v)
	}
	if len(data) == 0 {
		// Connect GET requests may carry an empty message.
		proto.Reset(m)
		return nil
	}
	return protojson.Unmarshal(data, m)
}

// strictTranscoderJSON is the transcoder's JSON codec (REST bodies and
// Connect JSON for plugin services) with unknown fields refused.
func strictTranscoderJSON(res vanguard.TypeResolver) vanguard.Codec {
	c := vanguard.NewJSONCodec(res)
	c.UnmarshalOptions.DiscardUnknown = false
	return invalidArgumentJSON{c}
}

// invalidArgumentJSON reports a request body that does not decode (an
// unknown field, a wrong type) as invalid_argument, so that REST callers get
// 400 and code 100 naming the field rather than the transcoder's "unknown"
// (500); and writes answers compact (compactJSON).
type invalidArgumentJSON struct{ *vanguard.JSONCodec }

func (c invalidArgumentJSON) MarshalAppend(base []byte, msg proto.Message) ([]byte, error) {
	b, err := c.JSONCodec.MarshalAppend(base, msg)
	if err != nil {
		return nil, err
	}
	return b[:len(base)+len(compactJSON(b[len(base):]))], nil
}

func (c invalidArgumentJSON) MarshalAppendField(base []byte, msg proto.Message, field protoreflect.FieldDescriptor) ([]byte, error) {
	// Without a base: the transcoder's answer for a repeated field is cut
	// out of the whole message's JSON, not appended to base.
	b, err := c.JSONCodec.MarshalAppendField(nil, msg, field)
	if err != nil {
		return nil, err
	}
	return append(base, compactJSON(b)...), nil
}

func (c invalidArgumentJSON) Unmarshal(data []byte, msg proto.Message) error {
	if err := c.JSONCodec.Unmarshal(data, msg); err != nil {
		return connect.NewError(connect.CodeInvalidArgument, err)
	}
	return nil
}

func (c invalidArgumentJSON) UnmarshalField(data []byte, msg proto.Message, field protoreflect.FieldDescriptor) error {
	if err := c.JSONCodec.UnmarshalField(data, msg, field); err != nil {
		return connect.NewError(connect.CodeInvalidArgument, err)
	}
	return nil
}

// compactJSON removes, in place, the white space outside strings of valid
// JSON. protojson adds spaces at random on purpose (so that no one relies
// on its bytes); the answers of REST and Connect JSON are compact, and so
// the same for the same message, as the Graph's are.
func compactJSON(b []byte) []byte {
	out := b[:0]
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ', c == '\n', c == '\t', c == '\r':
			continue
		}
		out = append(out, c)
	}
	return out
}
