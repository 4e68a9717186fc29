package secretbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// EnvMasterKey names the environment variable holding the master key.
const EnvMasterKey = "SVC_MASTER_KEY"

// KeyFileName is the key file's name inside the data folder.
const KeyFileName = "master.key"

// Source tells where Load found the master key.
type Source string

// Where a master key comes from.
const (
	// FromEnv: SVC_MASTER_KEY.
	FromEnv Source = "env"
	// FromFile: an existing <data-dir>/master.key.
	FromFile Source = "file"
	// Created: this start created <data-dir>/master.key.
	Created Source = "created"
)

// Load returns a Box under the master key from the environment variable
// SVC_MASTER_KEY (read through getenv), or else from <dataDir>/master.key,
// creating that file with a new random key, mode 0600, when it does not
// exist. A key file that group or others may read is refused.
//
// Two processes starting together on one data folder agree on one key: the
// file appears complete or not at all (written aside, then hard-linked into
// place), and the loser of the race reads the winner's.
func Load(getenv func(string) string, dataDir string) (*Box, Source, error) {
	if v := strings.TrimSpace(getenv(EnvMasterKey)); v != "" {
		key, err := ParseKey(v)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", EnvMasterKey, err)
		}
		b, err := New(key)
		return b, FromEnv, err
	}
	path := filepath.Join(dataDir, KeyFileName)
	key, err := readKeyFile(path)
	source := FromFile
	if errors.Is(err, fs.ErrNotExist) {
		source = Created
		if key, err = createKeyFile(path); errors.Is(err, fs.ErrExist) {
			source = FromFile
			key, err = readKeyFile(path)
		}
	}
	if err != nil {
		return nil, "", err
	}
	b, err := New(key)
	return b, source, err
}

func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("master key file %s: %w", path, err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("master key file %s is readable by group or others (mode %#o): chmod 600 it", path, perm)
	}
	raw, err := io.ReadAll(io.LimitReader(f, 256))
	if err != nil {
		return nil, fmt.Errorf("read master key file %s: %w", path, err)
	}
	key, err := ParseKey(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("master key file %s: %w", path, err)
	}
	return key, nil
}

// createKeyFile writes a new key to path, failing with fs.ErrExist when
// another process created it first.
func createKeyFile(path string) ([]byte, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data folder for the master key: %w", err)
	}
	key := NewKey()
	content := []byte(EncodeKey(key) + "\n")
	tmp, err := os.CreateTemp(dir, ".master.key.*") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("create master key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("write master key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("write master key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("write master key file: %w", err)
	}
	err = os.Link(tmp.Name(), path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return key, err
	}
	// No hard links on this file system: create in place, exclusively.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create master key file: %w", err)
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		return nil, fmt.Errorf("write master key file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("write master key file: %w", err)
	}
	return key, f.Close()
}
