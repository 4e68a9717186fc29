package gateway

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockFileName is the data folder's lock: held by the gateway serving the
// folder, with its process id inside.
const lockFileName = "gateway.lock"

// claimDataDir makes the data folder the calling gateway's alone for as
// long as it runs (CONTRACT §15): a second gateway started on it fails here,
// before it touches the key or the embedded cluster, with the running
// gateway's pid. The lock is the kernel's (flock), so it dies with the
// process however it ends. It also takes the group's and others' read and
// write bits off the folder (the embedded cluster's account passes through
// by an access-list entry, see pgembed); the master key and credentials
// inside are 0600 either way.
func claimDataDir(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data folder %s: %w", dir, err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("data folder %s: %w", dir, err)
	}
	if perm := info.Mode().Perm(); perm&0o066 != 0 {
		if err := os.Chmod(dir, perm&^0o066); err != nil {
			return nil, fmt.Errorf("data folder %s: close it to other users: %w", dir, err)
		}
	}
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data folder %s: open its lock: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("data folder %s is in use by another gateway%s: stop it first, or give this one its own --data-dir",
				dir, runningPID(path))
		}
		return nil, fmt.Errorf("data folder %s: lock it: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		_ = f.Truncate(0)
		_ = f.Close() // closing the last descriptor releases the lock
	}, nil
}

// runningPID reads the pid the gateway holding the lock wrote, as " (pid
// N)", or "" if it cannot be read.
func runningPID(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}
