package readpool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/internal/pgtest"
	"github.com/svcplatform/svc/internal/plugin/pluginrt"
	"github.com/svcplatform/svc/sdk"
)

// inRecovery reads which server a pool reached: true on the standby.
func inRecovery(ctx context.Context, db *pgxpool.Pool) (bool, error) {
	var standby bool
	err := db.QueryRow(ctx, `SELECT pg_is_in_recovery()`).Scan(&standby)
	return standby, err
}

func TestReadsGoToTheReplicaOnlyWhenAllowedAndFallBackToThePrimaryWhenItStops(t *testing.T) {
	t.Parallel()
	pair := pgtest.NewReplicated(t, "app")
	ctx := context.Background()
	primary, err := pgxpool.New(ctx, pair.Primary.URL("app"))
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	db, err := open(primary, pair.Standby.URL("app"), 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	allowed := pluginrt.WithReadReplica(ctx)

	read := func(ctx context.Context) bool {
		t.Helper()
		var standby bool
		if err := db.Read(ctx, func(db *pgxpool.Pool) (err error) {
			standby, err = inRecovery(ctx, db)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return standby
	}
	if read(ctx) {
		t.Fatal("a call the gateway did not allow read the replica")
	}
	if !read(allowed) {
		t.Fatal("an allowed read did not go to the replica")
	}
	// A read's own answer is not the replica's fault: it is not retried.
	calls := 0
	err = db.Read(allowed, func(db *pgxpool.Pool) error {
		calls++
		var n int
		return db.QueryRow(allowed, `SELECT 1 WHERE false`).Scan(&n)
	})
	if !errors.Is(err, pgx.ErrNoRows) || calls != 1 || db.Faults() != 0 {
		t.Fatalf("no rows: err = %v after %d calls, %d faults", err, calls, db.Faults())
	}
	// The replica's connection is idle in the pool when the server stops:
	// the next read finds it dead, and the primary serves the read.
	if err := pair.Standby.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if read(allowed) {
		t.Fatal("a read reached a stopped standby")
	}
	if db.Faults() != 1 {
		t.Fatalf("faults = %d, want 1", db.Faults())
	}
	if db.Reader(allowed) != primary {
		t.Fatal("the replica is tried again at once after a fault")
	}
}

func TestWithoutAReplicaEveryReadGoesToThePrimary(t *testing.T) {
	t.Parallel()
	primary := &pgxpool.Pool{}
	db, err := open(primary, "", 4, nil)
	if err != nil || db.HasReplica() || db.Reader(pluginrt.WithReadReplica(context.Background())) != primary {
		t.Fatalf("db = %+v, %v", db, err)
	}
	if PrimaryOnly(primary).Reader(pluginrt.WithReadReplica(context.Background())) != primary {
		t.Fatal("PrimaryOnly reads elsewhere")
	}
}

func TestFaultTellsTheReplicasFailureFromTheReadsAnswer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"a server shutting down (57P01) is a fault", &pgconn.PgError{Code: "57P01"}, true},
		{"a server refusing connections while starting or stopping (57P03) is a fault", &pgconn.PgError{Code: "57P03"}, true},
		{"a query cancelled by a recovery conflict (40001) is a fault", &pgconn.PgError{Code: "40001"}, true},
		{"a connection exception (08006) is a fault", &pgconn.PgError{Code: "08006"}, true},
		{"too many connections (53300) is a fault", &pgconn.PgError{Code: "53300"}, true},
		{"a lost connection (EOF) is a fault", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"a refused dial is a fault", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{"no rows is the read's answer", pgx.ErrNoRows, false},
		{"a unique violation is the read's answer", &pgconn.PgError{Code: "23505"}, false},
		{"a syntax error is the read's answer", &pgconn.PgError{Code: "42601"}, false},
		{"a handler's refusal is the read's answer", sdk.NotFound("Post 1"), false},
	}
	for _, c := range cases {
		if got := Fault(c.err); got != c.want {
			t.Errorf("%s: Fault = %v", c.name, got)
		}
	}
}
