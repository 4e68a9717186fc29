//go:build linux

package pgembed

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// supported is false where the process handling below (parent-death signal, /proc) is missing.
const supported = true

// errUnsupported is what Start returns where supported is false.
var errUnsupported error

// serverProcAttr is how postgres is started.
func serverProcAttr(acct *account, detach bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Credential: acct.credential()}
	if detach {
		// Its own session: no controlling terminal, and no signal meant for our process group.
		attr.Setsid = true
		return attr
	}
	// Its own process group keeps a terminal's Ctrl-C away from the server, so the parent can
	// shut down in order: drain requests, then stop the database.
	attr.Setpgid = true
	// SIGINT is PostgreSQL's fast shutdown: clients are disconnected, a checkpoint is written,
	// and the next start needs no recovery. SIGTERM (smart shutdown) would wait for clients
	// that may never leave, such as plugin pools; SIGQUIT (immediate shutdown) would skip the
	// checkpoint and force crash recovery on the next start. If the fast shutdown ever hangs,
	// the next Start escalates.
	attr.Pdeathsig = syscall.SIGINT
	return attr
}

// toolProcAttr is how initdb is started: it must not outlive us either, and a half-done initdb
// has nothing worth a clean exit.
func toolProcAttr(acct *account) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: acct.credential(), Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// serverProcesses returns the live postgres processes serving the data folder: the postmaster
// and its children all make it their working folder. Processes of other users are invisible
// unless we are root, which is fine: without root, the server runs as us.
func serverProcesses(dataDir string) ([]int, error) {
	real, err := filepath.EvalSymlinks(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if servesDataDir(pid, real) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// servesDataDir reports whether pid is a postgres process working in realDataDir. The program
// is checked too, so that a shell someone opened in the folder is left alone.
func servesDataDir(pid int, realDataDir string) bool {
	proc := "/proc/" + strconv.Itoa(pid)
	cwd, err := os.Readlink(proc + "/cwd")
	if err != nil || cwd != realDataDir {
		return false
	}
	exe, err := os.Readlink(proc + "/exe")
	if err != nil {
		return false
	}
	// A binary replaced by a package upgrade while the server runs reads "... (deleted)".
	exe = strings.TrimSuffix(exe, " (deleted)")
	return filepath.Base(exe) == "postgres"
}

// processExists reports whether pid names any process, zombies included, as PostgreSQL's own
// lock file check sees it.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// processAlive reports whether pid is running: a zombie has finished, even if no one reaped it
// (PID 1 in a container often does not).
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may contain anything.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	state := s[i+2]
	return state != 'Z' && state != 'X'
}
