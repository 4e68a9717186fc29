package pgembed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

const (
	// maxSocketPath is the longest unix socket path Linux accepts (sun_path is 108 bytes,
	// NUL included).
	maxSocketPath = 107
	// socketFile is the socket's name inside the socket folder, fixed by Port.
	socketFile = ".s.PGSQL.5432"
	// maxLogSize is where the server log is rotated at start, keeping one previous file.
	maxLogSize = 16 << 20
)

// layout is where each part of a cluster lives.
type layout struct {
	dir       string // the cluster folder, absolute
	dataDir   string // PGDATA
	socketDir string
	logPath   string
	// fallbackSocket is set when socketDir is under /tmp because dir is too deep.
	fallbackSocket bool
}

func (l layout) pidFile() string        { return filepath.Join(l.dataDir, "postmaster.pid") }
func (l layout) socketLockFile() string { return filepath.Join(l.socketDir, socketFile+".lock") }

func newLayout(dir string) (layout, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return layout{}, fmt.Errorf("pgembed: cluster folder %q: %w", dir, err)
	}
	// A cluster kept outside the data folder (see relocate) is reached
	// through a symbolic link; the server is given the real path, which it
	// can enter.
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	l := layout{
		dir:       abs,
		dataDir:   filepath.Join(abs, "data"),
		socketDir: filepath.Join(abs, "run"),
		logPath:   filepath.Join(abs, "log", "postgres.log"),
	}
	// Under root the server's socket must be reachable by plugins that run
	// as users of their own, who must not pass through the data folder: it
	// lives under /tmp then, as it does when dir is too deep for a socket.
	if os.Geteuid() == 0 || len(l.socketDir)+1+len(socketFile) > maxSocketPath {
		// A folder named by the cluster's path keeps one socket folder per cluster and finds the
		// same one on every start.
		sum := sha256.Sum256([]byte(abs))
		l.socketDir = "/tmp/svc-pg-" + hex.EncodeToString(sum[:8])
		l.fallbackSocket = true
	}
	return l, nil
}

// prepareLayout creates the cluster folders, owned by the account the server runs as, and
// lets this account reach them. reachable opens the way to the socket (mode 0711 on the
// cluster and socket folders) to other users of the machine, such as plugins running as users
// of their own: only for a server whose superuser only its peers reach (see hbaPeer); the data
// folder stays the server's alone.
//
// Running as root from a folder the server's account cannot enter (a clone under /root, mode
// 0700, or a 0700 temporary folder), the account is given an access-list entry of its own on
// each folder that stops it (see grantTraverse): the cluster stays inside the folder given, so
// a copy of that folder is a copy of the data and deleting it deletes the cluster.
func prepareLayout(dir string, acct *account, reachable bool, logger *slog.Logger) (layout, error) {
	if abs, err := filepath.Abs(dir); err == nil && acct != nil {
		if err := finishMoveIn(abs); err != nil {
			return layout{}, err
		}
		warnOrphan(abs, logger)
	}
	l, err := newLayout(dir)
	if err != nil {
		return l, err
	}
	if err := makeClusterDir(l.dir, acct); err != nil {
		return l, err
	}
	if err := acct.checkTraversable(filepath.Dir(l.dir)); err != nil {
		changed, gerr := acct.grantTraverse(filepath.Dir(l.dir))
		if gerr != nil {
			return l, gerr
		}
		if len(changed) > 0 {
			logger.Info("let the embedded PostgreSQL's account pass through the folders above its cluster (an access-list entry for it alone; modes unchanged)",
				"user", acct.name, "folders", changed)
		}
	}
	if err := acct.chownTree(l.dir); err != nil {
		return l, err
	}
	for _, d := range []string{filepath.Dir(l.logPath), l.socketDir} {
		if d == l.socketDir && l.fallbackSocket {
			continue
		}
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return l, fmt.Errorf("pgembed: create %s: %w", d, err)
		}
		if err := acct.chown(d); err != nil {
			return l, err
		}
	}
	if l.fallbackSocket {
		if err := makePrivateTmpDir(l.socketDir, acct); err != nil {
			return l, err
		}
	}
	mode := os.FileMode(0o700)
	if reachable {
		mode = 0o711
	}
	for _, d := range []string{l.dir, l.socketDir} {
		if err := os.Chmod(d, mode); err != nil {
			return l, fmt.Errorf("pgembed: set the mode of %s: %w", d, err)
		}
	}
	return l, nil
}

