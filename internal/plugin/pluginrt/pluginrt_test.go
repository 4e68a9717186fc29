package pluginrt

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
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
