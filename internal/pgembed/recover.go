package pgembed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	// takeOverGrace is how long a server found running gets for a fast shutdown before it is
	// stopped immediately.
	takeOverGrace = 30 * time.Second
	// orphanGrace is how long children of a killed postmaster get to notice and exit.
	orphanGrace = 3 * time.Second
	// killGrace is how long a process gets to disappear after SIGQUIT or SIGKILL.
	killGrace = 5 * time.Second
)

// StopDir stops the server running in the cluster folder opts.Dir, if any: one started with
// Options.Detach, one left by a crashed process, or one owned by another Cluster value. It
// returns nil if no server runs there.
func StopDir(ctx context.Context, opts Options) error {
	if !supported {
		return errUnsupported
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	l, err := newLayout(opts.Dir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(l.dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	unlock, err := lockDir(ctx, l, nil)
	if err != nil {
		return err
	}
	defer unlock()
	stopped, err := stopServer(ctx, l, logger, false)
	if err != nil {
		return err
	}
	if !stopped {
		logger.Info("no PostgreSQL server was running", "dir", l.dir)
	}
	l.removeFallbackSocketDir()
	return nil
}

// takeOver leaves the cluster folder ready for a new server: nothing running in it, and no lock
// file that would make PostgreSQL refuse to start.
func takeOver(ctx context.Context, l layout, logger *slog.Logger) error {
	if _, err := stopServer(ctx, l, logger, true); err != nil {
		return err
	}
	return clearStaleLocks(l, logger)
}

// stopServer stops every postgres process serving the cluster's data folder. It reports whether
// there was any. unexpected says a server is not supposed to be running, which is worth a
// warning: another process uses the folder, or one crashed and left its server behind.
func stopServer(ctx context.Context, l layout, logger *slog.Logger, unexpected bool) (bool, error) {
	pids, err := serverProcesses(l.dataDir)
	if err != nil {
		return false, fmt.Errorf("pgembed: look for a server running in %s: %w", l.dir, err)
	}
	if len(pids) == 0 {
		return false, nil
	}
	if pm := readLockPid(l.pidFile()); pm > 0 && slices.Contains(pids, pm) {
		if unexpected {
			logger.Warn("stopping the PostgreSQL server already running in the cluster folder", "dir", l.dir, "pid", pm)
		} else {
			logger.Info("stopping PostgreSQL", "dir", l.dir, "pid", pm)
		}
		gone := func() bool { return !processAlive(pm) }
		stopped := signalAndWait(ctx, pm, syscall.SIGINT, takeOverGrace, gone) ||
			signalAndWait(ctx, pm, syscall.SIGQUIT, killGrace, gone) ||
			signalAndWait(ctx, pm, syscall.SIGKILL, killGrace, gone)
		if !stopped {
			return true, fmt.Errorf("pgembed: the server already running in %s (pid %d) did not stop, even with SIGKILL", l.dir, pm)
		}
	}
	// Children of a postmaster killed with SIGKILL exit by themselves once they notice, but
	// until then they hold the old shared memory and a new postmaster refuses to start.
	none := func() bool {
		left, _ := serverProcesses(l.dataDir)
		return len(left) == 0
	}
	if waitUntil(ctx, orphanGrace, none) {
		return true, nil
	}
	left, _ := serverProcesses(l.dataDir)
	logger.Warn("killing leftover PostgreSQL processes", "dir", l.dir, "pids", left)
	for _, pid := range left {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if !waitUntil(ctx, killGrace, none) {
		left, _ = serverProcesses(l.dataDir)
		return true, fmt.Errorf("pgembed: PostgreSQL processes %v still run in %s after SIGKILL", left, l.dir)
	}
	return true, nil
}

// signalAndWait sends sig to pid and waits up to timeout (or until ctx ends) for done.
func signalAndWait(ctx context.Context, pid int, sig syscall.Signal, timeout time.Duration, done func() bool) bool {
	if err := syscall.Kill(pid, sig); err != nil {
		return done()
	}
	return waitUntil(ctx, timeout, done)
}

// waitUntil polls done until it holds, timeout passes or ctx ends.
func waitUntil(ctx context.Context, timeout time.Duration, done func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if done() {
			return true
		}
		select {
		case <-ctx.Done():
			return done()
		case <-deadline.C:
			return done()
		case <-tick.C:
		}
	}
}

// clearStaleLocks removes lock files PostgreSQL would refuse to start over. It runs when no
// server serves the folder, so a lock file naming a live process names someone else: a
// recycled pid (after a reboot or container restart) or an unreaped zombie. PostgreSQL would
// take either for a running server. A lock file naming a dead process is left to PostgreSQL,
// which also frees the old shared memory segment recorded in it.
func clearStaleLocks(l layout, logger *slog.Logger) error {
	for _, path := range []string{l.pidFile(), l.socketLockFile()} {
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return fmt.Errorf("pgembed: read lock file: %w", err)
		}
		pid := parseLockPid(b)
		reason := ""
		switch {
		case pid <= 0:
			// Left empty or torn by a crash while it was written; PostgreSQL refuses those too.
			reason = "no valid pid"
		case processExists(pid):
			reason = "pid " + strconv.Itoa(pid) + " is not this cluster's server"
		default:
			continue
		}
		logger.Info("removing stale PostgreSQL lock file", "path", path, "reason", reason)
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("pgembed: remove stale lock file %s: %w", path, err)
		}
	}
	return nil
}

// readLockPid returns the pid on the first line of a PostgreSQL lock file, or 0.
func readLockPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return parseLockPid(b)
}

func parseLockPid(b []byte) int {
	first, _, _ := strings.Cut(string(b), "\n")
	// A standalone backend writes its pid negated.
	pid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(first), "-"))
	if err != nil {
		return 0
	}
	return pid
}
