package protocol

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// MaxFrame bounds one fast-lane frame. The gateway refuses request bodies
// over 1 MiB; responses (lists) may be larger, but never this large.
const MaxFrame = 64 << 20

// callIDField is the field number of call_id in InvokeRequest.
const callIDField = 6

// frameFlag is the top bit of a frame's length word, free because MaxFrame
// is far below 2 GiB. On a request it marks a server-streaming call; on an
// answer it says that more answers of the same call follow. An answer
// without it ends its call, so a unary call's answer never carries it and
// a stream ends with one frame without it.
const frameFlag = 1 << 31

// appendFrame appends m as one frame to buf. When callID is not zero it is
// appended as InvokeRequest.call_id: protobuf keeps the last value of a
// repeated scalar field, so the caller's message is never modified.
func appendFrame(buf []byte, m proto.Message, callID uint64) ([]byte, error) {
	return appendFlaggedFrame(buf, m, callID, false)
}

// appendFlaggedFrame is appendFrame with frameFlag set when flag is true.
func appendFlaggedFrame(buf []byte, m proto.Message, callID uint64, flag bool) ([]byte, error) {
	start := len(buf)
	buf = append(buf, 0, 0, 0, 0)
	buf, err := proto.MarshalOptions{}.MarshalAppend(buf, m)
	if err != nil {
		return buf[:start], fmt.Errorf("encode frame: %w", err)
	}
	if callID != 0 {
		buf = protowire.AppendTag(buf, callIDField, protowire.VarintType)
		buf = protowire.AppendVarint(buf, callID)
	}
	n := len(buf) - start - 4
	if n > MaxFrame {
		return buf[:start], fmt.Errorf("encode frame: %d bytes is over the %d-byte limit", n, MaxFrame)
	}
	head := uint32(n)
	if flag {
		head |= frameFlag
	}
	binary.BigEndian.PutUint32(buf[start:], head)
	return buf, nil
}

// readFrame reads one frame's body and its frameFlag. It reuses *scratch
// for frames that fit, so the body is only valid until the next call
// (proto.Unmarshal copies what it keeps).
func readFrame(r *bufio.Reader, scratch *[]byte) (body []byte, flag bool, err error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, false, err
	}
	n := binary.BigEndian.Uint32(head[:])
	flag, n = n&frameFlag != 0, n&^frameFlag
	if n > MaxFrame {
		return nil, false, fmt.Errorf("frame of %d bytes is over the %d-byte limit", n, MaxFrame)
	}
	if int(n) > cap(*scratch) {
		*scratch = make([]byte, n)
	}
	body = (*scratch)[:n]
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, false, err
	}
	return body, flag, nil
}
