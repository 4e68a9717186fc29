//go:build !linux

package pgembed

import (
	"errors"
	"syscall"
)

const supported = false

var errUnsupported = errors.New("pgembed: the embedded PostgreSQL runs on Linux only: set SVC_DATABASE_URL to use an existing server")

func serverProcAttr(acct *account, detach bool) *syscall.SysProcAttr { return nil }
func toolProcAttr(acct *account) *syscall.SysProcAttr                { return nil }
func serverProcesses(dataDir string) ([]int, error)                  { return nil, errUnsupported }
func processExists(pid int) bool                                     { return false }
func processAlive(pid int) bool                                      { return false }
