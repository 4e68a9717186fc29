package graph

import (
	"context"
	"net/http"
	"testing"

	"github.com/svcplatform/svc/gateway/internal/apierr"
	"github.com/svcplatform/svc/internal/pgtest"
	"github.com/svcplatform/svc/sdk/migrate"
	coresql "github.com/svcplatform/svc/sql/core"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func idempotencyStore(t *testing.T) *PGIdempotency {
	t.Helper()
	pool := pgtest.Pool(t, pgtest.NewDatabase(t))
	if _, err := migrate.Apply(context.Background(), pool, "core", coresql.Migrations()); err != nil {
		t.Fatal(err)
	}
	return NewPGIdempotency(pool)
}

// The rules of one Idempotency-Key: the first answer is replayed; a repeat
// while the first runs is a transient conflict; a claim whose gateway died
// before answering is taken over once its lease lapses, by the same request
// only.
func TestAnIdempotencyKeyReplaysConflictsAndOutlivesADeadClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := idempotencyStore(t)
	runs := 0
	write := func() (int, []byte, error) { runs++; return http.StatusOK, []byte(`{"id":"1"}`), nil }

	status, out, err := s.Do(ctx, "app:1", "k1", []byte(`{"a":1}`), write)
	if err != nil || status != 200 || string(out) != `{"id":"1"}` {
		t.Fatalf("first = %d %s %v", status, out, err)
	}
	if _, again, err := s.Do(ctx, "app:1", "k1", []byte(`{"a":1}`), write); err != nil || string(again) != `{"id":"1"}` || runs != 1 {
		t.Fatalf("a repeat ran the write again (%d runs) or answered %s, %v", runs, again, err)
	}

	t.Run("a repeat while the first still runs is a transient 409", func(t *testing.T) {
		_, _, err := s.Do(ctx, "app:1", "k2", []byte(`{}`), func() (int, []byte, error) {
			_, _, err := s.Do(ctx, "app:1", "k2", []byte(`{}`), write)
			return 0, nil, err
		})
		e, ok := apierr.As(err)
		if !ok || e.HTTPStatus != http.StatusConflict || !e.Transient {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("a claim left by a dead gateway is taken over after its lease, by the same request only", func(t *testing.T) {
		if _, err := s.pool.Exec(ctx, `INSERT INTO core.idempotency_keys (scope, key, request_hash, created_at)
			VALUES ('app:1', 'k3', sha256('{"a":3}'::bytea), now() - interval '3 minutes')`); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Do(ctx, "app:1", "k3", []byte(`{"other":true}`), write); err == nil {
			t.Fatal("a different body took over the key")
		}
		before := runs
		status, _, err := s.Do(ctx, "app:1", "k3", []byte(`{"a":3}`), write)
		if err != nil || status != 200 || runs != before+1 {
			t.Fatalf("takeover = %d, %v (%d runs)", status, err, runs-before)
		}
	})

	t.Run("a fresh claim of a dead gateway still holds", func(t *testing.T) {
		if _, err := s.pool.Exec(ctx, `INSERT INTO core.idempotency_keys (scope, key, request_hash, created_at)
			VALUES ('app:1', 'k4', sha256('{}'::bytea), now() - interval '10 seconds')`); err != nil {
			t.Fatal(err)
		}
		_, _, err := s.Do(ctx, "app:1", "k4", []byte(`{}`), write)
		if e, ok := apierr.As(err); !ok || e.HTTPStatus != http.StatusConflict {
			t.Fatalf("err = %v", err)
		}
	})
}
