package server

import (
	"fmt"

	"google.golang.org/protobuf/proto"
)

// rawMessage is a protobuf message kept in its wire form: the gateway
// forwards it to the plugin without decoding and re-encoding it.
type rawMessage struct{ b []byte }

// rawCodec is the "proto" codec for rawMessage values. Requests reach it
// only in protobuf encoding: the transcoder converts JSON and REST first.
// Real messages pass through it too: a gRPC error's details (the Graph
// error, CONTRACT §20) are marshalled by the same codec as the answers.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case *rawMessage:
		return m.b, nil
	case proto.Message:
		return proto.Marshal(m)
	}
	return nil, fmt.Errorf("server: cannot marshal %T", v)
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	switch m := v.(type) {
	case *rawMessage:
		// The caller reuses data's buffer after we return.
		m.b = append(m.b[:0], data...)
		return nil
	case proto.Message:
		return proto.Unmarshal(data, m)
	}
	return fmt.Errorf("server: cannot unmarshal into %T", v)
}
