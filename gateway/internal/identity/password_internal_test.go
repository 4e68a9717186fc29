package identity

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/crypto/argon2"
)

func TestTheUnknownUsersHashCostsWhatAUsersHashCosts(t *testing.T) {
	params := fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$", argon2.Version, argonMemoryKiB, argonTime, argonThreads)
	if !strings.HasPrefix(dummyHash, params) {
		t.Fatalf("dummyHash %q is not hashed with today's parameters %q: regenerate it with HashPassword", dummyHash, params)
	}
	parts := strings.Split(dummyHash, "$")
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	key, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) != argonSaltLen || len(key) != argonKeyLen {
		t.Fatalf("dummyHash's salt (%d bytes, %v) or key (%d bytes, %v): want %d and %d bytes", len(salt), err1, len(key), err2, argonSaltLen, argonKeyLen)
	}
	if ok, err := CheckPassword(dummyHash, "a password"); ok || err != nil {
		t.Fatalf("CheckPassword(dummyHash, …) = %v, %v; want a full check that fails", ok, err)
	}
}
