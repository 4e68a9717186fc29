package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svcplatform/svc/internal/pgembed"
	"github.com/svcplatform/svc/plugins/sdk/migrate"
	coresql "github.com/svcplatform/svc/sql/core"
)

// DatabaseName is the database the embedded cluster holds the platform in.
const DatabaseName = "svc"

// Store is an open, migrated database.
type Store struct {
	Pool *pgxpool.Pool
	// URL is the connection URL, handed to plugins. It may hold a password:
	// never log it.
	URL     string
	cluster *pgembed.Cluster
}

// Open connects to databaseURL, or, when it is empty, starts (or recovers)
// the embedded cluster under dataDir/pg with password as its superuser's
// password (every connection to it then needs its role's password: see
// PluginURL). It then migrates the core schema.
func Open(ctx context.Context, databaseURL, dataDir, password string, log *slog.Logger) (*Store, error) {
	s := &Store{URL: databaseURL}
	if databaseURL == "" {
		start := time.Now()
		c, err := pgembed.Start(ctx, pgembed.Options{Dir: filepath.Join(dataDir, "pg"), Logger: log, Password: password})
		if err != nil {
			return nil, fmt.Errorf("start embedded PostgreSQL: %w", err)
		}
		s.cluster = c
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
	return s, nil
}

// Close closes the pool and stops the embedded cluster, if any.
func (s *Store) Close() {
	if s.Pool != nil {
		s.Pool.Close()
	}
	if s.cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.cluster.Stop(ctx); err != nil {
			slog.Error("stop embedded PostgreSQL", "error", err)
		}
	}
}

// Exited reports an unexpected exit of the embedded cluster; nil when the
// database is external.
func (s *Store) Exited() <-chan error {
	if s.cluster == nil {
		return nil
	}
	return s.cluster.Wait()
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
