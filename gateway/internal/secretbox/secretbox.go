package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
)

// KeySize is the size of a master key: AES-256.
const KeySize = 32

// version is the first byte of every sealed value, so the format can change
// later without guessing.
const version byte = 1

const (
	fingerprintSize = 4
	nonceSize       = 12
	headerSize      = 1 + fingerprintSize + nonceSize
)

// ErrOpen is returned (wrapped) when a sealed value cannot be opened: it was
// sealed under another key or for another context, or it was altered.
var ErrOpen = errors.New("secretbox: cannot open the sealed value")

// Box seals and opens values under one master key. It is safe for
// concurrent use.
type Box struct {
	aead        cipher.AEAD
	fingerprint [fingerprintSize]byte
	// derive is the HMAC key for Derive, itself derived from the master
	// key so the master key is never used for two purposes.
	derive [32]byte
}

// New returns a Box using key, which must be KeySize bytes.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secretbox: the master key must be %d bytes, not %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	b := &Box{aead: aead}
	// A fingerprint, not the key: enough to tell two keys apart in an error.
	sum := sha256.Sum256(append([]byte("svc secretbox key fingerprint\x00"), key...))
	copy(b.fingerprint[:], sum[:])
	b.derive = sha256.Sum256(append([]byte("svc secretbox derive\x00"), key...))
	return b, nil
}

// Derive returns a 32-byte secret for purpose, fixed for a given master
// key: for components that seal with their own scheme (the OAuth signing
// keys) without holding the master key itself.
func (b *Box) Derive(purpose string) []byte {
	m := hmac.New(sha256.New, b.derive[:])
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

// ParseKey decodes a master key written in standard base64 (padded or not),
// the form of SVC_MASTER_KEY and of the key file.
func ParseKey(s string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		key, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil {
		return nil, errors.New("secretbox: the master key is not base64")
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("secretbox: the master key must decode to %d bytes, not %d", KeySize, len(key))
	}
	return key, nil
}

// NewKey returns a fresh random master key.
func NewKey() []byte {
	key := make([]byte, KeySize)
	_, _ = rand.Read(key) // crypto/rand never fails on supported platforms
	return key
}

// EncodeKey writes a key in the form ParseKey reads.
func EncodeKey(key []byte) string { return base64.StdEncoding.EncodeToString(key) }

// Fingerprint identifies the key (8 hex digits) without revealing it, so
// operators can check that replicas share one key.
func (b *Box) Fingerprint() string { return hex.EncodeToString(b.fingerprint[:]) }

// Seal encrypts plain for context: the result opens only with the same key
// and the same context. Layout: version ‖ key fingerprint ‖ nonce ‖
// ciphertext and tag.
func (b *Box) Seal(plain []byte, context string) []byte {
	out := make([]byte, headerSize, headerSize+len(plain)+b.aead.Overhead())
	out[0] = version
	copy(out[1:], b.fingerprint[:])
	nonce := out[1+fingerprintSize : headerSize]
	_, _ = rand.Read(nonce)
	return b.aead.Seal(out, nonce, plain, b.additional(context))
}

// Open decrypts a value sealed by Seal for context.
func (b *Box) Open(sealed []byte, context string) ([]byte, error) {
	if len(sealed) < headerSize+b.aead.Overhead() || sealed[0] != version {
		return nil, fmt.Errorf("%w: not a sealed value of this format", ErrOpen)
	}
	if fp := sealed[1 : 1+fingerprintSize]; string(fp) != string(b.fingerprint[:]) {
		return nil, fmt.Errorf("%w: it was sealed under master key %x, this gateway has %s (replicas must share SVC_MASTER_KEY)",
			ErrOpen, fp, b.Fingerprint())
	}
	plain, err := b.aead.Open(nil, sealed[1+fingerprintSize:headerSize], sealed[headerSize:], b.additional(context))
	if err != nil {
		return nil, fmt.Errorf("%w: it was altered or sealed for another context", ErrOpen)
	}
	return plain, nil
}

// additional binds the version, the key fingerprint and the context.
func (b *Box) additional(context string) []byte {
	ad := make([]byte, 0, 1+fingerprintSize+len(context))
	ad = append(ad, version)
	ad = append(ad, b.fingerprint[:]...)
	return append(ad, context...)
}
