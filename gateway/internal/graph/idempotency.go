package graph

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/gateway/internal/coredb"
)

// IdempotencyStore runs a write at most once per (scope, key) within 24
// hours and returns the first answer to every repeat.
type IdempotencyStore interface {
	Do(ctx context.Context, scope, key string, body []byte, run func() (int, []byte, error)) (int, []byte, error)
}

// PGIdempotency keeps idempotency keys in core.idempotency_keys, so every
// gateway replica sees them.
type PGIdempotency struct {
	pool   *pgxpool.Pool
	q      *coredb.Queries
	sealer Sealer
}

// Sealer encrypts kept answers at rest (*secretbox.Box implements it).
type Sealer interface {
	Seal(plain []byte, context string) []byte
	Open(sealed []byte, context string) ([]byte, error)
}

// SealWith makes the store keep answers sealed with b: some answers carry
// a secret shown once (a new app's client secret, a rotated key, a Test
// User's password), which must not rest in the database in plain.
func (s *PGIdempotency) SealWith(b Sealer) *PGIdempotency {
	s.sealer = b
	return s
}

// sealContext binds a kept answer to its key.
func sealContext(scope, key string) string { return "idempotent answer\x00" + scope + "\x00" + key }

// NewPGIdempotency returns a store over pool.
func NewPGIdempotency(pool *pgxpool.Pool) *PGIdempotency {
	return &PGIdempotency{pool: pool, q: coredb.New(pool)}
}

// ClaimLease is how long a claimed key with no answer yet holds off a
// repeat of the same request. Longer than any Graph call runs, so a live
// claim is never taken over; a claim left by a gateway that died
// mid-request is, once it lapses. See docs/design/graph.md ("Idempotent
// writes") for what that can and cannot promise.
const ClaimLease = 2 * time.Minute

// Do claims the key, runs the write and keeps its answer. A repeat with the
// same body gets the kept answer; with another body it is refused; while
// the first is still running it is refused as a conflict. Failed writes
// keep nothing, so they can be retried with the same key.
func (s *PGIdempotency) Do(ctx context.Context, scope, key string, body []byte, run func() (int, []byte, error)) (int, []byte, error) {
	sum := sha256.Sum256(body)
	_, err := s.q.ClaimIdempotencyKey(ctx, coredb.ClaimIdempotencyKeyParams{Scope: scope, Key: key, RequestHash: sum[:],
		ClaimLeaseSeconds: ClaimLease.Seconds()})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return s.repeat(ctx, scope, key, sum[:])
	case err != nil:
		return 0, nil, apierr.Internal(fmt.Errorf("claim idempotency key: %w", err))
	}
	status, out, runErr := run()
	// The write is done (or failed): record it whatever the caller's context.
	bg := context.WithoutCancel(ctx)
	if runErr != nil || status != http.StatusOK {
		if err := s.q.ReleaseIdempotencyKey(bg, coredb.ReleaseIdempotencyKeyParams{Scope: scope, Key: key}); err != nil {
			return 0, nil, apierr.Internal(fmt.Errorf("release idempotency key: %w", err))
		}
		return status, out, runErr
	}
	st := int32(status)
	kept, sealed := out, s.sealer != nil
	if sealed {
		kept = s.sealer.Seal(out, sealContext(scope, key))
	}
	if err := s.q.StoreIdempotentResponse(bg, coredb.StoreIdempotentResponseParams{Scope: scope, Key: key, Status: &st,
		Response: kept, Sealed: sealed}); err != nil {
		return 0, nil, apierr.Internal(fmt.Errorf("store idempotent response: %w", err))
	}
	return status, out, nil
}

func (s *PGIdempotency) repeat(ctx context.Context, scope, key string, sum []byte) (int, []byte, error) {
	row, err := s.q.GetIdempotencyKey(ctx, coredb.GetIdempotencyKeyParams{Scope: scope, Key: key})
	if err != nil {
		return 0, nil, apierr.Internal(fmt.Errorf("read idempotency key: %w", err))
	}
	if !bytes.Equal(row.RequestHash, sum) {
		return 0, nil, apierr.Invalid("Idempotency-Key", "Invalid parameter: this Idempotency-Key was used with a different request body.")
	}
	if row.Status == nil {
		e := apierr.Invalid("Idempotency-Key", "A request with this Idempotency-Key is still in progress; retry shortly.")
		e.HTTPStatus, e.Transient = http.StatusConflict, true
		return 0, nil, e
	}
	if !row.Sealed {
		return int(*row.Status), row.Response, nil
	}
	if s.sealer == nil {
		return 0, nil, apierr.Internal(errors.New("idempotent answer is sealed and no sealer is configured"))
	}
	out, err := s.sealer.Open(row.Response, sealContext(scope, key))
	if err != nil {
		return 0, nil, apierr.Internal(fmt.Errorf("open idempotent answer: %w", err))
	}
	return int(*row.Status), out, nil
}
