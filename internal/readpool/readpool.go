package readpool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/internal/plugin/pluginrt"
	"github.com/svcplatform/svc/internal/tracing"
)

// EnvURL names the variable in which the gateway hands a plugin the read
// replica's URL, with the plugin's own role; unset when there is none.
const EnvURL = "SVC_DATABASE_REPLICA_URL"

// restAfterFault is how long the replica is left alone after it failed a
// read: the gateway's probe notices a stopped replica within its interval,
// and this keeps the calls in between from each paying for a failed try.
const restAfterFault = 2 * time.Second

// DB is a plugin's primary pool and, when the gateway configured one, its
// read replica's pool.
type DB struct {
	primary *pgxpool.Pool
	replica *pgxpool.Pool
	// restUntil is when (Unix nanoseconds) the replica may be tried again
	// after a fault.
	restUntil atomic.Int64
	faults    atomic.Int64
	log       *slog.Logger
}

// Open wraps primary (the pool of migrate.Open) and opens the replica pool
// of SVC_DATABASE_REPLICA_URL with at most maxConns connections. Without
// that variable every read goes to the primary. The replica pool connects
// lazily: a replica that is down at start does not stop the plugin. log
// (the plugin's, sdk.Plugin.Logger) hears of reads the replica failed.
func Open(primary *pgxpool.Pool, maxConns int32, log *slog.Logger) (*DB, error) {
	return open(primary, os.Getenv(EnvURL), maxConns, log)
}

func open(primary *pgxpool.Pool, url string, maxConns int32, log *slog.Logger) (*DB, error) {
	if log == nil {
		log = slog.Default()
	}
	d := &DB{primary: primary, log: log}
	if url == "" {
		return d, nil
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", EnvURL, errors.Unwrap(err))
	}
	cfg.MaxConns = maxConns
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// A replica that does not answer must not hold a read for long:
		// the primary serves it instead.
		cfg.ConnConfig.ConnectTimeout = 2 * time.Second
	}
	// Shown in the replica's pg_stat_activity, so an operator sees who reads there.
	cfg.ConnConfig.RuntimeParams["application_name"] = "svc replica reads"
	if tracing.Enabled() {
		cfg.ConnConfig.Tracer = tracing.PgxTracer{}
	}
	d.replica, err = pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("replica pool: %w", err)
	}
	return d, nil
}

// Primary is the pool for writes, and for reads that must see the latest
// commit.
func (d *DB) Primary() *pgxpool.Pool { return d.primary }

// HasReplica reports whether a replica is configured.
func (d *DB) HasReplica() bool { return d.replica != nil }

// Faults counts reads the replica failed and the primary served again.
func (d *DB) Faults() int64 { return d.faults.Load() }

// Reader is the pool a read of the call in ctx should use: the replica when
// the gateway allows it (pluginrt.MayReadReplica) and it has not just failed,
// else the primary. Prefer Read, which also retries on the primary when the
// replica fails during the read.
func (d *DB) Reader(ctx context.Context) *pgxpool.Pool {
	if d.replica == nil || !pluginrt.MayReadReplica(ctx) || time.Now().UnixNano() < d.restUntil.Load() {
		return d.primary
	}
	return d.replica
}

// Read runs fn, a read without side effects, with the pool Reader chooses.
// When the replica fails it (connection refused or lost, the server
// shutting down, a query cancelled by a recovery conflict), fn runs again
// on the primary and the replica rests for a moment; fn's own verdicts (no
// rows, a refusal) are returned as they are.
func (d *DB) Read(ctx context.Context, fn func(db *pgxpool.Pool) error) error {
	db := d.Reader(ctx)
	err := fn(db)
	if err == nil || db == d.primary || ctx.Err() != nil || !Fault(err) {
		return err
	}
	d.faults.Add(1)
	d.restUntil.Store(time.Now().Add(restAfterFault).UnixNano())
	d.log.Warn("the read replica failed a read; the primary serves it, and reads stay there for a moment",
		"error", err, "rest", restAfterFault.String())
	return fn(d.primary)
}

// Close closes the replica pool (the primary belongs to the caller).
func (d *DB) Close() {
	if d.replica != nil {
		d.replica.Close()
	}
}

// Fault reports whether err is the replica's failure rather than the
// read's answer: a connection that could not be made or was lost, a server
// shutting down or refusing connections, a query cancelled by a conflict
// with recovery. Retrying such a read elsewhere is safe: it changed nothing.
func Fault(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code[:2] {
		case "08", // connection exception
			"57", // operator intervention: admin_shutdown, cannot_connect_now, query_canceled
			"53": // insufficient resources: too_many_connections
			return true
		}
		return pgErr.Code == "40001" // serialization_failure: a recovery conflict on a standby
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || pgconn.SafeToRetry(err) ||
		pgconn.Timeout(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed)
}

// PrimaryOnly is a DB without a replica: every read goes to primary. For
// tests, and plugins run without a gateway.
func PrimaryOnly(primary *pgxpool.Pool) *DB { return &DB{primary: primary, log: slog.Default()} }
