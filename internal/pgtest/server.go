package pgtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svcplatform/svc/internal/pgembed"
)

// tempDirPrefix names the folders of private servers; the pid that follows lets a later run
// tell a folder whose process is gone.
const tempDirPrefix = "svc-pgtest-"

// server is the PostgreSQL a test process uses.
type server struct {
	url   string
	close func()
}

func startServer() (*server, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if url := os.Getenv(EnvDatabaseURL); url != "" {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return nil, fmt.Errorf("%s is set but its server is unreachable: %w", EnvDatabaseURL, err)
		}
		_ = conn.Close(ctx)
		return &server{url: url, close: func() {}}, nil
	}
	return startPrivateServer(ctx)
}

// startPrivateServer starts a Fast cluster in a fresh temporary folder. It is removed when the
// tests end or the process is interrupted; if the process dies harder than that, the server
// stops with it (parent-death signal) and the next run removes the folder.
func startPrivateServer(ctx context.Context) (*server, error) {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	removeAbandonedDirs(ctx, logger)

	dir, err := os.MkdirTemp("", tempDirPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, fmt.Errorf("create a folder for the test server: %w", err)
	}
	// MkdirTemp makes it 0700; under root the server runs as another user and must pass.
	if err := os.Chmod(dir, 0o755); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("open the test server folder to the server user: %w", err)
	}
	cluster, err := pgembed.Start(ctx, pgembed.Options{Dir: filepath.Join(dir, "pg"), Fast: true, Logger: logger})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start a private test server (or set %s): %w", EnvDatabaseURL, err)
	}

	var once sync.Once
	cleanup := func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := cluster.Stop(ctx); err != nil {
				logger.Warn("stop the test server", "err", err)
			}
			if err := os.RemoveAll(dir); err != nil {
				logger.Warn("remove the test server folder", "dir", dir, "err", err)
			}
		})
	}
	// An interrupted run (Ctrl-C, a CI job cancelled) still cleans up.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-signals; ok {
			cleanup()
			os.Exit(1)
		}
	}()
	return &server{
		url: cluster.URL("postgres"),
		close: func() {
			signal.Stop(signals)
			close(signals)
			cleanup()
		},
	}, nil
}

// removeAbandonedDirs removes the folders of test processes that died without cleaning up,
// stopping any server still running in them first.
func removeAbandonedDirs(ctx context.Context, logger *slog.Logger) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempDirPrefix+"*"))
	for _, dir := range dirs {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(dir), tempDirPrefix), "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || processExists(pid) {
			continue
		}
		if err := pgembed.StopDir(ctx, pgembed.Options{Dir: filepath.Join(dir, "pg"), Logger: logger}); err != nil {
			logger.Warn("stop the server of an abandoned test folder", "dir", dir, "err", err)
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			logger.Warn("remove an abandoned test folder", "dir", dir, "err", err)
		}
	}
}

func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
