package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
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

// A backup is a backup: as root, with the data folder under a 0700 folder
// (a clone under /root, where the cluster used to be kept in /var/lib/svc
// behind a link), the backup folder holds the whole database and no link
// out of itself, so copied elsewhere, with the data folder and the backup's
// source both deleted, it still serves the data. Nothing of the cluster is
// kept outside the data folder.
func TestABackupCopiedElsewhereServesTheDataWithoutTheOriginal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the database runs as another user, who may not enter a 0700 folder, only when the gateway runs as root")
	}
	t.Parallel()
	private := t.TempDir()
	if err := os.Chmod(private, 0o700); err != nil { // like /root
		t.Fatal(err)
	}
	dataDir := filepath.Join(private, "var")
	g := gatewaytest.Start(t, gatewaytest.Options{Embedded: true, DataDir: dataDir})
	w := &chatWorld{graphWorld: &graphWorld{g: g, c: g.Credentials(t)}}
	w.consumer = signIn(t, w.graphWorld, "consumer")
	conversation, message := w.write(t, "kept by the backup")

	// Deleting the data folder must delete the cluster: none is kept
	// where earlier versions put it.
	sum := sha256.Sum256([]byte(filepath.Join(dataDir, "pg")))
	if _, err := os.Lstat("/var/lib/svc/pg-" + hex.EncodeToString(sum[:8])); !os.IsNotExist(err) {
		t.Errorf("the data folder's cluster is kept in /var/lib/svc (%v)", err)
	}
	if fi, err := os.Lstat(filepath.Join(dataDir, "pg")); err != nil || !fi.IsDir() {
		t.Errorf("%s/pg is not a folder (%v): the cluster lives elsewhere", dataDir, err)
	}

	backup := filepath.Join(private, "backup")
	out, err := exec.Command(filepath.Join(gatewaytest.BinDir(t), "gateway"), "backup", "--data-dir", dataDir, "--to", backup).CombinedOutput()
	if err != nil {
		t.Fatalf("gateway backup: %v\n%s", err, out)
	}
	g.Stop(t)

	// Another place, as on another machine; the original and the backup's
	// source are gone.
	elsewhere := t.TempDir()
	if err := os.Chmod(elsewhere, 0o700); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(elsewhere, "restored")
	if out, err := exec.Command("cp", "-a", backup, moved).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	for _, dir := range []string{dataDir, backup} {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	if err := filepath.WalkDir(moved, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return err
		}
		target, err := filepath.EvalSymlinks(path)
		if err != nil || !strings.HasPrefix(target, moved+"/") {
			return fmt.Errorf("%s links out of the backup folder, to %q (%v)", path, target, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	r := gatewaytest.Start(t, gatewaytest.Options{Embedded: true, DataDir: moved})
	rw := &chatWorld{graphWorld: &graphWorld{g: r, c: r.Credentials(t)}}
	token := appToken(t, rw.graphWorld, "svcchat:read")
	res, body := rw.get(t, token, url.Values{"node": {"page/" + rw.c.Page.ID + "/conversations/" + conversation},
		"fields": {"messages.limit(100){id}"}})
	if res.StatusCode != 200 {
		t.Fatalf("read the conversation from the moved backup: %d %s", res.StatusCode, body)
	}
	if !strings.Contains(string(body), `"`+message+`"`) {
		t.Fatalf("message %s is missing from the moved backup: %s", message, body)
	}
}
