package identity

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"time"
)

// Prefixes of the opaque credentials. They help people and secret scanners
// tell credentials apart; nothing relies on them to authenticate, which is
// always a lookup of the hash.
const (
	PrefixTestKey      = "svc_test_"
	PrefixLiveKey      = "svc_live_"
	PrefixAccessToken  = "svcat_"
	PrefixSystemToken  = "svcst_"
	PrefixRefreshToken = "svcrt_"
	PrefixSessionToken = "svcss_"
	PrefixAdminToken   = "svcadm_"
	PrefixAuthCode     = "svcac_"
	PrefixClientSecret = "svccs_"
)

const (
	tokenEntropyBytes    = 32
	passwordEntropyBytes = 18
)

// Lifetimes of the credentials (CONTRACT §4; sessions are our choice).
const (
	AccessTokenTTL  = time.Hour
	RefreshTokenTTL = 60 * 24 * time.Hour
	CodeTTL         = 10 * time.Minute
	SessionTTL      = 30 * 24 * time.Hour
)

// NewToken returns a fresh credential: prefix followed by 256 random bits in
// base64url, and the hash under which it is stored.
func NewToken(prefix string) (plain string, hash []byte) {
	plain = prefix + randomString(tokenEntropyBytes)
	return plain, HashToken(plain)
}

// HashToken is the stored form of a credential. SHA-256 is enough because
// every credential carries 256 random bits: there is nothing to guess, so a
// slow hash would only slow down every request.
func HashToken(plain string) []byte {
	sum := TokenHash(plain)
	return sum[:]
}

// TokenHash is HashToken as an array, for a lookup that must not allocate
// (the credential cache on every request): a credential of up to 128
// bytes is hashed from a copy on the stack (Go copies a string of over 32
// bytes converted to []byte on the heap).
func TokenHash(plain string) [sha256.Size]byte {
	var buf [128]byte
	if len(plain) <= len(buf) {
		return sha256.Sum256(append(buf[:0], plain...))
	}
	return sha256.Sum256([]byte(plain))
}

// NewPassword returns a random password for seeded users.
func NewPassword() string { return randomString(passwordEntropyBytes) }

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}
