package bench

import (
	"os"
	"os/exec"
	"testing"
)

func TestChildrenListsAChildAndTreeCPUTimeCountsThisProcess(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep binary:", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	found := false
	for _, c := range Children(os.Getpid()) {
		if c.PID == cmd.Process.Pid && c.Name == "sleep" {
			found = true
		}
	}
	if !found {
		t.Fatalf("Children(%d) = %v, want the sleep child %d", os.Getpid(), Children(os.Getpid()), cmd.Process.Pid)
	}
	for i := 0; CPUTime() < 20e6; i++ { // burn 20 ms so the tree's ticks are not zero
		_ = i * i
	}
	if got := TreeCPUTime(os.Getpid()); got <= 0 {
		t.Fatalf("TreeCPUTime(self) = %v after this process used %v", got, CPUTime())
	}
}
