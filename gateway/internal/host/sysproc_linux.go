package host

import "syscall"

// sysProcAttr has the kernel kill a plugin when the gateway dies, however it
// dies; the SDK's watch of its parent covers the rare case this misses.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
