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
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// binaries are the PostgreSQL programs pgembed runs; both come from one folder so that their
// versions match.
type binaries struct {
	initdb, postgres string
}

// binDirPatterns are where distributions install versioned PostgreSQL binaries (Debian/Ubuntu,
// then the PGDG RPMs).
var binDirPatterns = []string{"/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin"}

func findBinaries(binDir string) (binaries, error) {
	if binDir != "" {
		return binariesIn(binDir)
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		// Debian puts symlinks on PATH; initdb sits beside the real binary.
		if real, err := filepath.EvalSymlinks(p); err == nil {
			if b, err := binariesIn(filepath.Dir(real)); err == nil {
				return b, nil
			}
		}
		if initdb, err := exec.LookPath("initdb"); err == nil {
			return binaries{initdb: initdb, postgres: p}, nil
		}
	}
	var dirs []string
	for _, pattern := range binDirPatterns {
		m, _ := filepath.Glob(pattern)
		dirs = append(dirs, m...)
	}
	// The highest major version wins: "17" must sort after "9.6".
	sort.SliceStable(dirs, func(i, j int) bool { return dirVersion(dirs[i]) > dirVersion(dirs[j]) })
	for _, d := range dirs {
		if b, err := binariesIn(d); err == nil {
			return b, nil
		}
	}
	return binaries{}, errors.New("pgembed: no PostgreSQL binaries found (postgres and initdb on PATH, or /usr/lib/postgresql/<version>/bin): install the PostgreSQL server package (Debian: apt-get install postgresql), or set SVC_DATABASE_URL to use an existing server")
}

var versionDigits = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)

func dirVersion(dir string) float64 {
	v, _ := strconv.ParseFloat(versionDigits.FindString(dir), 64)
	return v
}

func binariesIn(dir string) (binaries, error) {
	b := binaries{initdb: filepath.Join(dir, "initdb"), postgres: filepath.Join(dir, "postgres")}
	for _, p := range []string{b.initdb, b.postgres} {
		info, err := os.Stat(p)
		if err != nil {
			return binaries{}, fmt.Errorf("pgembed: PostgreSQL binary folder %s: %w", dir, err)
		}
		if info.IsDir() || info.Mode().Perm()&0o111 == 0 {
			return binaries{}, fmt.Errorf("pgembed: %s is not an executable", p)
		}
	}
	return b, nil
}

// majorVersion asks postgres for its version ("postgres (PostgreSQL) 15.8 (Debian 15.8-1)")
// and returns the major part as PG_VERSION spells it ("15", or "9.6" before version 10).
func (b binaries) majorVersion(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, b.postgres, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("pgembed: %s --version: %w", b.postgres, err)
	}
	m := regexp.MustCompile(`\(PostgreSQL\) ([0-9]+)(\.[0-9]+)?`).FindStringSubmatch(string(out))
	if m == nil {
		return "", fmt.Errorf("pgembed: cannot read the version in %q from %s --version", strings.TrimSpace(string(out)), b.postgres)
	}
	if major, _ := strconv.Atoi(m[1]); major < 10 {
		return m[1] + m[2], nil
	}
	return m[1], nil
}

// ensureInitialized runs initdb unless the data folder exists. initdb writes into a temporary
// folder that is renamed into place when it succeeds, so an interrupted initdb never leaves a
// half-made cluster that looks real.
func ensureInitialized(ctx context.Context, bins binaries, l layout, acct *account, fast bool, logFile *os.File, logger *slog.Logger) error {
	version, err := bins.majorVersion(ctx)
	if err != nil {
		return err
	}
	if b, err := os.ReadFile(filepath.Join(l.dataDir, "PG_VERSION")); err == nil {
		if have := strings.TrimSpace(string(b)); have != version {
			return fmt.Errorf("pgembed: the cluster in %s was created by PostgreSQL %s but %s is version %s: set BinDir to PostgreSQL %s binaries, or upgrade the cluster with pg_upgrade",
				l.dir, have, bins.postgres, version, have)
		}
		return nil
	} else if _, serr := os.Stat(l.dataDir); serr == nil {
		return fmt.Errorf("pgembed: %s exists but has no PG_VERSION, so it is not a PostgreSQL data folder: move it away", l.dataDir)
	} else if !errors.Is(serr, fs.ErrNotExist) {
		return fmt.Errorf("pgembed: data folder %s: %w", l.dataDir, serr)
	}

	tmp := l.dataDir + ".initdb"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("pgembed: remove the leftover of an interrupted initdb: %w", err)
	}
	args := []string{
		"-D", tmp,
		"--username", Superuser,
		"--encoding", "UTF8",
		"--locale", "C",
		"--auth-local", "trust",
		// Nothing listens on TCP; should someone enable it, refuse rather than trust.
		"--auth-host", "reject",
	}
	if fast {
		args = append(args, "--no-sync")
	}
	cmd := exec.CommandContext(ctx, bins.initdb, args...)
	// initdb, running as the server account, must be able to stay in its working folder.
	cmd.Dir = l.dir
	cmd.Env = childEnv()
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = toolProcAttr(acct)
	logStart, _ := logFile.Seek(0, io.SeekEnd)
	began := time.Now()
	logger.Info("creating embedded PostgreSQL cluster", "dir", l.dir, "version", version)
	// Keep the forking thread alive until initdb ends: its parent-death signal follows the
	// thread, not the process.
	runtime.LockOSThread()
	err = cmd.Run()
	runtime.UnlockOSThread()
	if err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("pgembed: initdb %s failed: %w%s", tmp, err, logTail(l.logPath, logStart))
	}
	if err := os.Rename(tmp, l.dataDir); err != nil {
		return fmt.Errorf("pgembed: move the new cluster into place: %w", err)
	}
	logger.Info("created embedded PostgreSQL cluster", "dir", l.dir, "took", time.Since(began).Round(time.Millisecond))
	return nil
}
