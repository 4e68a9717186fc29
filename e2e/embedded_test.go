package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svcplatform/svc/internal/gatewaytest"
)

// The embedded default: no SVC_DATABASE_URL, a private cluster under the
// data folder, stopped cleanly with the gateway and recovered after a crash.
func TestEmbeddedDatabaseLifecycle(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	// The cluster may run as an unprivileged user: let it into the folder.
	for _, dir := range []string{filepath.Dir(dataDir), dataDir} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := gatewaytest.Options{Embedded: true, DataDir: dataDir}

	g := gatewaytest.Start(t, opts)
	res, body := do(t, "GET", g.URL+"/api/v1/platform/changelog", nil, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("changelog on the embedded database: %d %s", res.StatusCode, body)
	}
	pgPID := postmasterPID(t, dataDir)
	g.Stop(t)
	if pidAlive(pgPID) {
		t.Fatalf("PostgreSQL (pid %d) still runs after the gateway stopped", pgPID)
	}

	// Second start reuses the cluster, then the gateway dies without cleanup.
	g = gatewaytest.Start(t, opts)
	pgPID = postmasterPID(t, dataDir)
	if err := g.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-g.Done()

	// Third start must recover whatever the crash left behind.
	g = gatewaytest.Start(t, opts)
	res, body = do(t, "GET", g.URL+"/api/v1/platform/changelog", nil, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("changelog after crash recovery: %d %s", res.StatusCode, body)
	}
	if newPID := postmasterPID(t, dataDir); newPID == pgPID && !pidAlive(pgPID) {
		t.Fatalf("postmaster.pid names a dead process %d", pgPID)
	}
	g.Stop(t)
}

func postmasterPID(t *testing.T, dataDir string) int {
	t.Helper()
	var found int
	_ = filepath.WalkDir(filepath.Join(dataDir, "pg"), func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "postmaster.pid" {
			b, _ := os.ReadFile(path)
			found, _ = strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
			return filepath.SkipAll
		}
		return nil
	})
	if found == 0 {
		t.Fatal("no postmaster.pid under the data folder")
	}
	return found
}

func pidAlive(pid int) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}
