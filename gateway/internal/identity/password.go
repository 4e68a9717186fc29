package identity

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters: OWASP's recommendation (19 MiB, 2 passes, 1 lane).
// They are stored in each hash, so raising them later keeps old hashes
// verifiable.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
	argonSaltLen   = 16
)

// maxPasswordBytes bounds the work one sign-in can cause.
const maxPasswordBytes = 1024

// slotWait is how long a sign-in or an account creation waits for a free
// hashing slot before it is told to come back.
const slotWait = 3 * time.Second

// passwordSlots bound the argon2id evaluations running at once, so that
// memory stays bounded (19 MiB each) whatever the flood. Every password
// check and every password hash goes through them: sign-ins, and every
// account creation (Test Users, the seed). Nothing else may be held while
// waiting for a slot (a transaction, a pooled connection).
type passwordSlots struct {
	slots chan struct{}
	wait  time.Duration
}

func newPasswordSlots() *passwordSlots {
	return &passwordSlots{slots: make(chan struct{}, max(2, 2*runtime.GOMAXPROCS(0))), wait: slotWait}
}

// run runs fn in a slot, or answers a *ThrottledError (scope "server") when
// none freed up in time.
func (p *passwordSlots) run(ctx context.Context, fn func()) error {
	wait, cancel := context.WithTimeout(ctx, p.wait)
	defer cancel()
	select {
	case p.slots <- struct{}{}:
	case <-wait.Done():
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &ThrottledError{Scope: "server", RetryAfter: time.Second}
	}
	defer func() { <-p.slots }()
	fn()
	return nil
}

// hashPassword hashes password in one of the Service's slots.
func (s *store) hashPassword(ctx context.Context, password string) (string, error) {
	var (
		hash string
		err  error
	)
	if serr := s.slots.run(ctx, func() { hash, err = HashPassword(password) }); serr != nil {
		return "", serr
	}
	return hash, err
}

// HashPassword returns the PHC string of password under argon2id, a
// memory-hard function: $argon2id$v=19$m=…,t=…,p=…$salt$hash.
func HashPassword(password string) (string, error) {
	if password == "" || len(password) > maxPasswordBytes {
		return "", fmt.Errorf("password must be 1 to %d bytes: %w", maxPasswordBytes, ErrInvalid)
	}
	salt := make([]byte, argonSaltLen)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// CheckPassword reports whether password matches the PHC string encoded.
func CheckPassword(encoded, password string) (bool, error) {
	if len(password) > maxPasswordBytes {
		return false, nil
	}
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errors.New("password hash: not an argon2id PHC string")
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, fmt.Errorf("password hash: unsupported version %q", parts[2])
	}
	var mem, passes uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &passes, &threads); err != nil {
		return false, fmt.Errorf("password hash: parameters %q: %w", parts[3], err)
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, fmt.Errorf("password hash: salt: %w", err)
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil {
		return false, fmt.Errorf("password hash: key: %w", err)
	}
	got := argon2.IDKey([]byte(password), salt, passes, mem, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// dummyHash is checked against when the username is unknown, so that a
// sign-in takes as long whether or not the user exists. It is a constant,
// hashed once with today's parameters (a test holds it to them): hashing it
// at start-up cost every run of the binary 20 MB of allocation and 150 ms.
const dummyHash = "$argon2id$v=19$m=19456,t=2,p=1$TDbZgXBnkeaR/+lsf6DD1g$LWIoTldfpIOfWhXgH7git/dS4UwbmbciWuwVJf7Qst0"
