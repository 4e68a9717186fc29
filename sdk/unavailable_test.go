package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// A database that is away for now makes a transient 503; anything else the
// database says about the call stays an internal error.
func TestAnUnreachableDatabaseIsATransient503AndOtherFailuresStay500(t *testing.T) {
	for _, c := range []struct {
		name        string
		err         error
		unavailable bool
	}{
		{"connection refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{"connection reset mid-call", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"server went away", fmt.Errorf("query: %w", io.ErrUnexpectedEOF), true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"crash shutdown", &pgconn.PgError{Code: "57P02"}, true},
		{"starting up", fmt.Errorf("claim: %w", &pgconn.PgError{Code: "57P03"}), true},
		{"connection failure class", &pgconn.PgError{Code: "08006"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"syntax error", &pgconn.PgError{Code: "42601"}, false},
		{"plain error", errors.New("boom"), false},
		{"nil", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := databaseUnavailable(c.err); got != c.unavailable {
				t.Fatalf("databaseUnavailable = %v, want %v", got, c.unavailable)
			}
			if c.err == nil {
				return
			}
			e := Internal(c.err)
			want := http.StatusInternalServerError
			if c.unavailable {
				want = http.StatusServiceUnavailable
			}
			if e.HTTPStatus != want || e.Transient != c.unavailable || !errors.Is(e, c.err) {
				t.Fatalf("Internal = %d transient %v (cause kept %v), want %d", e.HTTPStatus, e.Transient, errors.Is(e, c.err), want)
			}
		})
	}
	if e, fault := asError(fmt.Errorf("x: %w", context.Canceled)); e.HTTPStatus != http.StatusGatewayTimeout || fault {
		t.Fatalf("a cancelled call = %d (fault %v)", e.HTTPStatus, fault)
	}
}
