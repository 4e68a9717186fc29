package route

import "fmt"

// rawMessage is a protobuf message kept in its wire form: the gateway
// forwards it to the plugin without decoding and re-encoding it.
type rawMessage struct{ b []byte }

// rawCodec is the "proto" codec for rawMessage values. Requests reach it
// only in protobuf encoding: the transcoder converts JSON and REST first.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	m, ok := v.(*rawMessage)
	if !ok {
		return nil, fmt.Errorf("route: cannot marshal %T", v)
	}
	return m.b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	m, ok := v.(*rawMessage)
	if !ok {
		return fmt.Errorf("route: cannot unmarshal into %T", v)
	}
	// The caller reuses data's buffer after we return.
	m.b = append(m.b[:0], data...)
	return nil
}
