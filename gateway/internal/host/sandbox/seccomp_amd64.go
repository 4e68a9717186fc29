//go:build linux && amd64

package sandbox

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_X86_64
	// x32Bit marks the x32 ABI's system call numbers, refused as a whole.
	x32Bit = 0x40000000
)

// archDenied: direct port access.
var archDenied = []int{unix.SYS_IOPL, unix.SYS_IOPERM}
