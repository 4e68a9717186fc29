package pgembed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Backup copies the running cluster in srcDir (the folder given to Start)
// into dest, a new cluster folder, with pg_basebackup: a consistent copy
// taken while the server keeps serving (a checkpoint, then the data files
// and the WAL written meanwhile, streamed). Start(Options{Dir: dest}) then
// serves the data as of the end of the backup, after a short recovery. dest
// must not exist or be empty. password is the superuser's (Options.Password;
// empty when the socket is trusted). Progress goes to progress
// (pg_basebackup's own report), nil for none.
func Backup(ctx context.Context, srcDir, dest, password string, progress io.Writer, logger *slog.Logger) error {
	return backup(ctx, srcDir, dest, password, false, progress, logger)
}

// Standby is Backup made into a streaming standby of the cluster in srcDir
// (pg_basebackup --write-recovery-conf): Start(Options{Dir: dest}, without
// a Password, since a standby cannot set one) then serves a read-only copy
// that follows the primary over its private socket. It has the primary's
// roles and their passwords, so the members of PasswordGroup sign in to it
// with theirs. For read-replica tests and single-machine trials; a
// production replica is made by the operator's own tools.
func Standby(ctx context.Context, srcDir, dest, password string, logger *slog.Logger) error {
	return backup(ctx, srcDir, dest, password, true, nil, logger)
}

func backup(ctx context.Context, srcDir, dest, password string, standby bool, progress io.Writer, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.Default()
	}
	src, err := newLayout(srcDir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(src.socketLockFile()); err != nil {
		return fmt.Errorf("pgembed: no server is running in %s (the gateway must be running to take a backup): %w", src.dir, err)
	}
	if entries, err := os.ReadDir(dest); err == nil && len(entries) > 0 {
		return fmt.Errorf("pgembed: backup folder %s is not empty", dest)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("pgembed: backup folder %s: %w", dest, err)
	}
	bins, err := findBinaries("")
	if err != nil {
		return err
	}
	tool := filepath.Join(filepath.Dir(bins.initdb), "pg_basebackup")
	if _, err := os.Stat(tool); err != nil {
		if tool, err = exec.LookPath("pg_basebackup"); err != nil {
			return fmt.Errorf("pgembed: pg_basebackup not found beside %s or on PATH: %w", bins.initdb, err)
		}
	}
	acct, err := serverAccount(ctx, logger)
	if err != nil {
		return err
	}
	to, err := prepareLayout(dest, acct, false, logger)
	if err != nil {
		return err
	}
	// pg_basebackup writes files only: the new cluster's socket folder is
	// made again when it starts.
	defer to.removeFallbackSocketDir()
	args := []string{"--host", src.socketDir, "--port", strconv.Itoa(Port), "--username", Superuser,
		"--pgdata", to.dataDir, "--wal-method", "stream", "--checkpoint", "fast", "--no-password"}
	if progress != nil {
		args = append(args, "--progress", "--verbose")
	}
	if standby {
		args = append(args, "--write-recovery-conf")
	}
	// The data folder must be created by pg_basebackup itself, as the
	// account the server will run as.
	if err := os.RemoveAll(to.dataDir); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Dir = to.dir
	cmd.Env = childEnv()
	if password != "" {
		// The environment, not the command line that ps shows.
		cmd.Env = append(cmd.Env, "PGPASSWORD="+password)
	}
	cmd.SysProcAttr = toolProcAttr(acct)
	if progress != nil {
		cmd.Stdout, cmd.Stderr = progress, progress
	}
	logger.Info("backing up the embedded PostgreSQL cluster", "from", src.dir, "to", to.dir)
	if out, err := runTool(cmd, progress == nil); err != nil {
		return fmt.Errorf("pgembed: pg_basebackup: %w%s", err, out)
	}
	return selfContained(to.dir)
}

// selfContained checks that no symbolic link in dir leads out of it: a
// backup must hold its data, not point at the original's.
func selfContained(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return err
		}
		target, err := filepath.EvalSymlinks(path)
		if err != nil || !strings.HasPrefix(target, dir+string(filepath.Separator)) {
			return fmt.Errorf("pgembed: the backup in %s is not self-contained: %s links to %q (%v)", dir, path, target, err)
		}
		return nil
	})
}

// runTool runs cmd, keeping its output for the error when it is not
// already shown.
func runTool(cmd *exec.Cmd, capture bool) (string, error) {
	if !capture {
		return "", cmd.Run()
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "\n" + string(out), err
	}
	return "", nil
}
