package pgembed

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// relocateRoot is where earlier versions kept, as root, the clusters of
// folders the server's account could not enter, as
// <relocateRoot>/pg-<hash of the folder's path> behind a symbolic link at
// the folder given. Start moves such a cluster back into its folder (see
// moveIn); nothing is put there any more.
var relocateRoot = "/var/lib/svc"

// movedFromFile, in a cluster folder moved in, names the folder under
// relocateRoot it was copied from, removed once the server has started
// from the copy.
const movedFromFile = ".pgembed-moved-from"

// relocatedPath is where an earlier version kept the cluster of dir.
func relocatedPath(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(relocateRoot, "pg-"+hex.EncodeToString(sum[:8]))
}

// relocatedTarget returns the folder under relocateRoot that dir (absolute)
// links to, or "" when dir is not such a link.
func relocatedTarget(dir string) string {
	fi, err := os.Lstat(dir)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return ""
	}
	target, err := filepath.EvalSymlinks(dir)
	if err != nil || !strings.HasPrefix(target, relocateRoot+string(filepath.Separator)) {
		return ""
	}
	return target
}

// moveIn copies the stopped cluster kept under relocateRoot (l, reached
// through the link dir) into dir itself: into dir.moving first, synced, and
// only then the link is replaced, so a crash at any point leaves either the
// link (the copy is made again) or the complete copy (finishMoveIn renames
// it). The old folder is removed once the server has started from the copy
// (removeMovedFrom). It returns false, and leaves the link, when the
// server's account cannot be let into dir's folder.
func moveIn(dir string, l layout, acct *account, logger *slog.Logger) (bool, error) {
	if _, err := acct.grantTraverse(filepath.Dir(dir)); err != nil {
		logger.Warn("the embedded cluster stays outside the data folder: deleting the data folder leaves it behind, and a copy of the data folder does not hold it ( `gateway backup` does)",
			"cluster", l.dir, "link", dir, "err", err)
		return false, nil
	}
	moving := dir + ".moving"
	if err := os.RemoveAll(moving); err != nil {
		return false, fmt.Errorf("pgembed: remove the unfinished copy %s: %w", moving, err)
	}
	logger.Info("moving the embedded cluster into its data folder", "from", l.dir, "to", dir)
	if err := copyTree(l.dir, moving); err != nil {
		return false, fmt.Errorf("pgembed: move the cluster %s into %s: %w", l.dir, dir, err)
	}
	if err := syncTree(moving); err != nil {
		return false, err
	}
	marker := filepath.Join(moving, movedFromFile)
	if err := os.WriteFile(marker, []byte(l.dir+"\n"), 0o600); err != nil {
		return false, err
	}
	if err := syncDir(moving); err != nil {
		return false, err
	}
	if err := os.Remove(dir); err != nil {
		return false, fmt.Errorf("pgembed: replace the link %s: %w", dir, err)
	}
	if err := os.Rename(moving, dir); err != nil {
		return false, fmt.Errorf("pgembed: replace the link %s: %w", dir, err)
	}
	_ = syncDir(filepath.Dir(dir))
	return true, nil
}

// finishMoveIn completes a moveIn interrupted after its copy was complete
// and the link removed.
func finishMoveIn(dir string) error {
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	moving := dir + ".moving"
	if _, err := os.Stat(filepath.Join(moving, movedFromFile)); err != nil {
		return nil
	}
	if err := os.Rename(moving, dir); err != nil {
		return fmt.Errorf("pgembed: finish moving the cluster into %s: %w", dir, err)
	}
	return nil
}

// removeMovedFrom removes the folder a cluster was moved in from, once the
// server has started from the copy.
func removeMovedFrom(l layout, logger *slog.Logger) {
	marker := filepath.Join(l.dir, movedFromFile)
	b, err := os.ReadFile(marker)
	if err != nil {
		return
	}
	old := strings.TrimSpace(string(b))
	if strings.HasPrefix(old, relocateRoot+string(filepath.Separator)) && relocatedTarget(l.dir) == "" {
		if err := os.RemoveAll(old); err != nil {
			logger.Warn("remove the cluster's old folder", "dir", old, "err", err)
			return
		}
		logger.Info("the embedded cluster now lives in its data folder; removed its old folder", "dir", l.dir, "removed", old)
	}
	_ = os.Remove(marker)
}

// warnOrphan says where a cluster left by an earlier version for a deleted
// data folder of the same path is: it is never used again.
func warnOrphan(dir string, logger *slog.Logger) {
	if relocatedTarget(dir) != "" {
		return
	}
	old := relocatedPath(dir)
	if _, err := os.Stat(filepath.Join(old, "data")); err == nil {
		logger.Warn("a cluster left by a deleted data folder of the same path is not used; remove it to free its space",
			"dir", old)
	}
}

// copyTree copies the folder from into the new folder to: folders, regular
// files (each synced) and symbolic links, with their modes and owners.
// Sockets and other special files (a stopped server leaves none) are
// skipped.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		switch {
		case info.IsDir():
			if err := os.Mkdir(dst, 0o700); err != nil {
				return err
			}
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			if err := os.Symlink(link, dst); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			if err := copyFile(path, dst); err != nil {
				return err
			}
		default:
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			if err := os.Lchown(dst, int(st.Uid), int(st.Gid)); err != nil {
				return err
			}
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			if err := os.Chmod(dst, info.Mode().Perm()); err != nil {
				return err
			}
		}
		return nil
	})
}

// syncTree syncs every folder under dir, so that the entries of the files
// copied into them are on disk.
func syncTree(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return syncDir(path)
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
