package sdk

import (
	"context"
	"testing"
)

func TestStopHooksRunOnceInOrderWithADeadline(t *testing.T) {
	t.Parallel()
	p := New(Info{Name: "stopper", Version: "1"})
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
	p := New(Info{Name: "late", Version: "1"})
	p.frozen = true // as Serve leaves it
	defer func() {
		if recover() == nil {
			t.Fatal("OnStop after Serve did not panic")
		}
	}()
	p.OnStop(func(context.Context) {})
}
