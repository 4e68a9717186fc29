package openai

import (
	"google.golang.org/protobuf/encoding/protowire"
)

// answer is an HttpResponse or an HttpStreamPart (the same field numbers
// for what they share) read in place: body and events are slices of the
// plugin's message, not copies, valid while it is. proto.Unmarshal copies
// every bytes field, the edge's largest allocation per completion. headers
// reports a response carrying headers (field 5 of HttpResponse), which the
// caller reads with proto.Unmarshal instead: a page's rare path.
type answer struct {
	status, retryAfter int32
	upstreamNanos      int64
	body               []byte // HttpResponse.body, HttpStreamPart.data
	events             []byte // HttpStreamPart.events
	headers            bool
}

// Field numbers shared by HttpResponse and HttpStreamPart (edge.proto);
// field 5 is HttpResponse.headers and HttpStreamPart.events.
const (
	fieldStatus        = 1
	fieldBody          = 2
	fieldRetryAfter    = 3
	fieldUpstreamNanos = 4
	fieldFive          = 5
)

// readAnswer reads b, an HttpResponse when part is false, an HttpStreamPart
// when true, as proto.Unmarshal would: the last of a repeated field wins,
// unknown fields are skipped.
func readAnswer(b []byte, part bool) (answer, error) {
	var a answer
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return answer{}, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case typ == protowire.VarintType && (num == fieldStatus || num == fieldRetryAfter || num == fieldUpstreamNanos):
			var v uint64
			v, n = protowire.ConsumeVarint(b)
			switch num {
			case fieldStatus:
				a.status = int32(v)
			case fieldRetryAfter:
				a.retryAfter = int32(v)
			default:
				a.upstreamNanos = int64(v)
			}
		case typ == protowire.BytesType && num == fieldBody:
			a.body, n = protowire.ConsumeBytes(b)
		case typ == protowire.BytesType && num == fieldFive && part:
			a.events, n = protowire.ConsumeBytes(b)
		case typ == protowire.BytesType && num == fieldFive:
			a.headers = true
			_, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return answer{}, protowire.ParseError(n)
		}
		b = b[n:]
	}
	return a, nil
}
