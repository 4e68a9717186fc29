//go:build !linux

package host

import "syscall"

// sysProcAttr: without Pdeathsig, the SDK's watch of its parent alone stops
// a plugin whose gateway died.
func sysProcAttr() *syscall.SysProcAttr { return nil }
