package pgembed

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// serverUsers are tried in order when running as root; the last is created if none exists.
// Only an account of our own: the system's "postgres" account would share files, processes
// and peer authentication with any other PostgreSQL on the machine. Clusters made earlier
// under "postgres" are handed over by chownTree at their next start.
var serverUsers = []string{"svc-postgres"}

// account is the unprivileged user initdb and postgres run as when the caller is root. A nil
// *account means "the calling user", and its methods do nothing.
type account struct {
	name     string
	uid, gid int
}

// serverAccount returns nil unless the process is root, because PostgreSQL refuses to run as
// root.
func serverAccount(ctx context.Context, logger *slog.Logger) (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range serverUsers {
		if a, err := lookupAccount(name); err == nil {
			return a, nil
		}
	}
	name := serverUsers[len(serverUsers)-1]
	logger.Info("creating a system user to run the embedded PostgreSQL (it refuses to run as root)", "user", name)
	out, err := exec.CommandContext(ctx, "useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
	// A concurrent start may have created it between our lookup and useradd.
	if a, lerr := lookupAccount(name); lerr == nil {
		return a, nil
	}
	return nil, fmt.Errorf("pgembed: running as root, PostgreSQL needs an unprivileged user but %s does not exist and `useradd --system %s` failed: %v: %s",
		strings.Join(serverUsers, " nor "), name, err, strings.TrimSpace(string(out)))
}

func lookupAccount(name string) (*account, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return nil, fmt.Errorf("pgembed: user %s has uid %q", name, u.Uid)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return nil, fmt.Errorf("pgembed: user %s has gid %q", name, u.Gid)
	}
	return &account{name: name, uid: uid, gid: gid}, nil
}

// credential is what the child runs as. Supplementary groups are dropped (an empty list, not
// "keep root's").
func (a *account) credential() *syscall.Credential {
	if a == nil {
		return nil
	}
	return &syscall.Credential{Uid: uint32(a.uid), Gid: uint32(a.gid), Groups: []uint32{}}
}

func (a *account) uidOrSelf() int {
	if a == nil {
		return os.Geteuid()
	}
	return a.uid
}

func (a *account) chown(path string) error {
	if a == nil {
		return nil
	}
	if err := os.Lchown(path, a.uid, a.gid); err != nil {
		return fmt.Errorf("pgembed: give %s to user %s: %w", path, a.name, err)
	}
	return nil
}

// chownTree gives the cluster folder to the account. It walks the tree only when the folder
// itself has another owner (first use, or a cluster made by another user); the files PostgreSQL
// creates later are the account's already.
func (a *account) chownTree(dir string) error {
	if a == nil {
		return nil
	}
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("pgembed: cluster folder %s: %w", dir, err)
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) == a.uid && int(st.Gid) == a.gid {
		return nil
	}
	return filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return a.chown(path)
	})
}

// checkTraversable reports, with the fix, the first folder from / down to dir that the account
// cannot pass through, by its mode bits and access list (see canTraverse).
func (a *account) checkTraversable(dir string) error {
	if a == nil {
		return nil
	}
	var chain []string
	for p := dir; ; p = filepath.Dir(p) {
		chain = append(chain, p)
		if p == filepath.Dir(p) {
			break
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		p := chain[i]
		can, err := a.canTraverse(p)
		if err != nil {
			return err
		}
		if !can {
			info, _ := os.Stat(p)
			var perm os.FileMode
			if info != nil {
				perm = info.Mode().Perm()
			}
			return fmt.Errorf("pgembed: this process runs as root, so PostgreSQL runs as user %s (uid %d), which cannot enter %s (mode %v): run `chmod o+x %s`, or choose a data folder outside it",
				a.name, a.uid, p, perm, p)
		}
	}
	return nil
}
