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
	return protojson.Marshal(m)
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
// (500).
type invalidArgumentJSON struct{ *vanguard.JSONCodec }

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
