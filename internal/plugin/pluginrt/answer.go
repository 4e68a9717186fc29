package pluginrt

import (
	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
)

// Answers are encoded into buffers from a small free list, and the fast
// lane hands each back once it has written it (releaseAnswer, its
// LaneServer.Release), so that encoding a call's answer allocates nothing
// in the steady state. Answers sent over gRPC or in-process stay with
// their receiver and are left to the collector. The list is bounded, and
// keeps no buffer over maxKeptAnswer, and the trim that follows a burst
// empties it (dropAnswers), so a burst or a rare large answer leaves
// nothing behind once traffic stops.
var freeAnswers = make(chan []byte, 16)

// maxKeptAnswer is the largest answer buffer the free list keeps, as the
// lane keeps its own frame buffer.
const maxKeptAnswer = 64 << 10

// EncodeAnswer encodes a handler's answer, into a buffer from the free
// list when it has one.
func EncodeAnswer(m proto.Message) ([]byte, error) {
	select {
	case b := <-freeAnswers:
		return proto.MarshalOptions{}.MarshalAppend(b[:0], m)
	default:
		return proto.Marshal(m)
	}
}

// releaseAnswer puts the buffer resp carries back on the free list. The
// lane calls it once per answer, after which nothing refers to the buffer;
// resp no longer carries it, so a second release of resp does nothing.
func releaseAnswer(resp *pluginv1.InvokeResponse) {
	b := resp.GetResponse()
	if cap(b) == 0 || cap(b) > maxKeptAnswer {
		return
	}
	resp.Response = nil
	select {
	case freeAnswers <- b:
	default:
	}
}

// dropAnswers empties the free list, for the trim after a burst.
func dropAnswers() {
	for {
		select {
		case <-freeAnswers:
		default:
			return
		}
	}
}
