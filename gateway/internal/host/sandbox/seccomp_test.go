//go:build linux && (amd64 || arm64)

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompHelperEnv makes the test binary a helper that installs the filter
// for a Landlock ABI and level, then reports what its thread may do.
const seccompHelperEnv = "SVC_SANDBOX_TEST_SECCOMP"

func TestMain(m *testing.M) {
	if spec := os.Getenv(seccompHelperEnv); spec != "" {
		seccompHelper(spec)
		return
	}
	os.Exit(m.Run())
}

// seccompHelper runs the probes on the one thread the filter binds.
func seccompHelper(spec string) {
	var abi int
	var level Level
	if _, err := fmt.Sscanf(spec, "%d %s", &abi, &level); err != nil {
		fmt.Println("bad spec:", err)
		os.Exit(2)
	}
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Println("no_new_privs:", err)
		os.Exit(2)
	}
	if err := denySyscalls(abi, level); err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	outcome := func(what string, errno unix.Errno) {
		if errno == 0 {
			fmt.Printf("%s: allowed\n", what)
		} else {
			fmt.Printf("%s: %v\n", what, errno)
		}
	}
	file := filepath.Join(os.TempDir(), fmt.Sprintf("svc-seccomp-%d", os.Getpid()))
	_ = os.WriteFile(file, []byte("data"), 0o600)
	defer os.Remove(file)
	path, _ := unix.BytePtrFromString(file)
	_, _, e := unix.RawSyscall(unix.SYS_TRUNCATE, uintptr(unsafe.Pointer(path)), 0, 0)
	outcome("truncate by path", e)
	_, _, e = unix.RawSyscall(unix.SYS_KILL, uintptr(os.Getppid()), 0, 0)
	outcome("signal the parent", e)
	_, _, e = unix.RawSyscall(unix.SYS_KILL, uintptr(os.Getpid()), 0, 0)
	outcome("signal itself", e)
	_, _, e = unix.RawSyscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0, 0)
	outcome("unshare a user namespace", e)
	_, _, e = unix.RawSyscall(unix.SYS_PTRACE, unix.PTRACE_ATTACH, uintptr(os.Getppid()), 0)
	outcome("trace the parent", e)
}

// The filter's rows: what a contained thread may do, by the kernel's
// Landlock ABI and the plugin's level. Where Landlock lacks the truncate
// right (ABI < 3) the filter refuses truncate by path; where it lacks
// signal scoping (ABI < 6) a plugin sharing the gateway's user may signal
// only itself; tracing and namespaces are refused always.
func TestTheSeccompFloorStandsInForWhatLandlockLacks(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		abi   int
		level Level
		want  map[string]string
	}{
		{7, Sandboxed, map[string]string{"truncate by path": "allowed", "signal the parent": "allowed", "signal itself": "allowed",
			"unshare a user namespace": "operation not permitted", "trace the parent": "operation not permitted"}},
		{5, Sandboxed, map[string]string{"truncate by path": "allowed", "signal the parent": "operation not permitted",
			"signal itself": "allowed", "unshare a user namespace": "operation not permitted"}},
		{5, UID, map[string]string{"signal the parent": "allowed", "signal itself": "allowed"}},
		{2, Sandboxed, map[string]string{"truncate by path": "operation not permitted", "signal the parent": "operation not permitted",
			"signal itself": "allowed"}},
	} {
		t.Run(fmt.Sprintf("ABI %d, level %s", tc.abi, tc.level), func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(self)
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %s", seccompHelperEnv, tc.abi, tc.level))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("helper: %v\n%s", err, out)
			}
			got := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				what, outcome, _ := strings.Cut(line, ": ")
				got[what] = outcome
			}
			for what, want := range tc.want {
				if got[what] != want {
					t.Errorf("%s: %q, want %q", what, got[what], want)
				}
			}
		})
	}
}
