package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestStartPrintsAURLAndStopStopsTheServer(t *testing.T) {
	dir := t.TempDir()
	// t.TempDir makes 0700 folders; under root the server runs as another user and must pass.
	for _, p := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir = filepath.Join(dir, "pg")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))

	var out bytes.Buffer
	if err := run(ctx, []string{"start", "--dir", dir}, &out, logger); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = run(context.Background(), []string{"stop", "--dir", dir}, io.Discard, logger) })
	url := strings.TrimSpace(out.String())
	if strings.Count(out.String(), "\n") != 1 || !strings.HasPrefix(url, "postgres://") {
		t.Fatalf("start printed %q, want one URL line", out.String())
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect to the printed URL: %v", err)
	}
	var fsync string
	if err := conn.QueryRow(ctx, "SHOW fsync").Scan(&fsync); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if fsync != "off" {
		t.Errorf("fsync = %s, want off for a test server", fsync)
	}

	if err := run(ctx, []string{"stop", "--dir", dir}, io.Discard, logger); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if _, err := pgx.Connect(ctx, url); err == nil {
		t.Fatal("the server still accepts connections after stop")
	}
	if err := run(ctx, []string{"stop", "--dir", dir}, io.Discard, logger); err != nil {
		t.Fatalf("stop with nothing running: %v", err)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{nil, {"start"}, {"stop", "--dir"}, {"restart", "--dir", "x"}, {"start", "--dir", "x", "extra"}} {
		if err := run(context.Background(), args, io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil {
			t.Errorf("run(%q) succeeded, want a usage error", args)
		}
	}
}