// makeClusterDir creates dir (mode 0700) and any missing parents. When the server runs as
// another account, the parents it creates get o+x whatever the umask, because that account must
// pass through them; existing parents are left alone.
func makeClusterDir(dir string, acct *account) error {
	var missing []string
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("pgembed: cluster folder %s: %w", dir, err)
		}
		missing = append(missing, p)
		if p == filepath.Dir(p) {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		p := missing[i]
		err := os.Mkdir(p, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue // made meanwhile by someone else, so not ours to change
		} else if err != nil {
			return fmt.Errorf("pgembed: create %s: %w", p, err)
		}
		if acct == nil {
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("pgembed: create %s: %w", p, err)
		}
		if err := os.Chmod(p, info.Mode().Perm()|0o011); err != nil {
			return fmt.Errorf("pgembed: make %s traversable: %w", p, err)
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("pgembed: create cluster folder %s: %w", dir, err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("pgembed: cluster folder %s: %w", dir, err)
	}
	if !info.IsDir() {
		return fmt.Errorf("pgembed: cluster folder %s exists and is not a folder", dir)
	}
	return nil
}

// makePrivateTmpDir creates the fallback socket folder under /tmp. Anyone can create names in
// /tmp, so an existing entry is used only if it is a real folder owned by the server account.
func makePrivateTmpDir(dir string, acct *account) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("pgembed: create socket folder %s: %w", dir, err)
	}
	if err := acct.chown(dir); err != nil {
		return err
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("pgembed: socket folder %s: %w", dir, err)
	}
	st, _ := info.Sys().(*syscall.Stat_t)
	// Only the owner may read or write it (others may pass through: see prepareLayout).
	if !info.IsDir() || st == nil || int(st.Uid) != acct.uidOrSelf() || info.Mode().Perm()&0o066 != 0 {
		return fmt.Errorf("pgembed: socket folder %s exists but is not a private folder of uid %d: remove it, or use a cluster folder with a shorter path so the socket can live inside it", dir, acct.uidOrSelf())
	}
	return nil
}

// removeFallbackSocketDir removes the /tmp socket folder once the server is gone; postgres has
// removed the socket and its lock file by then, so the folder is empty unless something else
// is using it.
func (l layout) removeFallbackSocketDir() {
	if l.fallbackSocket {
		_ = os.Remove(l.socketDir)
	}
}

// lockDir serialises Start and StopDir calls on one cluster folder, across processes. The lock
// dies with the process holding it, so a crash never leaves it behind.
func lockDir(ctx context.Context, l layout, acct *account) (unlock func(), err error) {
	path := filepath.Join(l.dir, ".pgembed.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pgembed: open lock file %s: %w", path, err)
	}
	if err := acct.chown(path); err != nil {
		f.Close()
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("pgembed: lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("pgembed: another process is starting or stopping the cluster in %s: %w", l.dir, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
	// The pid is for people wondering who holds the lock; the lock itself is the flock.
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, nil
}

// openLog opens the server log for appending, rotating it first if it has grown large.
func openLog(l layout, acct *account) (*os.File, error) {
	if info, err := os.Stat(l.logPath); err == nil && info.Size() > maxLogSize {
		_ = os.Rename(l.logPath, l.logPath+".1")
	}
	f, err := os.OpenFile(l.logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pgembed: open server log: %w", err)
	}
	if err := acct.chown(l.logPath); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
