//go:build linux

package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The namespace flags of clone(2): a new user namespace would make the
// plugin root in it and open kernel surface (nf_tables, mounts) to it.
const cloneNewNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWTIME

// denySyscalls installs a seccomp filter that answers EPERM to the system
// calls a plugin has no business making and that reach across process or
// kernel boundaries: tracing and reading other processes, loading kernel
// code or BPF, mounting, entering or making namespaces (unshare, setns, and
// clone with a namespace flag; clone3, whose flags the filter cannot read,
// answers ENOSYS so that Go and libc fall back to clone), the kernel
// keyring, opening files by handle. Everything else is allowed: the filter
// is a floor under Landlock and the plugin's user, not a profile of Go's
// needs.
//
// Where Landlock is older than the rules the sandbox relies on, the filter
// stands in: below ABI 3 (no truncate right) truncate(2) by path is
// refused; below ABI 6 (no signal scoping), at level Sandboxed, where the
// plugin shares the gateway's user, a signal may go only to the plugin
// itself. On an architecture without a list here it does nothing.
func denySyscalls(abi int, level Level) error {
	if auditArch == 0 {
		return nil
	}
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		deny = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		// seccomp_data: nr at 0, arch at 4, the first argument's low 32
		// bits at 16 (little-endian, as both listed architectures are).
		offNr, offArch, offArg0 = 0, 4, 16
	)
	denied := deniedSyscalls
	if abi < 3 {
		denied = append(denied[:len(denied):len(denied)], unix.SYS_TRUNCATE)
	}
	confineSignals := abi < 6 && level == Sandboxed
	if confineSignals {
		denied = append(denied[:len(denied):len(denied)], unix.SYS_TKILL, unix.SYS_PIDFD_SEND_SIGNAL,
			unix.SYS_RT_SIGQUEUEINFO, unix.SYS_RT_TGSIGQUEUEINFO)
	}
	prog := []unix.SockFilter{
		{Code: ld, K: offArch},
		{Code: jeq, K: auditArch, Jt: 1},
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS}, // another ABI (e.g. int 0x80): nothing of ours
		{Code: ld, K: offNr},
	}
	if x32Bit != 0 {
		prog = append(prog, unix.SockFilter{Code: jge, K: x32Bit, Jf: 1}, unix.SockFilter{Code: ret, K: deny})
	}
	for _, nr := range denied {
		prog = append(prog, unix.SockFilter{Code: jeq, K: uint32(nr), Jf: 1}, unix.SockFilter{Code: ret, K: deny})
	}
	prog = append(prog,
		unix.SockFilter{Code: jeq, K: unix.SYS_CLONE3, Jf: 1},
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		// clone: refused with a namespace flag, allowed otherwise.
		unix.SockFilter{Code: jeq, K: unix.SYS_CLONE, Jf: 4},
		unix.SockFilter{Code: ld, K: offArg0},
		unix.SockFilter{Code: jset, K: cloneNewNamespaces, Jf: 1},
		unix.SockFilter{Code: ret, K: deny},
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	)
	if confineSignals {
		// kill(pid, …) and tgkill(tgid, …) only to this process: the pid
		// is the plugin's, since exec keeps it.
		self := uint32(unix.Getpid())
		for _, nr := range []int{unix.SYS_KILL, unix.SYS_TGKILL} {
			prog = append(prog,
				unix.SockFilter{Code: jeq, K: uint32(nr), Jf: 4},
				unix.SockFilter{Code: ld, K: offArg0},
				unix.SockFilter{Code: jeq, K: self, Jf: 1},
				unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW},
				unix.SockFilter{Code: ret, K: deny},
			)
		}
	}
	prog = append(prog, unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW})
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// Without TSYNC the filter binds this thread, the one that execs.
	if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("svc-plugin-sandbox: seccomp: %w", e)
	}
	return nil
}
