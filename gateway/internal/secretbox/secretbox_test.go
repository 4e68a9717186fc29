package secretbox_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/secretbox"
)

func newBox(t *testing.T) *secretbox.Box {
	t.Helper()
	b, err := secretbox.New(secretbox.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSealedValueOpensOnlyWithTheSameKeyAndContext(t *testing.T) {
	t.Parallel()
	box, other := newBox(t), newBox(t)
	plain := []byte("svc_cs_secret")
	sealed := box.Seal(plain, "app:1")
	if bytes.Contains(sealed, plain) {
		t.Fatal("the sealed value contains the plaintext")
	}
	if got, err := box.Open(sealed, "app:1"); err != nil || string(got) != string(plain) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if bytes.Equal(sealed, box.Seal(plain, "app:1")) {
		t.Error("two seals of one value are equal: the nonce is not random")
	}
	altered := append([]byte(nil), sealed...)
	altered[len(altered)-1] ^= 1
	for _, tc := range []struct {
		name    string
		box     *secretbox.Box
		sealed  []byte
		context string
		want    string
	}{
		{"another context is refused", box, sealed, "app:2", "another context"},
		{"another key is refused naming both fingerprints", other, sealed, "app:1", box.Fingerprint()},
		{"an altered value is refused", box, altered, "app:1", "altered"},
		{"a truncated value is refused", box, sealed[:10], "app:1", "format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.box.Open(tc.sealed, tc.context)
			if !errors.Is(err, secretbox.ErrOpen) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v, want ErrOpen mentioning %q", err, tc.want)
			}
		})
	}
}

func TestMasterKeyComesFromTheEnvironmentFirst(t *testing.T) {
	t.Parallel()
	key := secretbox.NewKey()
	dir := t.TempDir()
	env := func(name string) string {
		if name == secretbox.EnvMasterKey {
			return secretbox.EncodeKey(key)
		}
		return ""
	}
	box, src, err := secretbox.Load(env, dir)
	if err != nil || src != secretbox.FromEnv {
		t.Fatalf("Load = %v, %v", src, err)
	}
	want, _ := secretbox.New(key)
	if box.Fingerprint() != want.Fingerprint() {
		t.Error("the box does not use the key from the environment")
	}
	if _, err := os.Stat(filepath.Join(dir, secretbox.KeyFileName)); !os.IsNotExist(err) {
		t.Error("a key file was created although the environment has the key")
	}
	bad := func(string) string { return "c2hvcnQ=" }
	if _, _, err := secretbox.Load(bad, dir); err == nil || !strings.Contains(err.Error(), secretbox.EnvMasterKey) {
		t.Errorf("a short key in the environment: err = %v", err)
	}
}

func TestKeyFileIsCreatedOnceWithMode0600(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "var")
	noEnv := func(string) string { return "" }
	var wg sync.WaitGroup
	fingerprints := make([]string, 8)
	sources := make([]secretbox.Source, 8)
	for i := range fingerprints {
		wg.Go(func() {
			box, src, err := secretbox.Load(noEnv, dir)
			if err != nil {
				t.Error(err)
				return
			}
			fingerprints[i], sources[i] = box.Fingerprint(), src
		})
	}
	wg.Wait()
	created := 0
	for i := range fingerprints {
		if fingerprints[i] != fingerprints[0] {
			t.Fatalf("concurrent first starts got different keys: %v", fingerprints)
		}
		if sources[i] == secretbox.Created {
			created++
		}
	}
	if created != 1 {
		t.Errorf("%d loads created the key file, want 1 (%v)", created, sources)
	}
	path := filepath.Join(dir, secretbox.KeyFileName)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %#o, want 0600", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the data folder holds %d entries, want only the key file", len(entries))
	}
	box, src, err := secretbox.Load(noEnv, dir)
	if err != nil || src != secretbox.FromFile || box.Fingerprint() != fingerprints[0] {
		t.Fatalf("reload = %v, %v, %v", src, err, box)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := secretbox.Load(noEnv, dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable key file: err = %v", err)
	}
}
