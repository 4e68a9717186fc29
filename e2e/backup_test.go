package e2e

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/svcplatform/svc/internal/gatewaytest"
)

// Backup and restore of the embedded database: a backup taken while users
// write restores into a new data folder that serves the same data, with
// the same credentials (the master key travels with it).
func TestABackupTakenUnderLoadServesTheSameDataFromANewFolder(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	for _, dir := range []string{filepath.Dir(dataDir), dataDir} {
		if err := os.Chmod(dir, 0o755); err != nil { // the cluster may run as another user
			t.Fatal(err)
		}
	}
	g := gatewaytest.Start(t, gatewaytest.Options{Embedded: true, DataDir: dataDir})
	w := &chatWorld{graphWorld: &graphWorld{g: g, c: g.Credentials(t)}}
	w.consumer = signIn(t, w.graphWorld, "consumer")

	// The consumer writes before and during the backup.
	var mu sync.Mutex
	var written []string
	conversation, first := w.write(t, "before the backup 0")
	written = append(written, first)
	for i := 1; i < 20; i++ {
		_, m := w.write(t, "before the backup")
		written = append(written, m)
	}
	before := len(written)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// At most 60 in all: a user writes to Pages 60 times a minute
		// (CONTRACT §15).
		for len(written) < 60 {
			select {
			case <-stop:
				return
			default:
			}
			_, m := w.write(t, "during the backup")
			mu.Lock()
			written = append(written, m)
			mu.Unlock()
		}
	}()
	backup := filepath.Join(t.TempDir(), "restored")
	cmd := exec.Command(filepath.Join(gatewaytest.BinDir(t), "gateway"), "backup", "--data-dir", dataDir, "--to", backup)
	out, err := cmd.CombinedOutput()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("gateway backup: %v\n%s", err, out)
	}
	t.Logf("%d messages written before the backup began, %d in all", before, len(written))
	g.Stop(t)

	r := gatewaytest.Start(t, gatewaytest.Options{Embedded: true, DataDir: backup})
	rw := &chatWorld{graphWorld: &graphWorld{g: r, c: r.Credentials(t)}}
	if rw.c.App.ClientSecret != w.c.App.ClientSecret || rw.c.Page.ID != w.c.Page.ID {
		t.Fatal("the restored folder holds other credentials")
	}
	token := appToken(t, rw.graphWorld, "svcchat:read") // the restored database knows the app's secret
	res, body := rw.get(t, token, url.Values{"node": {"page/" + rw.c.Page.ID + "/conversations/" + conversation},
		"fields": {"messages.limit(100){id}"}})
	if res.StatusCode != 200 {
		t.Fatalf("read the conversation from the restored folder: %d %s", res.StatusCode, body)
	}
	for _, m := range written[:before] {
		if !strings.Contains(string(body), `"`+m+`"`) {
			t.Fatalf("message %s, written before the backup began, is missing from the restored data", m)
		}
	}
}
