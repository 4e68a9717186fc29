//go:build linux

package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// denySyscalls installs a seccomp filter that answers EPERM to the system
// calls a plugin has no business making and that reach across process or
// kernel boundaries: tracing and reading other processes, loading kernel
// code or BPF, mounting, entering other namespaces, the kernel keyring,
// opening files by handle. Everything else is allowed: the filter is a
// floor under Landlock and the plugin's user, not a profile of Go's needs.
// On an architecture without a list here it does nothing.
func denySyscalls() error {
	if auditArch == 0 {
		return nil
	}
	const (
		ldArch = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge    = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret    = unix.BPF_RET | unix.BPF_K
		deny   = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	)
	// seccomp_data: nr at offset 0, arch at offset 4.
	prog := []unix.SockFilter{
		{Code: ldArch, K: 4},
		{Code: jeq, K: auditArch, Jt: 1},
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS}, // another ABI (e.g. int 0x80): nothing of ours
		{Code: ldArch, K: 0},
	}
	if x32Bit != 0 {
		prog = append(prog, unix.SockFilter{Code: jge, K: x32Bit, Jt: 0, Jf: 1}, unix.SockFilter{Code: ret, K: deny})
	}
	for _, nr := range deniedSyscalls {
		prog = append(prog, unix.SockFilter{Code: jeq, K: uint32(nr), Jt: 0, Jf: 1}, unix.SockFilter{Code: ret, K: deny})
	}
	prog = append(prog, unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW})
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// Without TSYNC the filter binds this thread, the one that execs.
	if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("svc-plugin-sandbox: seccomp: %w", e)
	}
	return nil
}
