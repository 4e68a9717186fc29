package sdk

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	testpluginv1 "github.com/svcplatform/svc/gen/svc/testplugin/v1"
	"github.com/svcplatform/svc/internal/plugin/pluginrt"
)

// BenchmarkFastLaneCall measures the plugin's side of one unary call on the
// fast lane (issue 15): reading the frame, decoding the call, the SDK's
// dispatch, an Echo handler answering about 1 KB, encoding and writing the
// answer. The client writes prepared frames and reads answers into one
// buffer, so what it reports (allocations, CPU per call) is the plugin's.
//
//	go test -run '^$' -bench FastLaneCall -benchmem ./sdk/
func BenchmarkFastLaneCall(b *testing.B) {
	path := serveLane(b, echoPlugin(b), pluginrt.AllowGateway)
	c, err := net.Dial("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	text := strings.Repeat("a post of about a kilobyte ☕ ", 32)
	in, _ := proto.Marshal(&testpluginv1.EchoRequest{Id: "1000000001", Text: text})
	body, _ := proto.Marshal(&pluginv1.InvokeRequest{Procedure: "/svc.testplugin.v1.TestService/Echo", Request: in, CallId: 1,
		Principal: &pluginv1.Principal{TokenKind: pluginv1.TokenKind_TOKEN_KIND_USER, UserId: "42", AppId: "7", Scopes: []string{"pages:read", "pages:manage"}},
		TraceId:   "0123456789abcdef0123456789abcdef"})
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	frame = append(frame, body...)
	answer := make([]byte, 64<<10)
	call := func() []byte {
		if _, err := c.Write(frame); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, answer[:4]); err != nil {
			b.Fatal(err)
		}
		n := binary.BigEndian.Uint32(answer[:4])
		if _, err := io.ReadFull(c, answer[:n]); err != nil {
			b.Fatal(err)
		}
		return answer[:n]
	}
	var resp pluginv1.InvokeResponse
	var out testpluginv1.EchoResponse
	if err := proto.Unmarshal(call(), &resp); err != nil || proto.Unmarshal(resp.GetResponse(), &out) != nil || out.GetText() != text {
		b.Fatalf("the call answered %v (%v)", &resp, err)
	}
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		call()
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
}

// processCPU is this process's user and system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
