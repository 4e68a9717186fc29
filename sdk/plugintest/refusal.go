package plugintest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"github.com/svcplatform/svc/sdk"
)

// WantRefusal fails the test unless err is a refusal (*sdk.Error) with the
// given HTTP status, code and subcode of CONTRACT §3, and returns it so
// that the test can check the field it names.
func WantRefusal(t testing.TB, err error, status, code, subcode int) *sdk.Error {
	t.Helper()
	var e *sdk.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want a refusal %d/%d/%d", err, status, code, subcode)
	}
	if e.HTTPStatus != status || e.Code != code || e.Subcode != subcode {
		t.Fatalf("got %d/%d/%d %q, want %d/%d/%d", e.HTTPStatus, e.Code, e.Subcode, e.Message, status, code, subcode)
	}
	return e
}

// Count runs a query that answers one number (SELECT count(*) …) and
// returns it, failing the test on error: how tests check what a call
// stored, or that a refusal stored nothing.
func Count(t testing.TB, pool *pgxpool.Pool, query string, args ...any) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var n int
	if err := pool.QueryRow(ctx, query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// CallT is Call bounded by 30 seconds, for a test's calls.
func CallT[Res proto.Message](t testing.TB, tp *Plugin, procedure string, principal sdk.Principal, req proto.Message) (Res, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Call[Res](ctx, tp, procedure, principal, req)
}
