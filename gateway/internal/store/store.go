package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/internal/pgembed"
	"github.com/svcplatform/svc/internal/tracing"
	"github.com/svcplatform/svc/sdk/migrate"
	coresql "github.com/svcplatform/svc/sql/core"
)

// DatabaseName is the database the embedded cluster holds the platform in.
const DatabaseName = "svc"

// Store is an open, migrated database.
type Store struct {
	Pool *pgxpool.Pool
	// URL is the connection URL, handed to plugins. It may hold a password:
	// never log it.
	URL string

	// The embedded cluster, when there is one, restarted by supervise.
	mu      sync.Mutex
	cluster *pgembed.Cluster
	opts    pgembed.Options
	log     *slog.Logger
	closing bool
	gaveUp  chan error    // receives once when restarts keep failing
	stopped chan struct{} // closed when supervise has returned
}

// Open connects to databaseURL, or, when it is empty, starts (or recovers)
// the embedded cluster under dataDir/pg with password as its superuser's
// password (every connection to it then needs its role's password: see
// PluginURL). It then migrates the core schema.
func Open(ctx context.Context, databaseURL, dataDir, password string, log *slog.Logger) (*Store, error) {
	s := &Store{URL: databaseURL}
	if databaseURL == "" {
		start := time.Now()
		s.opts = pgembed.Options{Dir: filepath.Join(dataDir, "pg"), Logger: log, Password: password}
		c, err := pgembed.Start(ctx, s.opts)
		if err != nil {
			return nil, fmt.Errorf("start embedded PostgreSQL: %w", err)
		}
		s.cluster, s.log = c, log
		if err := createDatabase(ctx, c.URL("postgres"), DatabaseName); err != nil {
			_ = c.Stop(context.Background())
			return nil, err
		}
		s.URL = c.URL(DatabaseName)
		log.Info("embedded PostgreSQL ready", "dir", filepath.Join(dataDir, "pg"), "took", time.Since(start).Round(time.Millisecond).String())
	}
	cfg, err := pgxpool.ParseConfig(s.URL)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("SVC_DATABASE_URL is not a valid PostgreSQL URL: %w", errors.Unwrap(err))
	}
	cfg.MaxConns = 16
	if tracing.Enabled() {
		cfg.ConnConfig.Tracer = tracing.PgxTracer{}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	s.Pool = pool
	applied, err := migrate.Apply(ctx, pool, "core", coresql.Migrations())
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("migrate core schema: %w", err)
	}
	if len(applied) > 0 {
		log.Info("migrated core schema", "applied", applied)
	}
	if s.cluster != nil {
		s.gaveUp, s.stopped = make(chan error, 1), make(chan struct{})
		go s.supervise(s.cluster)
	}
	return s, nil
}

// Close closes the pool and stops the embedded cluster, if any.
func (s *Store) Close() {
	if s.Pool != nil {
		s.Pool.Close()
	}
	s.mu.Lock()
	s.closing = true
	c := s.cluster
	s.mu.Unlock()
	if c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		slog.Error("stop embedded PostgreSQL", "error", err)
	}
	if s.stopped != nil {
		<-s.stopped
	}
}

// Exited receives an error when the embedded cluster went away and could not
// be restarted (see supervise); nil when the database is external.
func (s *Store) Exited() <-chan error { return s.gaveUp }

// restartTries bounds the restarts in a row before supervise gives up and
// the gateway exits for its own supervisor (systemd, Kubernetes) to act.
const restartTries = 8

// supervise restarts the embedded cluster when it exits without being asked
// to (a crash, the OOM killer, a kill -9): the server runs crash recovery,
// the pools reconnect on their own, and callers meanwhile get transient
// 503s rather than a gateway that is gone. Restarts back off from 250 ms to
// 8 s; after restartTries failures in a row it gives up through Exited.
func (s *Store) supervise(c *pgembed.Cluster) {
	defer close(s.stopped)
	for {
		err := <-c.Wait()
		s.mu.Lock()
		closing := s.closing
		s.mu.Unlock()
		if closing {
			return
		}
		s.log.Error("embedded PostgreSQL exited; restarting it", "error", err)
		delay := 250 * time.Millisecond
		for try := 1; ; try++ {
			time.Sleep(delay)
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			next, startErr := pgembed.Start(ctx, s.opts)
			cancel()
			if startErr == nil {
				s.mu.Lock()
				s.cluster, c = next, next
				closing := s.closing
				s.mu.Unlock()
				if closing { // Close ran while we started: stop what we started
					_ = next.Stop(context.Background())
					return
				}
				s.log.Info("embedded PostgreSQL restarted", "after", err.Error(), "tries", try)
				break
			}
			s.log.Error("restart embedded PostgreSQL", "error", startErr, "try", try)
			if try == restartTries {
				s.gaveUp <- fmt.Errorf("embedded PostgreSQL exited (%v) and %d restarts failed, the last: %w", err, try, startErr)
				return
			}
			delay = min(2*delay, 8*time.Second)
		}
	}
}

// createDatabase creates name unless it exists. Two gateways racing here
// both succeed: the loser sees duplicate_database.
func createDatabase(ctx context.Context, adminURL, name string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect to embedded PostgreSQL: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("look up database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" ENCODING 'UTF8' TEMPLATE template0")
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}
