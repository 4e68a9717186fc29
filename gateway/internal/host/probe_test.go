package host

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The status page's probe asks the plugin itself: a serving plugin
// answers; one that does not answer (stopped, though its process is still
// the host's), or that has no process, fails; an unknown one fails.
func TestProbeAsksThePluginsHealthCall(t *testing.T) {
	b := setup(t, map[string]map[string]string{"alpha": nil, "bad": {"SVC_TESTPLUGIN_UNHEALTHY": "no database"}})
	ctx := context.Background()
	if err := b.h.Probe(ctx, "alpha"); err != nil {
		t.Fatalf("a serving plugin: %v", err)
	}
	if err := b.h.Probe(ctx, "bad"); err == nil || !strings.Contains(err.Error(), "bad is restarting") {
		t.Fatalf("a plugin without a process: %v", err)
	}
	if err := b.h.Probe(ctx, "nope"); err == nil {
		t.Fatal("an unknown plugin answered")
	}
	pid := b.info(t, "alpha").PID
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(pid, syscall.SIGCONT) }()
	// The stop takes effect asynchronously: wait until the process is.
	waitFor(t, 5*time.Second, "the plugin stopped", func() bool {
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return strings.Contains(string(st), ") T ")
	})
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := b.h.Probe(short, "alpha"); err == nil {
		t.Fatal("a stopped plugin answered its probe")
	}
	if b.info(t, "alpha").State != StateServing {
		t.Fatal("the host's state noticed the stop: the probe is not what told")
	}
}
