package host

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/plugin/protocol"
)

// helperEnv runs this test binary as a stand-in gateway (see runHelper).
const helperEnv = "SVC_HOST_TEST_HELPER"

// runHelper is a gateway that the test kills with SIGKILL, which no gateway
// code can intercept. It prints its plugin's pid, then waits to be killed.
//
//	host: a Host starts the plugin, with Pdeathsig as in production.
//	raw:  the plugin is started by hand, without Pdeathsig, so only the
//	      SDK's watch of its parent can stop it.
func runHelper(mode string) {
	bin := os.Getenv("SVC_HOST_TEST_PLUGIN")
	var pid int
	switch mode {
	case "dial":
		// Another process of the same user tries the plugin's fast lane.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := protocol.DialLane(ctx, os.Getenv("SVC_HOST_TEST_LANE"), 1, 0); err != nil {
			fmt.Println("refused:", err)
		} else {
			fmt.Println("admitted")
		}
		os.Exit(0)
	case "host":
		dir := filepath.Dir(bin)
		h := New(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
		if err := h.Start(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		pid = h.Plugins()[0].PID
	case "raw":
		lanes, err := os.MkdirTemp("", "svc-host-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), protocol.EnvMagicCookie+"="+protocol.MagicCookie, protocol.EnvFastLaneDir+"="+lanes)
		cmd.Stderr = os.Stderr
		// No stop pipe: only the parent watch stops it.
		out, err := cmd.StdoutPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		// The handshake line: the plugin is serving, its parent watch runs.
		if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
			fmt.Fprintln(os.Stderr, "helper: no handshake:", err)
			os.Exit(1)
		}
		pid = cmd.Process.Pid
	}
	fmt.Println(pid)
	time.Sleep(time.Minute)
	os.Exit(0)
}

func TestNoPluginOutlivesItsGateway(t *testing.T) {
	t.Parallel()
	bin, err := testpluginBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rule   string
		mode   string
		within time.Duration
	}{
		{"the kernel kills the plugin of a gateway killed with SIGKILL (Pdeathsig)", "host", 2 * time.Second},
		{"the SDK exits a plugin whose parent died, even without Pdeathsig", "raw", 4 * time.Second},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			// The host starts the test binary itself, contained as the
			// gateway contains plugins (the trampoline sets the parent-death
			// signal again after changing user); the raw start runs a
			// script.
			plugin := installTestBinary(t, dir)
			if tc.mode == "raw" {
				plugin = filepath.Join(dir, "orphan")
				script := fmt.Sprintf("#!/bin/sh\nexport SVC_TESTPLUGIN_NAME=orphan\nexec '%s' \"$@\"\n", bin)
				if err := os.WriteFile(plugin, []byte(script), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			helper := exec.Command(self, "-test.run=^$")
			helper.Env = append(os.Environ(), helperEnv+"="+tc.mode, "SVC_HOST_TEST_PLUGIN="+plugin)
			// A file, not a pipe: Wait must not wait for the plugin, which
			// inherits the helper's stderr.
			stderr, err := os.Create(filepath.Join(dir, "helper.log"))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = stderr.Close() }()
			helper.Stderr = stderr
			out, err := helper.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				_ = helper.Process.Kill()
				t.Fatalf("helper printed no pid: %v", err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil || pid <= 0 {
				t.Fatalf("helper printed %q", line)
			}
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			if processGone(pid) {
				t.Fatal("plugin not running before its gateway died")
			}
			start := time.Now()
			if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = helper.Wait()
			waitFor(t, tc.within, "the orphaned plugin to exit", func() bool { return processGone(pid) })
			t.Logf("plugin %d exited %s after its gateway", pid, time.Since(start).Round(time.Millisecond))
		})
	}
}
