package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RSS returns a process's resident set size (VmRSS in /proc/<pid>/status)
// in bytes.
func RSS(pid int) (int64, error) { return statusBytes(pid, "VmRSS:") }

// RSSFile is the part of RSS that maps files (RssFile in
// /proc/<pid>/status): for a static Go binary, its own code and read-only
// data, pages the page cache holds whatever the process does.
func RSSFile(pid int) (int64, error) { return statusBytes(pid, "RssFile:") }

// statusBytes reads one "<key> <n> kB" line of /proc/<pid>/status.
func statusBytes(pid int, key string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			f := strings.Fields(v) // "12345 kB"
			if len(f) >= 1 {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				if err != nil {
					return 0, err
				}
				return kb << 10, nil
			}
		}
	}
	return 0, fmt.Errorf("no %s for pid %d", strings.TrimSuffix(key, ":"), pid)
}

// Proc is one process.
type Proc struct {
	PID int
	// Name is the executable's base name.
	Name string
	Exe  string
}

// Children lists the direct children of pid, from /proc.
func Children(pid int) []Proc {
	var out []Proc
	eachProc(func(child int, stat []string) {
		if ppid, _ := strconv.Atoi(stat[1]); ppid == pid {
			exe, _ := os.Readlink("/proc/" + strconv.Itoa(child) + "/exe")
			out = append(out, Proc{PID: child, Name: filepath.Base(exe), Exe: exe})
		}
	})
	return out
}

// eachProc calls fn with every process in /proc and the fields of its
// stat after the command name: state(0) ppid(1) … utime(11) stime(12)
// cutime(13) cstime(14) …. A process that ends meanwhile is skipped.
func eachProc(fn func(pid int, stat []string)) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		if f := strings.Fields(string(stat[i+1:])); len(f) >= 15 {
			fn(pid, f)
		}
	}
}

// CPUTime is the user+system CPU time this process has used.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TreeCPUTime is the user+system CPU time of pid and all its live
// descendants, plus what their exited (and waited for) children used.
func TreeCPUTime(pid int) time.Duration {
	type info struct {
		ppid int
		cpu  int64
	}
	procs := map[int]info{}
	eachProc(func(p int, f []string) {
		ppid, _ := strconv.Atoi(f[1])
		var cpu int64
		for _, k := range f[11:15] {
			v, _ := strconv.ParseInt(k, 10, 64)
			cpu += v
		}
		procs[p] = info{ppid: ppid, cpu: cpu}
	})
	in := map[int]bool{pid: true}
	for changed := true; changed; { // descendants, whatever the order of /proc
		changed = false
		for p, i := range procs {
			if !in[p] && in[i.ppid] {
				in[p], changed = true, true
			}
		}
	}
	var ticks int64
	for p := range in {
		ticks += procs[p].cpu
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

// MachineBusy is the CPU time all CPUs of the machine have spent busy (not
// idle or waiting for I/O) since boot, from /proc/stat.
func MachineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var ticks int64
	for i, k := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		v, _ := strconv.ParseInt(k, 10, 64)
		ticks += v
	}
	return time.Duration(ticks) * time.Second / clockTicks
}
