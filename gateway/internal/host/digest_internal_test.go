package host

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingCache is a digestCache on file whose hashing is counted.
func countingCache(file string, hashed *int) *digestCache {
	return &digestCache{file: file, hash: func(path string) (string, error) {
		*hashed++
		return fileSHA256(path)
	}}
}

func writeBinary(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return sha256Hex(content)
}

// A start does not hash an unchanged binary that an earlier start hashed:
// the digest comes from the data folder's file.
func TestAnUnchangedBinaryIsNotHashedAgainByTheNextStart(t *testing.T) {
	dir := t.TempDir()
	bin, file := filepath.Join(dir, "book"), filepath.Join(dir, "digests.json")
	want := writeBinary(t, bin, "plugin one")
	var first, second int
	if sum, err := countingCache(file, &first).sum(bin); err != nil || sum != want || first != 1 {
		t.Fatalf("first start: %q, %v after %d hashings; want %q after 1", sum, err, first, want)
	}
	if sum, err := countingCache(file, &second).sum(bin); err != nil || sum != want || second != 0 {
		t.Errorf("next start: %q, %v after %d hashings; want %q after none", sum, err, second, want)
	}
}

// A binary rewritten in place is hashed again, even with its size and
// modification time put back: its status change time moved. So is one
// replaced by another file.
func TestABinaryChangedInPlaceOrReplacedIsHashedAgain(t *testing.T) {
	dir := t.TempDir()
	bin, file := filepath.Join(dir, "book"), filepath.Join(dir, "digests.json")
	writeBinary(t, bin, "plugin one")
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	var hashed int
	if _, err := countingCache(file, &hashed).sum(bin); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // past the coarse clock that stamps status changes
	f, err := os.OpenFile(bin, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("PLUGIN"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(bin, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	want := sha256Hex("PLUGIN one")
	hashed = 0
	if sum, err := countingCache(file, &hashed).sum(bin); err != nil || sum != want || hashed != 1 {
		t.Errorf("rewritten in place with its times put back: %q, %v after %d hashings; want %q after 1", sum, err, hashed, want)
	}

	other := filepath.Join(dir, "book.new")
	want = writeBinary(t, other, "plugin two")
	if err := os.Rename(other, bin); err != nil {
		t.Fatal(err)
	}
	hashed = 0
	if sum, err := countingCache(file, &hashed).sum(bin); err != nil || sum != want || hashed != 1 {
		t.Errorf("replaced by mv: %q, %v after %d hashings; want %q after 1", sum, err, hashed, want)
	}
}

// A file that is not the cache's (damaged, or a digest that is not one) is
// no cache: the binary is hashed and the file written anew.
func TestADamagedDigestFileIsIgnored(t *testing.T) {
	dir := t.TempDir()
	bin, file := filepath.Join(dir, "book"), filepath.Join(dir, "digests.json")
	want := writeBinary(t, bin, "plugin one")
	var hashed int
	if _, err := countingCache(file, &hashed).sum(bin); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"{not json", string(b[:len(b)/2]), `{"` + bin + `":{"sha256":"zz"}}`} {
		if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		hashed = 0
		if sum, err := countingCache(file, &hashed).sum(bin); err != nil || sum != want || hashed != 1 {
			t.Errorf("file %.40q: %q, %v after %d hashings; want %q after 1", bad, sum, err, hashed, want)
		}
	}
}

// Plugins launched together hash at once; however their saves fall, the
// file then holds every digest, and the next start hashes none of them.
func TestDigestsHashedTogetherAreAllInTheFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "digests.json")
	want := map[string]string{}
	for i := range 10 {
		bin := filepath.Join(dir, fmt.Sprintf("plugin%d", i))
		want[bin] = writeBinary(t, bin, fmt.Sprintf("plugin %d", i))
	}
	var hashed int64
	c := &digestCache{file: file, hash: func(path string) (string, error) {
		atomic.AddInt64(&hashed, 1)
		return fileSHA256(path)
	}}
	var wg sync.WaitGroup
	for bin := range want {
		wg.Go(func() {
			if _, err := c.sum(bin); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var again int
	next := countingCache(file, &again)
	for bin, sum := range want {
		if got, err := next.sum(bin); err != nil || got != sum {
			t.Errorf("%s: %q, %v; want %q", bin, got, err, sum)
		}
	}
	if hashed != 10 || again != 0 {
		t.Errorf("hashed %d binaries together and %d at the next start; want 10 and none", hashed, again)
	}
}

func sha256Hex(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}
