package pluginrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/internal/plugin/protocol"
)

func newTestPlugin(name string) *Plugin {
	return New(name, "1", nil, func(*Call, error) *pluginv1.Error { return nil })
}

func TestLogLinesAreGoPluginJSONWithTheTraceID(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := newTestPlugin("x")
	p.log = newLogger(&buf)
	call := &Call{p: p, procedure: "/a.B/C", traceID: "T1"}
	call.Logger().Warn("something", "n", 3)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("not JSON: %q", buf.String())
	}
	if line["@message"] != "something" || line["@level"] != "warn" || line["trace_id"] != "T1" ||
		line["procedure"] != "/a.B/C" || line["n"] != float64(3) || line["@timestamp"] == nil {
		t.Fatalf("log line = %v", line)
	}
}

func TestTheTrimAfterABurstEmptiesTheAnswerFreeList(t *testing.T) {
	// Not parallel: the free list is the process's.
	for range cap(freeAnswers) + 4 {
		releaseAnswer(&pluginv1.InvokeResponse{Response: make([]byte, 100, 4<<10)})
	}
	if len(freeAnswers) == 0 {
		t.Fatal("released answers were not kept for the next calls")
	}
	dropAnswers()
	if n := len(freeAnswers); n != 0 {
		t.Errorf("after the trim's hook the free list keeps %d buffers, want none", n)
	}
}

func TestStopHooksRunOnceInOrderWithADeadline(t *testing.T) {
	t.Parallel()
	p := newTestPlugin("stopper")
	var ran []int
	for i := range 2 {
		p.OnStop(func(ctx context.Context) {
			if _, ok := ctx.Deadline(); !ok {
				t.Error("a stop hook got no deadline")
			}
			ran = append(ran, i)
		})
	}
	p.stop()
	p.stop() // the gateway's death after its shutdown: nothing twice
	if len(ran) != 2 || ran[0] != 0 || ran[1] != 1 {
		t.Fatalf("hooks ran %v, want [0 1]", ran)
	}
}

func TestStopHooksAreAddedBeforeServing(t *testing.T) {
	t.Parallel()
	p := newTestPlugin("late")
	p.frozen = true // as Serve leaves it
	defer func() {
		if recover() == nil {
			t.Fatal("OnStop after Serve did not panic")
		}
	}()
	p.OnStop(func(context.Context) {})
}

func TestTheLaneAnswersDescribeAndHealthButInvokeDoesNot(t *testing.T) {
	t.Parallel()
	p := newTestPlugin("ctl")
	p.manifest = &pluginv1.Manifest{Name: "ctl", ProtocolVersion: protocol.Version}
	p.frozen = true
	ctx := context.Background()
	control := func(h protocol.Handler, proc string, req, res proto.Message) error {
		return protocol.CallControl(ctx, invokerFunc(h), proc, req, res)
	}

	var m pluginv1.Manifest
	if err := control(p.laneInvoke, protocol.ProcDescribe, &pluginv1.DescribeRequest{ProtocolVersion: protocol.Version}, &m); err != nil || m.GetName() != "ctl" {
		t.Fatalf("Describe over the lane = %v, %v", &m, err)
	}
	var fault *protocol.ControlFault
	err := control(p.laneInvoke, protocol.ProcDescribe, &pluginv1.DescribeRequest{ProtocolVersion: protocol.Version + 1}, &m)
	if !errors.As(err, &fault) || fault.Code != connectFailedPrecondition || !strings.Contains(fault.Message, "protocol version") {
		t.Fatalf("Describe from a gateway of another protocol version = %v, want failed_precondition", err)
	}
	var health pluginv1.HealthResponse
	if err := control(p.laneInvoke, protocol.ProcHealth, &pluginv1.HealthRequest{}, &health); err != nil || !health.GetServing() {
		t.Fatalf("Health over the lane = %v, %v", &health, err)
	}
	// Invoke serves the plugin's own methods (and the gateway's in-process
	// calls): the protocol's calls are not among them.
	if err := control(p.Invoke, protocol.ProcDescribe, &pluginv1.DescribeRequest{ProtocolVersion: protocol.Version}, &m); err == nil {
		t.Fatal("Invoke answered Describe")
	}
}

type invokerFunc protocol.Handler

func (f invokerFunc) Invoke(ctx context.Context, req *pluginv1.InvokeRequest) (*pluginv1.InvokeResponse, error) {
	return f(ctx, req), nil
}
