package openai

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// FuzzAnswersReadInPlaceAsProtoUnmarshalReadsThem: every HttpResponse and
// HttpStreamPart proto.Unmarshal accepts reads the same in place (a
// response with headers is then read by proto.Unmarshal: it must be
// flagged).
func FuzzAnswersReadInPlaceAsProtoUnmarshalReadsThem(f *testing.F) {
	for _, m := range []proto.Message{
		&pluginv1.HttpResponse{Status: 200, Body: []byte(`{"id":"x"}`), RetryAfterSeconds: 3, UpstreamNanos: 123456789},
		&pluginv1.HttpResponse{Status: -1, Headers: map[string]string{"ETag": `"a"`}},
		&pluginv1.HttpStreamPart{Status: 429, Data: []byte(`{"error":{}}`), RetryAfterSeconds: 60},
		&pluginv1.HttpStreamPart{Events: []byte("data: {}\n\ndata: [DONE]\n\n"), UpstreamNanos: 1 << 40},
	} {
		b, _ := proto.Marshal(m)
		f.Add(b)
	}
	f.Add([]byte{0x08, 0x01, 0x08, 0x02, 0x9a, 0x01, 0x00}) // a repeated status, an unknown field
	f.Fuzz(func(t *testing.T, b []byte) {
		var res pluginv1.HttpResponse
		if proto.Unmarshal(b, &res) == nil {
			got, err := readAnswer(b, false)
			if err != nil || got.status != res.Status || !bytes.Equal(got.body, res.Body) || got.retryAfter != res.RetryAfterSeconds ||
				got.upstreamNanos != res.UpstreamNanos || (!got.headers && len(res.Headers) > 0) {
				t.Fatalf("%x: read %+v (%v), proto: %v", b, got, err, &res)
			}
		}
		var part pluginv1.HttpStreamPart
		if proto.Unmarshal(b, &part) == nil {
			got, err := readAnswer(b, true)
			if err != nil || got.status != part.Status || !bytes.Equal(got.body, part.Data) || got.retryAfter != part.RetryAfterSeconds ||
				got.upstreamNanos != part.UpstreamNanos || !bytes.Equal(got.events, part.Events) {
				t.Fatalf("%x: read %+v (%v), proto: %v", b, got, err, &part)
			}
		}
	})
}
