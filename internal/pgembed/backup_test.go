package pgembed

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A backup taken while the cluster is being written restores into a new
// folder that serves every row committed before the backup began, and a
// consistent state (no half transaction).
func TestABackupTakenUnderLoadRestoresIntoANewFolder(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	// With a superuser password, as the gateway runs it: pg_basebackup must give it too.
	const password = "backup test password"
	src, err := Start(ctx, Options{Dir: clusterDir(t), Logger: testLogger(t), Password: password})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Stop(context.Background())
	exec1(t, src.URL("postgres"), "CREATE TABLE orders (id bigserial PRIMARY KEY, a int NOT NULL, b int NOT NULL, CHECK (a = b))")

	// Writers commit pairs that must stay equal, before and during the backup.
	var committed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := pgx.Connect(ctx, src.URL("postgres"))
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close(context.Background())
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := conn.Exec(ctx, "INSERT INTO orders (a, b) VALUES ($1, $1)", w*1_000_000+i); err != nil {
					t.Error(err)
					return
				}
				committed.Add(1)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	before := committed.Load()
	dest := filepath.Join(t.TempDir(), "restored")
	if err := Backup(ctx, src.layout.dir, dest, password, nil, testLogger(t)); err != nil {
		close(stop)
		wg.Wait()
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	t.Logf("%d rows committed before the backup began, %d in all during the run", before, committed.Load())

	restored, err := Start(ctx, Options{Dir: dest, Logger: testLogger(t), Password: password})
	if err != nil {
		t.Fatalf("start the restored cluster: %v", err)
	}
	defer restored.Stop(context.Background())
	var n, torn int64
	conn, err := pgx.Connect(ctx, restored.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(ctx, "SELECT count(*), count(*) FILTER (WHERE a <> b) FROM orders").Scan(&n, &torn); err != nil {
		t.Fatal(err)
	}
	if n < before || torn != 0 || n > committed.Load() {
		t.Fatalf("restored %d rows (%d torn); %d were committed before the backup and %d in all", n, torn, before, committed.Load())
	}
}

// As root, a backup into a folder the server's account cannot enter (a
// 0700 temporary folder, /root/…) holds the whole cluster: no link out of
// it, so a copy of the folder is a copy of the data.
func TestABackupHoldsTheWholeClusterAndNoLinkOutOfIt(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the server runs as another user only when the tests run as root")
	}
	t.Parallel()
	ctx := testContext(t)
	src := start(t, Options{Dir: clusterDir(t), Fast: true})
	exec1(t, src.URL("postgres"), "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('in the backup')")
	parent := t.TempDir() // 0700
	dest := filepath.Join(parent, "backup", "pg")
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Backup(ctx, src.layout.dir, dest, "", nil, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dest, "data", "PG_VERSION")); err != nil {
		t.Fatalf("the backup's data is not inside %s: %v", dest, err)
	}
	err := filepath.WalkDir(parent, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return err
		}
		target, err := filepath.EvalSymlinks(path)
		if err != nil || !strings.HasPrefix(target, parent+"/") {
			return fmt.Errorf("%s links out of the backup, to %s (%v)", path, target, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	restored := start(t, Options{Dir: dest, Fast: true})
	if got := queryString(t, restored.URL("postgres"), "SELECT v FROM kept"); got != "in the backup" {
		t.Fatalf("the restored table holds %q", got)
	}
}

// A backup folder holding a link out of itself is refused, not reported
// as a backup.
func TestABackupWithALinkOutOfItIsNotSelfContained(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := selfContained(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "inside"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("inside", filepath.Join(dir, "near")); err != nil {
		t.Fatal(err)
	}
	if err := selfContained(dir); err != nil {
		t.Fatalf("a link inside the folder: %v", err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "far")); err != nil {
		t.Fatal(err)
	}
	if err := selfContained(dir); err == nil {
		t.Fatal("a link out of the folder was accepted")
	}
}
